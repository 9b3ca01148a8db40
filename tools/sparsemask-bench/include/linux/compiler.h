/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in for <linux/compiler.h>: only what sparsemask.h needs. */
#ifndef _SHIM_LINUX_COMPILER_H
#define _SHIM_LINUX_COMPILER_H

#include <stdbool.h>
#include <stddef.h>

/* glibc's <sys/cdefs.h> may already define it (as inline + attribute). */
#ifndef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#endif

/* One untorn load the compiler may not merge, repeat or hoist. */
#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#endif
