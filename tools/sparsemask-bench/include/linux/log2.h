/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in for <linux/log2.h>. */
#ifndef _SHIM_LINUX_LOG2_H
#define _SHIM_LINUX_LOG2_H

/* floor(log2(n)) for n > 0; folds to a constant for constant n. */
#define ilog2(n)	((int)(8 * sizeof(unsigned long long) - 1 - \
			       __builtin_clzll((unsigned long long)(n))))

#endif
