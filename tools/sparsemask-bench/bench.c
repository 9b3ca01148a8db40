// SPDX-License-Identifier: GPL-2.0
/*
 * sparsemask-bench - the kernel's sparsemask against a dense bitmap, in user
 * space.
 *
 * Usage: sparsemask-bench [-s SETTERS] [-d SECONDS] [-r REPS] [-n NELEMS]
 *                         [-k DENSITY] [-e STRIDE]
 *
 * The pattern of the per-LLC overload mask: SETTERS threads ("CPUs") each
 * set and clear their own element as fast as they can (element i * STRIDE;
 * the default stride 2^DENSITY puts every setter in its own sparsemask
 * chunk, i.e. its own cache line, while in the dense bitmap they all share
 * one word), and one scanner thread ("an idle CPU looking for a victim")
 * walks the whole set over and over, from a rotating origin, with
 * sparsemask_for_each() or the equivalent walk over the dense bitmap.  Each
 * (sparse, dense) pair runs REPS times, alternating which goes first.
 *
 * Setters are pinned to distinct allowed CPUs, the scanner to the next one
 * if there is a CPU left, otherwise it floats.
 *
 * Before measuring, the sparsemask iterator is checked against the dense
 * reference walk for many random sets, sizes, densities and origins.
 *
 * Output: a table, then one line "RESULT {json}".
 * Exit: 0 ok, 2 the self-check failed, 1 usage/system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sparsemask.h"		/* the kernel's, from $(KSRC)/kernel/sched */

#define MAX_SETTERS	64
#define BATCH		64	/* set+clear pairs between looks at the stop flag */

/* ---- dense bitmap with the same operations and walk ---- */

struct dense {
	int nelems;
	unsigned long *bits;
};

static int dense_find(const struct dense *d, int start, int end)
{
	int w = start / BITS_PER_LONG, last = (end - 1) / BITS_PER_LONG;
	unsigned long word;
	int elem;

	if (start >= end)
		return end;
	word = READ_ONCE(d->bits[w]) & (~0UL << (start % BITS_PER_LONG));
	while (!word) {
		if (++w > last)
			return end;
		word = READ_ONCE(d->bits[w]);
	}
	elem = w * BITS_PER_LONG + __ffs(word);
	return elem < end ? elem : end;
}

static int dense_first_wrap(const struct dense *d, int origin)
{
	int elem = dense_find(d, origin, d->nelems);

	if (elem < d->nelems)
		return elem;
	elem = dense_find(d, 0, origin);
	return elem < origin ? elem : d->nelems;
}

static int dense_next_wrap(const struct dense *d, int origin, int prev)
{
	int elem;

	if (prev >= origin) {
		elem = dense_find(d, prev + 1, d->nelems);
		if (elem < d->nelems)
			return elem;
		prev = -1;
	}
	elem = dense_find(d, prev + 1, origin);
	return elem < origin ? elem : d->nelems;
}

#define dense_for_each(d, origin, elem)					\
	for ((elem) = dense_first_wrap((d), (origin));			\
	     (elem) < (d)->nelems;					\
	     (elem) = dense_next_wrap((d), (origin), (elem)))

/* ---- benchmark ---- */

static int nsetters = 2, reps = 3, nelems = 64, density = SPARSEMASK_DENSITY_DEFAULT;
static int stride = -1;
static double seconds = 1;
static int cpus[CPU_SETSIZE], ncpus;

static struct sparsemask *smask;
static struct dense dmask;
static int use_sparse;
static pthread_barrier_t barrier;
static int stop __attribute__((aligned(64)));

struct counter {
	unsigned long n;
	unsigned long sink;	/* keeps the scan from being optimized away */
} __attribute__((aligned(64)));

static struct counter counters[MAX_SETTERS + 1];	/* setters, then scanner */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int slot)
{
	cpu_set_t set;

	if (slot >= ncpus)
		return;		/* no CPU left for it: let it float */
	CPU_ZERO(&set);
	CPU_SET(cpus[slot], &set);
	sched_setaffinity(0, sizeof(set), &set);	/* best effort */
}

static void *setter_fn(void *arg)
{
	long id = (long)arg;
	int elem = id * stride, i;
	unsigned long n = 0;

	pin(id);
	pthread_barrier_wait(&barrier);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if (use_sparse) {
			for (i = 0; i < BATCH; i++) {
				sparsemask_set_elem(smask, elem);
				sparsemask_clear_elem(smask, elem);
			}
		} else {
			for (i = 0; i < BATCH; i++) {
				set_bit(elem, dmask.bits);
				clear_bit(elem, dmask.bits);
			}
		}
		n += 2 * BATCH;
	}
	counters[id].n = n;
	return NULL;
}

static void *scanner_fn(void *arg)
{
	unsigned long n = 0, sink = 0;
	int elem, origin = 0;

	(void)arg;
	pin(nsetters);
	pthread_barrier_wait(&barrier);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if (use_sparse) {
			sparsemask_for_each(smask, origin, elem)
				sink += elem + 1;
		} else {
			dense_for_each(&dmask, origin, elem)
				sink += elem + 1;
		}
		if (++origin == nelems)
			origin = 0;
		n++;
	}
	counters[nsetters].n = n;
	counters[nsetters].sink = sink;
	return NULL;
}

/* One timed run; returns setter ops/s and scans/s. */
static int run(int sparse, double *ops, double *scans)
{
	pthread_t tids[MAX_SETTERS + 1];
	struct timespec ts;
	double start, elapsed;
	unsigned long total = 0;
	long i;

	use_sparse = sparse;
	stop = 0;
	memset(counters, 0, sizeof(counters));
	if (pthread_barrier_init(&barrier, NULL, nsetters + 2))
		return -1;
	for (i = 0; i <= nsetters; i++)
		if (pthread_create(&tids[i], NULL, i < nsetters ? setter_fn : scanner_fn,
				   (void *)i))
			return -1;
	pthread_barrier_wait(&barrier);
	start = now_s();
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	elapsed = now_s() - start;
	for (i = 0; i <= nsetters; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&barrier);
	for (i = 0; i < nsetters; i++)
		total += counters[i].n;
	*ops = total / elapsed;
	*scans = counters[nsetters].n / elapsed;
	return 0;
}

/* The sparsemask walk must visit what the dense reference walk visits. */
static int self_check(void)
{
	static const int sizes[] = { 0, 1, 7, 8, 9, 63, 64, 65, 100, 128, 200 };
	unsigned long bits[4];
	struct dense d = { 0, bits };
	struct sparsemask *m;
	unsigned int seed = 1;
	int si, k, trial, origin, e1, e2, i, errors = 0;

	for (si = 0; si < (int)(sizeof(sizes) / sizeof(sizes[0])); si++) {
		for (k = 0; k <= SPARSEMASK_DENSITY_MAX; k++) {
			m = sparsemask_alloc_node(sizes[si], k, GFP_KERNEL, NUMA_NO_NODE);
			if (!m)
				return -1;
			d.nelems = sizes[si];
			for (trial = 0; trial < 20; trial++) {
				memset(bits, 0, sizeof(bits));
				for (i = 0; i < sizes[si]; i++) {
					if ((unsigned int)rand_r(&seed) % 4 < (unsigned int)trial % 5) {
						sparsemask_set_elem(m, i);
						set_bit(i, bits);
					} else {
						sparsemask_clear_elem(m, i);
					}
					if (sparsemask_test_elem(m, i) != test_bit(i, bits))
						errors++;
				}
				if (sparsemask_empty(m) != (dense_find(&d, 0, d.nelems) >= d.nelems))
					errors++;
				/* origins 0 .. nelems (nelems acts as 0) */
				for (origin = 0; origin <= sizes[si]; origin++) {
					e2 = dense_first_wrap(&d, origin < d.nelems ? origin : 0);
					sparsemask_for_each(m, origin, e1) {
						if (e1 != e2)
							errors++;
						e2 = dense_next_wrap(&d, origin < d.nelems ?
								     origin : 0, e2);
					}
					if (e2 != d.nelems)
						errors++;
				}
			}
			sparsemask_free(m);
		}
	}
	if (sparsemask_alloc_node(-1, 0, GFP_KERNEL, 0) ||
	    sparsemask_alloc_node(8, SPARSEMASK_DENSITY_MAX + 1, GFP_KERNEL, 0))
		errors++;	/* bad arguments must be rejected */
	return errors;
}

struct stats {
	double mean, min, max;
};

static struct stats summarize(const double *v, int n)
{
	struct stats s = { 0, v[0], v[0] };
	int i;

	for (i = 0; i < n; i++) {
		s.mean += v[i] / n;
		if (v[i] < s.min)
			s.min = v[i];
		if (v[i] > s.max)
			s.max = v[i];
	}
	return s;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-s SETTERS] [-d SECONDS] [-r REPS] [-n NELEMS] [-k DENSITY]"
		" [-e STRIDE]\n"
		"  -s SETTERS  setter threads, 1..%d (default 2), plus one scanner\n"
		"  -d SECONDS  length of each run, may be fractional (default 1)\n"
		"  -r REPS     repetitions of the (sparse, dense) pair (default 3)\n"
		"  -n NELEMS   elements in the set, like CPUs in an LLC (default 64)\n"
		"  -k DENSITY  sparsemask density, log2 elements per chunk, 0..%d"
		" (default %d)\n"
		"  -e STRIDE   setter i owns element i * STRIDE (default 2^DENSITY)\n",
		prog, MAX_SETTERS, (int)SPARSEMASK_DENSITY_MAX,
		(int)SPARSEMASK_DENSITY_DEFAULT);
	exit(1);
}

static double num(const char *s, double min, double max, const char *prog)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		usage(prog);
	return v;
}

static void print_stats(const char *name, const struct stats *s)
{
	printf("\"%s\": {\"mean\": %.0f, \"min\": %.0f, \"max\": %.0f}", name,
	       s->mean, s->min, s->max);
}

int main(int argc, char **argv)
{
	double *ops[2], *scans[2];	/* [0] sparse, [1] dense */
	struct stats so[2], ss[2];
	cpu_set_t set;
	int opt, i, r, k, bad;

	while ((opt = getopt(argc, argv, "s:d:r:n:k:e:")) != -1) {
		switch (opt) {
		case 's': nsetters = num(optarg, 1, MAX_SETTERS, argv[0]); break;
		case 'd': seconds = num(optarg, 0.01, 3600, argv[0]); break;
		case 'r': reps = num(optarg, 1, 1000, argv[0]); break;
		case 'n': nelems = num(optarg, 1, 1 << 20, argv[0]); break;
		case 'k': density = num(optarg, 0, SPARSEMASK_DENSITY_MAX, argv[0]); break;
		case 'e': stride = num(optarg, 0, 1 << 20, argv[0]); break;
		default: usage(argv[0]);
		}
	}
	if (stride < 0)
		stride = 1 << density;
	if (optind != argc || (long)(nsetters - 1) * stride >= nelems) {
		if (optind == argc)
			fprintf(stderr, "%s: setter elements up to %d do not fit in %d"
				" elements\n", argv[0], (nsetters - 1) * stride, nelems);
		usage(argv[0]);
	}

	bad = self_check();
	if (bad) {
		fprintf(stderr, "self-check: %d mismatches between sparsemask and the"
			" dense reference\n", bad);
		return bad < 0 ? 1 : 2;
	}

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				cpus[ncpus++] = i;
	smask = sparsemask_alloc_node(nelems, density, GFP_KERNEL, NUMA_NO_NODE);
	dmask.nelems = nelems;
	dmask.bits = aligned_alloc(64, ((nelems + 511) / 512) * 64);
	for (k = 0; k < 2; k++) {
		ops[k] = calloc(reps, sizeof(double));
		scans[k] = calloc(reps, sizeof(double));
		if (!ops[k] || !scans[k])
			smask = NULL;
	}
	if (!smask || !dmask.bits) {
		perror("allocation");
		return 1;
	}
	memset(dmask.bits, 0, ((nelems + 511) / 512) * 64);

	printf("self-check passed; %d setter(s) + 1 scanner on %d allowed CPU(s),"
	       " %d elements, density %d (%d per chunk), stride %d, %g s x %d reps\n",
	       nsetters, ncpus, nelems, density, 1 << density, stride, seconds, reps);
	printf("%-4s %-7s %16s %14s\n", "rep", "mask", "setter ops/s", "scans/s");
	for (r = 0; r < reps; r++) {
		for (i = 0; i < 2; i++) {
			k = (r + i) % 2;	/* alternate which mask runs first */
			if (run(k == 0, &ops[k][r], &scans[k][r])) {
				fprintf(stderr, "thread setup failed\n");
				return 1;
			}
			printf("%-4d %-7s %16.0f %14.0f\n", r, k ? "dense" : "sparse",
			       ops[k][r], scans[k][r]);
		}
	}
	for (k = 0; k < 2; k++) {
		so[k] = summarize(ops[k], reps);
		ss[k] = summarize(scans[k], reps);
	}
	printf("\n%-7s %16s %24s %14s %24s\n", "mask", "setter ops/s", "min-max",
	       "scans/s", "min-max");
	for (k = 0; k < 2; k++) {
		char a[64], b[64];

		snprintf(a, sizeof(a), "%.0f-%.0f", so[k].min, so[k].max);
		snprintf(b, sizeof(b), "%.0f-%.0f", ss[k].min, ss[k].max);
		printf("%-7s %16.0f %24s %14.0f %24s\n", k ? "dense" : "sparse",
		       so[k].mean, a, ss[k].mean, b);
	}
	printf("sparse/dense: setter ops %.3f, scans %.3f\n",
	       so[0].mean / so[1].mean, ss[0].mean / ss[1].mean);

	printf("RESULT {\"setters\": %d, \"cpus\": %d, \"nelems\": %d, \"density\": %d,"
	       " \"stride\": %d, \"seconds\": %g, \"reps\": %d, \"sparse\": {",
	       nsetters, ncpus, nelems, density, stride, seconds, reps);
	print_stats("setter_ops_per_s", &so[0]);
	printf(", ");
	print_stats("scans_per_s", &ss[0]);
	printf("}, \"dense\": {");
	print_stats("setter_ops_per_s", &so[1]);
	printf(", ");
	print_stats("scans_per_s", &ss[1]);
	printf("}, \"ratio_setter_ops\": %.4f, \"ratio_scans\": %.4f}\n",
	       so[0].mean / so[1].mean, ss[0].mean / ss[1].mean);
	for (k = 0; k < 2; k++) {
		free(ops[k]);
		free(scans[k]);
	}
	sparsemask_free(smask);
	free(dmask.bits);
	return 0;
}
