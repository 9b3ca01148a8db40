/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in for <linux/overflow.h>: struct_size_t() without the
 * kernel's saturation on overflow (the benchmark uses small sizes).
 */
#ifndef _SHIM_LINUX_OVERFLOW_H
#define _SHIM_LINUX_OVERFLOW_H

#include <stddef.h>

#define struct_size_t(type, member, count) \
	(sizeof(type) + (size_t)(count) * sizeof(((type *)0)->member[0]))

#endif
