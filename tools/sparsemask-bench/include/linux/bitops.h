/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in for <linux/bitops.h>.  set_bit()/clear_bit() are
 * atomic read-modify-writes without ordering guarantees, like the kernel's
 * (on x86 both compile to a LOCK-prefixed instruction, as in the kernel).
 */
#ifndef _SHIM_LINUX_BITOPS_H
#define _SHIM_LINUX_BITOPS_H

#include <linux/compiler.h>

#define BITS_PER_LONG	(8 * (int)sizeof(long))
#define BIT_WORD(nr)	((unsigned long)(nr) / BITS_PER_LONG)
#define BIT_MASK(nr)	(1UL << ((unsigned long)(nr) % BITS_PER_LONG))

static inline void set_bit(long nr, volatile unsigned long *addr)
{
	__atomic_fetch_or(addr + BIT_WORD(nr), BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline void clear_bit(long nr, volatile unsigned long *addr)
{
	__atomic_fetch_and(addr + BIT_WORD(nr), ~BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline bool test_bit(long nr, const volatile unsigned long *addr)
{
	return (__atomic_load_n(addr + BIT_WORD(nr), __ATOMIC_RELAXED) & BIT_MASK(nr)) != 0;
}

/* Index of the lowest set bit; undefined for 0, as in the kernel. */
static __always_inline unsigned long __ffs(unsigned long word)
{
	return __builtin_ctzl(word);
}

#endif
