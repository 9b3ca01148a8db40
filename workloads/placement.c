/*
 * placement - does a burst of simultaneous wakeups spread over idle SMT cores?
 *
 * Usage: placement [-n THREADS] [-r ROUNDS] [-s SPIN_MS] [-i IDLE_MS]
 *                  [-W WAKER_CPUS [-P PARK_CPUS]]
 *
 * Reads the SMT sibling groups of the online CPUs this process may use from
 * /sys/devices/system/cpu/cpuN/topology/thread_siblings_list (one group = one
 * core).  Starts THREADS threads (default: one per core, no affinity set)
 * once.  Each round, all of them sleep on one futex and are released by a
 * single FUTEX_WAKE broadcast; each records sched_getcpu() right after
 * waking (the CPU the wakeup chose), spins SPIN_MS, records the CPU again,
 * and goes back to sleep; the main thread then waits IDLE_MS so the machine
 * is idle before the next round.
 *
 * Per round, from the CPUs right after the wakeup: "stacked" means some core
 * holds two or more threads while another allowed core holds none; each such
 * round adds its same-core pairs (sum of n*(n-1)/2 over cores) to
 * stacked_pairs; "spread" means every thread got its own core.  The *_end
 * fields apply the same rules to the CPUs at the end of the spin (after the
 * load balancer had SPIN_MS to fix things); "migrated" counts thread-rounds
 * whose CPU changed during the spin.  It measures and does not judge.
 *
 * With -W (concurrent wakers), the threads are not released by one
 * broadcast from one CPU, which serializes the wakeups: thread i has its own
 * waker thread, pinned to CPU i of WAKER_CPUS (cycling), and every waker
 * spins until the same instant and then wakes its thread, so the wakeups'
 * CPU selections run at the same time on different CPUs.  After its spin a
 * thread parks itself on its waker's CPU (affinity to that CPU, then back
 * to all), so its previous CPU is busy with the waker when it is woken and
 * the wakeup goes through the idle-CPU scan instead of returning the
 * previous CPU.  Give the wakers the little CPUs and a spin long enough
 * that the threads' utilization does not fit them.  -P parks thread i on
 * CPU i of PARK_CPUS instead (cycling), which sets where its wakeup's scan
 * starts: with a utilization that fits no CPU (spin >> idle) every fast
 * path is skipped, and two scans that start on different siblings of an
 * idle core meet that core's CPUs in different orders.
 *
 * Output: human-readable lines, then one line "RESULT {json}".
 * Exit: 0 (measured), 1 usage/system error or a round that never finished.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS	1024
#define ROUND_LIMIT_S	30	/* a round that takes longer is an error */

static int core_of[CPU_SETSIZE];	/* core index, -1 if not usable */
static int ncores, ncpus, max_smt;
static int nthreads, rounds = 100;
static long spin_ns = 5000000, idle_ns = 20000000;

static int gen;				/* futex: round number being released */
static int done;			/* futex: threads finished this round */
static int *cpu_wake, *cpu_end;
static cpu_set_t allowed_cpus;		/* the affinity we started with */

/* -W: concurrent wakers */
static int nwakers;			/* CPUs in waker_cpu[], 0 = broadcast mode */
static int waker_cpu[CPU_SETSIZE];
static int nparks;			/* -P: where threads sleep, 0 = waker's CPU */
static int park_cpu[CPU_SETSIZE];
static int *run_word;			/* futex per thread: round it may run */
static uint64_t go_at;			/* wakers wake their threads at this time */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void futex_wait(int *addr, int val)
{
	struct timespec ts = { 0, 100000000 };	/* re-check every 100 ms */

	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void futex_wake(int *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* Parse a sysfs CPU list ("0-3,8,10-11") into @set; -1 on junk. */
static int parse_cpulist(const char *s, cpu_set_t *set)
{
	char *end;
	long a, b;

	CPU_ZERO(set);
	while (*s && *s != '\n') {
		a = strtol(s, &end, 10);
		if (end == s || a < 0)
			return -1;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -1;
		}
		for (; a <= b && a < CPU_SETSIZE; a++)
			CPU_SET(a, set);
		s = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int read_cpulist(const char *path, cpu_set_t *set)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	return ok ? parse_cpulist(buf, set) : -1;
}

/* Fill core_of[] for the online CPUs in our affinity mask. */
static int read_topology(void)
{
	cpu_set_t online, allowed, sib;
	int cpu, other;
	char path[128];

	if (read_cpulist("/sys/devices/system/cpu/online", &online)) {
		perror("/sys/devices/system/cpu/online");
		return -1;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("sched_getaffinity");
		return -1;
	}
	allowed_cpus = allowed;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		core_of[cpu] = -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &online) || !CPU_ISSET(cpu, &allowed))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
		if (read_cpulist(path, &sib)) {
			perror(path);
			return -1;
		}
		ncpus++;
		/* A core is known by its lowest usable sibling. */
		for (other = 0; other < cpu; other++)
			if (CPU_ISSET(other, &sib) && core_of[other] >= 0)
				break;
		if (other < cpu) {
			core_of[cpu] = core_of[other];
		} else {
			core_of[cpu] = ncores++;
		}
	}
	for (other = 0; other < ncores; other++) {
		int n = 0;

		for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
			n += core_of[cpu] == other;
		if (n > max_smt)
			max_smt = n;
	}
	return ncores ? 0 : -1;
}

static int pin_self(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

/* Move to @cpu and allow all CPUs again (no migration back: @cpu is allowed). */
static void park(int cpu)
{
	if (pin_self(cpu) || sched_setaffinity(0, sizeof(allowed_cpus), &allowed_cpus)) {
		perror("placement: sched_setaffinity");
		exit(1);
	}
}

static void *thread_fn(void *arg)
{
	long i = (long)arg;
	int *word = nwakers ? &run_word[i] : &gen;
	int park_at = nparks ? park_cpu[i % nparks] : nwakers ? waker_cpu[i % nwakers] : -1;
	int r;
	uint64_t t;

	if (park_at >= 0)
		park(park_at);
	for (r = 1; r <= rounds; r++) {
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < r)
			futex_wait(word, r - 1);
		cpu_wake[i] = sched_getcpu();	/* where the wakeup put us */
		t = now_ns();
		while (now_ns() < t + spin_ns)
			;
		cpu_end[i] = sched_getcpu();
		/* Sleep on the park CPU: sets the next wakeup's previous CPU. */
		if (park_at >= 0)
			park(park_at);
		if (__atomic_add_fetch(&done, 1, __ATOMIC_ACQ_REL) == nthreads)
			futex_wake(&done, 1);
	}
	return NULL;
}

/* Waker i: at each round, spin until go_at, then wake thread i. */
static void *waker_fn(void *arg)
{
	long i = (long)arg;
	int r;

	if (pin_self(waker_cpu[i % nwakers])) {
		perror("placement: pinning a waker");
		exit(1);
	}
	for (r = 1; r <= rounds; r++) {
		while (__atomic_load_n(&gen, __ATOMIC_ACQUIRE) < r)
			futex_wait(&gen, r - 1);
		while (now_ns() < __atomic_load_n(&go_at, __ATOMIC_ACQUIRE))
			;
		__atomic_store_n(&run_word[i], r, __ATOMIC_RELEASE);
		futex_wake(&run_word[i], 1);
	}
	return NULL;
}

struct tally {
	unsigned long stacked_rounds, stacked_pairs, spread_rounds, unknown;
};

/* Classify one round's CPUs @cpus (see the header comment). */
static void classify(const int *cpus, struct tally *t)
{
	int count[CPU_SETSIZE] = { 0 };
	int i, c, maxc = 0, empty = 0, unknown = 0;
	unsigned long pairs = 0;

	for (i = 0; i < nthreads; i++) {
		c = cpus[i] >= 0 && cpus[i] < CPU_SETSIZE ? core_of[cpus[i]] : -1;
		if (c < 0) {
			unknown++;	/* CPU not in the topology read at start */
			continue;
		}
		if (++count[c] > maxc)
			maxc = count[c];
	}
	for (c = 0; c < ncores; c++) {
		empty += count[c] == 0;
		pairs += (unsigned long)count[c] * (count[c] - 1) / 2;
	}
	if (maxc >= 2 && empty > 0) {
		t->stacked_rounds++;
		t->stacked_pairs += pairs;
	}
	if (maxc <= 1 && !unknown)
		t->spread_rounds++;
	t->unknown += unknown;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n THREADS] [-r ROUNDS] [-s SPIN_MS] [-i IDLE_MS] [-W CPUS [-P CPUS]]\n"
		"  -n THREADS  threads, at most the number of cores to be meaningful\n"
		"              (default: number of cores, max %d)\n"
		"  -r ROUNDS   rounds (default 100)\n"
		"  -s SPIN_MS  spin after each wakeup, milliseconds (default 5)\n"
		"  -i IDLE_MS  idle gap between rounds, milliseconds (default 20)\n"
		"  -W CPUS     concurrent wakers: thread i is woken by a waker pinned to\n"
		"              the i-th CPU of this list (e.g. 4,6), all at one instant\n"
		"  -P CPUS     with -W: thread i sleeps on the i-th CPU of this list\n"
		"              (default: its waker's CPU)\n",
		prog, MAX_THREADS);
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

/* A CPU list option into @out, in increasing CPU order; returns the count. */
static int cpu_array(const char *arg, int *out, const char *prog)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (parse_cpulist(arg, &set) || !CPU_COUNT(&set))
		usage(prog);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			out[n++] = cpu;
	return n;
}

int main(int argc, char **argv)
{
	struct tally wake = { 0 }, end = { 0 };
	unsigned long migrated = 0;
	struct timespec idle;
	pthread_attr_t attr;
	pthread_t *tids, *wtids = NULL;
	uint64_t limit;
	int opt, i, r, d, err;

	while ((opt = getopt(argc, argv, "n:r:s:i:W:P:")) != -1) {
		switch (opt) {
		case 'n': nthreads = num(optarg, 1, MAX_THREADS, argv[0]); break;
		case 'r': rounds = num(optarg, 1, 10000000, argv[0]); break;
		case 's': spin_ns = num(optarg, 0, 10000, argv[0]) * 1e6; break;
		case 'i': idle_ns = num(optarg, 0, 10000, argv[0]) * 1e6; break;
		case 'W': nwakers = cpu_array(optarg, waker_cpu, argv[0]); break;
		case 'P': nparks = cpu_array(optarg, park_cpu, argv[0]); break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc || (nparks && !nwakers))
		usage(argv[0]);
	if (read_topology()) {
		fprintf(stderr, "placement: cannot read the CPU topology\n");
		return 1;
	}
	if (!nthreads)
		nthreads = ncores > MAX_THREADS ? MAX_THREADS : ncores;
	printf("placement: %d threads, %d rounds, %d cores / %d cpus (up to %d per core),"
	       " spin %g ms, idle %g ms\n", nthreads, rounds, ncores, ncpus, max_smt,
	       spin_ns / 1e6, idle_ns / 1e6);
	if (nthreads > ncores)
		printf("note: more threads than cores, stacking is unavoidable\n");
	for (i = 0; i < nwakers; i++) {
		if (waker_cpu[i] >= CPU_SETSIZE || core_of[waker_cpu[i]] < 0) {
			fprintf(stderr, "placement: waker CPU %d is not online and allowed\n",
				waker_cpu[i]);
			return 1;
		}
	}
	for (i = 0; i < nparks; i++) {
		if (park_cpu[i] >= CPU_SETSIZE || core_of[park_cpu[i]] < 0) {
			fprintf(stderr, "placement: park CPU %d is not online and allowed\n",
				park_cpu[i]);
			return 1;
		}
	}
	if (nwakers) {
		printf("concurrent wakers on CPUs");
		for (i = 0; i < nwakers; i++)
			printf(" %d", waker_cpu[i]);
		printf(", threads sleep on CPUs");
		for (i = 0; i < (nparks ? nparks : nwakers); i++)
			printf(" %d", nparks ? park_cpu[i] : waker_cpu[i]);
		printf("\n");
	}

	cpu_wake = calloc(nthreads, sizeof(int));
	cpu_end = calloc(nthreads, sizeof(int));
	tids = calloc(nthreads, sizeof(*tids));
	run_word = calloc(nthreads, sizeof(int));
	if (nwakers)
		wtids = calloc(nthreads, sizeof(*wtids));
	if (!cpu_wake || !cpu_end || !tids || !run_word || (nwakers && !wtids)) {
		perror("calloc");
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	for (i = 0; i < nthreads; i++) {
		err = pthread_create(&tids[i], &attr, thread_fn, (void *)(long)i);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			return 1;
		}
		if (!nwakers)
			continue;
		err = pthread_create(&wtids[i], &attr, waker_fn, (void *)(long)i);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			return 1;
		}
	}

	idle.tv_sec = idle_ns / 1000000000;
	idle.tv_nsec = idle_ns % 1000000000;
	nanosleep(&idle, NULL);		/* let every thread reach its futex */
	for (r = 1; r <= rounds; r++) {
		__atomic_store_n(&done, 0, __ATOMIC_RELEASE);
		/* wakers: all wake their thread 2 ms from now */
		__atomic_store_n(&go_at, now_ns() + 2000000, __ATOMIC_RELEASE);
		__atomic_store_n(&gen, r, __ATOMIC_RELEASE);
		futex_wake(&gen, INT_MAX);	/* one broadcast releases all */
		limit = now_ns() + ROUND_LIMIT_S * 1000000000ull;
		while ((d = __atomic_load_n(&done, __ATOMIC_ACQUIRE)) < nthreads) {
			futex_wait(&done, d);
			if (now_ns() > limit) {
				fprintf(stderr, "placement: round %d did not finish in %d s\n",
					r, ROUND_LIMIT_S);
				exit(1);	/* ends the threads too */
			}
		}
		classify(cpu_wake, &wake);
		classify(cpu_end, &end);
		for (i = 0; i < nthreads; i++)
			migrated += cpu_wake[i] != cpu_end[i];
		nanosleep(&idle, NULL);		/* everything idle again */
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(tids[i], NULL);
		if (nwakers)
			pthread_join(wtids[i], NULL);
	}

	printf("after wakeup: stacked %lu/%d rounds (%lu pairs), spread %lu/%d rounds\n",
	       wake.stacked_rounds, rounds, wake.stacked_pairs, wake.spread_rounds, rounds);
	printf("after spin:   stacked %lu/%d rounds (%lu pairs), spread %lu/%d rounds,"
	       " %lu migrations during the spin\n", end.stacked_rounds, rounds,
	       end.stacked_pairs, end.spread_rounds, rounds, migrated);
	printf("RESULT {\"threads\": %d, \"wakers\": %d, \"parks\": %d, \"rounds\": %d, \"cores\": %d, \"cpus\": %d,"
	       " \"smt\": %d, \"spin_ms\": %g, \"stacked_rounds\": %lu,"
	       " \"stacked_pairs\": %lu, \"spread_rounds\": %lu,"
	       " \"stacked_rounds_end\": %lu, \"stacked_pairs_end\": %lu,"
	       " \"spread_rounds_end\": %lu, \"migrated\": %lu, \"unknown_cpus\": %lu}\n",
	       nthreads, nwakers, nparks, rounds, ncores, ncpus, max_smt, spin_ns / 1e6,
	       wake.stacked_rounds, wake.stacked_pairs, wake.spread_rounds,
	       end.stacked_rounds, end.stacked_pairs, end.spread_rounds, migrated,
	       wake.unknown + end.unknown);
	return 0;
}
