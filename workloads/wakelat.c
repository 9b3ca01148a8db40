/*
 * wakelat - wakeup latency and request throughput (schbench in spirit).
 *
 * Usage: wakelat [-m MESSENGERS] [-w WORKERS_PER_MESSENGER] [-d SECONDS]
 *                [-u WORK_US] [-g GRACE_SECONDS]
 *
 * Each messenger thread runs rounds until the deadline: for each of its
 * workers it takes a CLOCK_MONOTONIC timestamp, marks the worker's futex
 * word "run" and FUTEX_WAKEs it; then it sleeps on a futex until all of its
 * workers have finished.  A worker, once running, records its wakeup
 * latency (now - the messenger's timestamp), busy-works WORK_US
 * microseconds, marks itself idle, tells the messenger and sleeps again.
 * One worker request is one completed wake + work.
 *
 * Latencies go to a per-worker histogram, exact to the microsecond below
 * 2048 us and within 1/128 (< 0.8%) above, up to ~35 minutes; percentiles
 * are reported as the lower edge of their bucket, the maximum exactly.
 *
 * All waits have a timeout; a worker that has not answered GRACE seconds
 * (default 10) after the deadline counts as a stall.  The messenger that
 * sees it prints one "STALL worker" line per unanswered worker, read from
 * /proc at that moment: the thread's state and CPU and its schedstat
 * (time run, time waited on a runqueue), which tell a runnable thread
 * that got no CPU from one that was never woken.
 *
 * Output: human-readable lines, then one line "RESULT {json}".
 * Exit: 0 ok, 2 stall or no sample at all, 1 usage/system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LIN_BITS	11	/* exact below 2^11 us */
#define SUB_BITS	7	/* 128 sub-buckets per power of two above */
#define MAX_EXP		31	/* values up to 2^31 us */
#define NBUCKETS	((1 << LIN_BITS) + (MAX_EXP - LIN_BITS) * (1 << SUB_BITS))
#define MAX_THREADS	8192

enum { IDLE, RUN };

struct messenger;

struct worker {
	int state;			/* futex word: IDLE or RUN */
	pid_t tid;			/* for the stall report */
	uint64_t wake_ns;		/* messenger's timestamp before the wake */
	struct messenger *m;
	pthread_t thread;
	uint64_t samples, max_us;
	uint64_t hist[NBUCKETS];
} __attribute__((aligned(64)));

struct messenger {
	int pending;			/* futex word: workers still busy */
	int stop;			/* workers must exit */
	int stalled;
	uint64_t requests;
	struct worker *workers;
	pthread_t thread;
} __attribute__((aligned(64)));

static int nmess = 2, nwork = 4;
static long work_ns = 50000;
static uint64_t deadline_ns;
static uint64_t grace_ns = 10000000000ull;	/* -g */
static struct worker *ws;		/* all workers, nwork per messenger */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Sleep while *@addr == @val, at most 200 ms (spurious returns are fine). */
static void futex_wait(int *addr, int val)
{
	struct timespec ts = { 0, 200000000 };

	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void futex_wake(int *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static int bucket(uint64_t us)
{
	int e;

	if (us < (1u << LIN_BITS))
		return us;
	e = 63 - __builtin_clzll(us);
	if (e >= MAX_EXP)
		return NBUCKETS - 1;
	return (1 << LIN_BITS) + (e - LIN_BITS) * (1 << SUB_BITS) +
	       ((us >> (e - SUB_BITS)) & ((1 << SUB_BITS) - 1));
}

/* Smallest value that falls into bucket @b. */
static uint64_t bucket_low(int b)
{
	int e, m;

	if (b < (1 << LIN_BITS))
		return b;
	e = LIN_BITS + (b - (1 << LIN_BITS)) / (1 << SUB_BITS);
	m = (b - (1 << LIN_BITS)) % (1 << SUB_BITS);
	return (1ull << e) + ((uint64_t)m << (e - SUB_BITS));
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct messenger *m = w->m;
	uint64_t t, lat;

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;) {
		while (__atomic_load_n(&w->state, __ATOMIC_ACQUIRE) == IDLE &&
		       !__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE))
			futex_wait(&w->state, IDLE);
		if (__atomic_load_n(&w->state, __ATOMIC_ACQUIRE) == IDLE)
			break;		/* stop, and no request pending */
		t = now_ns();
		lat = t > w->wake_ns ? (t - w->wake_ns) / 1000 : 0;
		w->hist[bucket(lat)]++;
		w->samples++;
		if (lat > w->max_us)
			w->max_us = lat;
		while (now_ns() < t + work_ns)
			;		/* the request's work */
		__atomic_store_n(&w->state, IDLE, __ATOMIC_RELEASE);
		if (__atomic_sub_fetch(&m->pending, 1, __ATOMIC_ACQ_REL) == 0)
			futex_wake(&m->pending, 1);
	}
	return NULL;
}

/*
 * Read /proc/self/task/TID/@file into @buf; "" when it cannot be read (the
 * thread has exited, or no CONFIG_SCHED_INFO for schedstat).
 */
static void read_task_file(pid_t tid, const char *file, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, file);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * One line on a worker that has not answered: state and last CPU (fields
 * 3 and 39 of stat, which follow the 1st and the 37th space after the ")"
 * that ends the name) and schedstat's "run_ns wait_ns timeslices".
 */
static void report_stalled(const struct worker *w, uint64_t now)
{
	char stat[1024], sched[128], state = '?';
	const char *p;
	int space, cpu = -1;
	pid_t tid = __atomic_load_n(&w->tid, __ATOMIC_ACQUIRE);

	read_task_file(tid, "stat", stat, sizeof(stat));
	read_task_file(tid, "schedstat", sched, sizeof(sched));
	p = strrchr(stat, ')');
	if (p && p[1] == ' ') {
		state = p[2];
		for (space = 0; space < 37 && p; space++)
			p = strchr(p + 1, ' ');
		if (p)
			cpu = atoi(p + 1);
	}
	printf("STALL worker %d tid %d: woken %.1f s ago, state %c, cpu %d,"
	       " schedstat [%s]\n", (int)(w - ws), (int)tid, (now - w->wake_ns) / 1e9,
	       state, cpu, sched[0] ? sched : "unreadable");
}

static void *messenger_fn(void *arg)
{
	struct messenger *m = arg;
	struct worker *w;
	uint64_t t;
	int i, p;

	while (now_ns() < deadline_ns) {
		__atomic_store_n(&m->pending, nwork, __ATOMIC_RELEASE);
		for (i = 0; i < nwork; i++) {
			w = &m->workers[i];
			w->wake_ns = now_ns();
			__atomic_store_n(&w->state, RUN, __ATOMIC_RELEASE);
			futex_wake(&w->state, 1);
		}
		while ((p = __atomic_load_n(&m->pending, __ATOMIC_ACQUIRE)) != 0) {
			futex_wait(&m->pending, p);
			t = now_ns();
			if (t > deadline_ns + grace_ns) {
				m->stalled = 1;
				for (i = 0; i < nwork; i++)
					if (__atomic_load_n(&m->workers[i].state,
							    __ATOMIC_ACQUIRE) == RUN)
						report_stalled(&m->workers[i], t);
				goto out;
			}
		}
		m->requests += nwork;
	}
out:
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nwork; i++)
		futex_wake(&m->workers[i].state, 1);
	return NULL;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-m MESSENGERS] [-w WORKERS] [-d SECONDS] [-u WORK_US] [-g GRACE]\n"
		"  -m MESSENGERS  messenger threads (default 2)\n"
		"  -w WORKERS     workers per messenger (default 4)\n"
		"  -d SECONDS     run time, may be fractional (default 5)\n"
		"  -u WORK_US     busy work per request in microseconds (default 50)\n"
		"  -g GRACE       seconds after the end before an unanswered worker\n"
		"                 is a stall (default 10)\n",
		prog);
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

/* Value at quantile @q of the merged histogram @h with @n samples. */
static uint64_t quantile(const uint64_t *h, uint64_t n, double q)
{
	double x = q * n;
	uint64_t rank = (uint64_t)x, seen = 0;	/* nearest rank, 0-based */
	int b;

	if ((double)rank == x && rank > 0)
		rank--;				/* ceil(q * n) - 1 */
	if (rank >= n)
		rank = n - 1;
	for (b = 0; b < NBUCKETS; b++) {
		seen += h[b];
		if (seen > rank)
			return bucket_low(b);
	}
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = 5, elapsed;
	struct messenger *ms;
	static uint64_t hist[NBUCKETS];
	uint64_t requests = 0, samples = 0, max_us = 0, start, p50, p99, p999;
	struct timespec dl;
	pthread_attr_t attr;
	int opt, i, j, b, stalled = 0, err;

	while ((opt = getopt(argc, argv, "m:w:d:u:g:")) != -1) {
		switch (opt) {
		case 'm': nmess = num(optarg, 1, MAX_THREADS, argv[0]); break;
		case 'w': nwork = num(optarg, 1, MAX_THREADS, argv[0]); break;
		case 'd': seconds = num(optarg, 0.001, 86400, argv[0]); break;
		case 'u': work_ns = num(optarg, 0, 10000000, argv[0]) * 1000; break;
		case 'g': grace_ns = num(optarg, 0.1, 3600, argv[0]) * 1e9; break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc || (long)nmess * (nwork + 1) > MAX_THREADS)
		usage(argv[0]);

	ms = aligned_alloc(64, sizeof(*ms) * nmess);
	ws = aligned_alloc(64, sizeof(*ws) * nmess * nwork);
	if (!ms || !ws) {
		perror("malloc");
		return 1;
	}
	memset(ms, 0, sizeof(*ms) * nmess);
	memset(ws, 0, sizeof(*ws) * nmess * nwork);
	printf("wakelat: %d messengers x %d workers, %ld us work, %.3g s\n",
	       nmess, nwork, work_ns / 1000, seconds);

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	start = now_ns();
	deadline_ns = start + (uint64_t)(seconds * 1e9);
	for (i = 0; i < nmess; i++) {
		ms[i].workers = &ws[i * nwork];
		for (j = 0; j < nwork; j++) {
			ws[i * nwork + j].m = &ms[i];
			err = pthread_create(&ws[i * nwork + j].thread, &attr, worker_fn,
					     &ws[i * nwork + j]);
			if (err) {
				fprintf(stderr, "pthread_create: %s\n", strerror(err));
				return 1;
			}
		}
	}
	for (i = 0; i < nmess; i++) {
		err = pthread_create(&ms[i].thread, &attr, messenger_fn, &ms[i]);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			return 1;
		}
	}

	/* Joins are bounded too: give up GRACE after the deadline (+1 s). */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)(seconds + grace_ns / 1e9) + 1;
	for (i = 0; i < nmess && !stalled; i++)
		if (pthread_timedjoin_np(ms[i].thread, NULL, &dl))
			stalled = 1;
	elapsed = (now_ns() - start) / 1e9;	/* the messengers' last round */
	for (i = 0; i < nmess * nwork && !stalled; i++)
		if (pthread_timedjoin_np(ws[i].thread, NULL, &dl))
			stalled = 1;

	for (i = 0; i < nmess; i++) {
		requests += ms[i].requests;
		stalled |= ms[i].stalled;
	}
	for (i = 0; i < nmess * nwork; i++) {
		for (b = 0; b < NBUCKETS; b++)
			hist[b] += ws[i].hist[b];
		samples += ws[i].samples;
		if (ws[i].max_us > max_us)
			max_us = ws[i].max_us;
	}
	p50 = samples ? quantile(hist, samples, 0.50) : 0;
	p99 = samples ? quantile(hist, samples, 0.99) : 0;
	p999 = samples ? quantile(hist, samples, 0.999) : 0;

	if (stalled)
		printf("STALL: a worker did not answer within %.1f s after the end\n",
		       grace_ns / 1e9);
	printf("requests %llu (%.0f/s), wakeup latency us: p50 %llu p99 %llu p99.9 %llu"
	       " max %llu (%llu samples)\n", (unsigned long long)requests,
	       requests / elapsed, (unsigned long long)p50, (unsigned long long)p99,
	       (unsigned long long)p999, (unsigned long long)max_us,
	       (unsigned long long)samples);
	printf("RESULT {\"messengers\": %d, \"workers\": %d, \"work_us\": %ld,"
	       " \"seconds\": %.3f, \"requests\": %llu, \"rps\": %.1f,"
	       " \"lat_p50_us\": %llu, \"lat_p99_us\": %llu, \"lat_p999_us\": %llu,"
	       " \"lat_max_us\": %llu, \"samples\": %llu, \"stalled\": %s}\n",
	       nmess, nwork, work_ns / 1000, elapsed, (unsigned long long)requests,
	       requests / elapsed, (unsigned long long)p50, (unsigned long long)p99,
	       (unsigned long long)p999, (unsigned long long)max_us,
	       (unsigned long long)samples, stalled ? "true" : "false");
	fflush(stdout);
	/* exit() rather than return: stalled threads may still be running */
	exit(stalled || !samples ? 2 : 0);
}
