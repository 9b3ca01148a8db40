/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in for <linux/slab.h>: kmalloc_node() is a 64-byte
 * aligned allocation (the kernel's kmalloc caches align power-of-two sizes
 * at least that well, and sparsemask chunks must start a cache line).
 */
#ifndef _SHIM_LINUX_SLAB_H
#define _SHIM_LINUX_SLAB_H

#include <stdlib.h>

typedef unsigned int gfp_t;

#define GFP_KERNEL	0u
#define NUMA_NO_NODE	(-1)

static inline void *kmalloc_node(size_t size, gfp_t flags, int node)
{
	(void)flags;
	(void)node;
	/* aligned_alloc() wants a multiple of the alignment */
	return aligned_alloc(64, (size + 63) & ~(size_t)63);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

#endif
