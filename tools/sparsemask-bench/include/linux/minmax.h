/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in for <linux/minmax.h>: only min(), for same-typed ints. */
#ifndef _SHIM_LINUX_MINMAX_H
#define _SHIM_LINUX_MINMAX_H

#define min(x, y) ({				\
	__typeof__(x) _min_x = (x);		\
	__typeof__(y) _min_y = (y);		\
	(void)(&_min_x == &_min_y);		\
	_min_x < _min_y ? _min_x : _min_y; })

#endif
