/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in for <linux/errno.h>.  glibc's own <errno.h> includes
 * <linux/errno.h> too, so this must stay the real UAPI header (EINVAL, ...)
 * with nothing added: pass through to it.
 */
#include_next <linux/errno.h>
