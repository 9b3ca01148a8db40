/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in for <linux/cache.h>: assume 64-byte cache lines. */
#ifndef _SHIM_LINUX_CACHE_H
#define _SHIM_LINUX_CACHE_H

#define SMP_CACHE_BYTES			64
#define ____cacheline_aligned_in_smp	__attribute__((__aligned__(SMP_CACHE_BYTES)))

#endif
