/*
 * affinity_check - prove that no task ever runs outside its affinity mask.
 *
 * Usage: affinity_check [-t THREADS] [-d SECONDS] [-c CHURN_MS] [-s SEED] [-T TRACEFS]
 *
 * Every thread restricts itself to a random non-empty subset of the CPUs the
 * process may use, then until the deadline: spins 20-50 us, checks that
 * sched_getcpu() is in its mask, and every few iterations sleeps 50-200 us or
 * yields, so it blocks and wakes (and can be stolen) often.  Every CHURN_MS
 * it switches to a new random subset.  More threads than CPUs (default 2x)
 * keep the runqueues overloaded so idle CPUs have something to steal.
 *
 * A CPU outside the mask we asked for is a violation, unless the kernel's
 * own mask is no longer a subset of it: that happens legitimately when all
 * CPUs of the mask went offline (hotplug) and the kernel broke the affinity;
 * such events are counted as "affinity_resets", not violations.  Nor is it
 * one while no CPU of the mask is active (sched_getaffinity() returns the
 * mask ANDed with the active CPUs: an empty set): a mask set just before its
 * CPUs were deactivated cannot be honoured, the kernel leaves the thread
 * where it runs until its next wakeup moves it to a fallback CPU (the
 * "no longer affine to cpuN" message).  Stealing has no part in that
 * window; such checks are counted as "inactive_mask".
 *
 * sched_getcpu() reads the CPU number glibc keeps in the rseq area, which
 * the kernel refreshes on the way back to user space.  At a violation the
 * thread also asks the getcpu system call and reads field 39 of
 * /proc/thread-self/stat (the CPU it last ran on), and prints all three:
 * a violation that only the rseq value shows is counted as "rseq_only"
 * (still a violation: a stale rseq cpu_id is a kernel bug too).
 *
 * With -T TRACEFS (the tracefs mount, e.g. /sys/kernel/tracing) every mask
 * change is written to TRACEFS/trace_marker, and the first violation too,
 * after which tracing is switched off (TRACEFS/tracing_on) so that the ring
 * buffer keeps the moves that led to it (idlesteal/guest/stress.sh).
 *
 * Output: human-readable lines, then one line "RESULT {json}".
 * Exit: 0 pass, 2 violation (or no check done), 1 usage/system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS	4096
#define MAX_REPORTS	10	/* violations printed in detail */

static cpu_set_t allowed;	/* the process's CPUs at start */
static int allowed_cpus[CPU_SETSIZE], nallowed;
static uint64_t deadline_ns;
static long churn_ns;

static unsigned long total_checks, total_violations, total_changes;
static unsigned long total_set_errors, total_resets, total_inactive, total_rseq_only;
static int reports;		/* violations printed so far */
static int marker_fd = -1;	/* TRACEFS/trace_marker, -T */
static int tracing_on_fd = -1;	/* TRACEFS/tracing_on, -T */
static int trace_stopped;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* xorshift64*: small, good enough, and per-thread state. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

/* Format @set as a CPU list such as "0-3,6" into @buf. */
static void cpulist(const cpu_set_t *set, char *buf, size_t len)
{
	size_t n = 0;
	int cpu, start;

	buf[0] = '\0';
	for (cpu = 0; cpu < CPU_SETSIZE && n < len; cpu++) {
		if (!CPU_ISSET(cpu, set))
			continue;
		start = cpu;
		while (cpu + 1 < CPU_SETSIZE && CPU_ISSET(cpu + 1, set))
			cpu++;
		n += snprintf(buf + n, len - n, "%s%d", n ? "," : "", start);
		if (cpu > start && n < len)
			n += snprintf(buf + n, len - n, "-%d", cpu);
	}
}

/* One line into the trace buffer (-T); a failed write is not an error. */
static void trace_marker(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void trace_marker(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (marker_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)!write(marker_fd, buf, n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1);
}

/* The CPU the kernel last ran us on: field 39 of /proc/thread-self/stat. */
static int stat_cpu(void)
{
	char buf[1024], *p;
	int fd, n, field;

	fd = open("/proc/thread-self/stat", O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm (field 2) may hold spaces: count fields after its ')' */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	for (field = 2; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	return field == 39 ? atoi(p) : -1;
}

/*
 * A random non-empty subset of the allowed CPUs, in three flavours so that
 * single-CPU masks (nothing may be stolen) are common: one CPU, each CPU
 * with probability 1/2, or all CPUs but one.
 */
static void random_subset(cpu_set_t *set, uint64_t *seed)
{
	int i, kind = rnd(seed) % 3;
	int pick = allowed_cpus[rnd(seed) % nallowed];

	CPU_ZERO(set);
	for (i = 0; i < nallowed; i++) {
		int cpu = allowed_cpus[i];

		if ((kind == 1 && (rnd(seed) & 1)) || (kind == 2 && cpu != pick))
			CPU_SET(cpu, set);
	}
	if (CPU_COUNT(set) == 0)
		CPU_SET(pick, set);
}

struct worker {
	pthread_t thread;
	int id;
	uint64_t seed;
	unsigned long checks, violations, changes, set_errors, resets, inactive;
	unsigned long rseq_only;
	cpu_set_t want;		/* the mask we asked for */
};

/* Ask for a new random mask; on failure (e.g. CPUs offline) keep the old. */
static void churn(struct worker *w)
{
	cpu_set_t set;
	int tries;

	for (tries = 0; tries < 8; tries++) {
		random_subset(&set, &w->seed);
		if (sched_setaffinity(0, sizeof(set), &set) == 0) {
			w->want = set;
			w->changes++;
			if (marker_fd >= 0) {
				char list[256];

				cpulist(&set, list, sizeof(list));
				trace_marker("affinity_check: tid %d setaffinity %s\n",
					     gettid(), list);
			}
			return;
		}
		w->set_errors++;
	}
}

/* Check the CPU we run on against the mask we asked for. */
static void check(struct worker *w)
{
	int cpu = sched_getcpu();
	cpu_set_t actual, extra;
	char want[256], act[256];
	unsigned int sys_cpu = -1;
	int proc_cpu;

	w->checks++;
	if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &w->want))
		return;
	/* Did the kernel legitimately widen our mask (hotplug fallback)? */
	CPU_ZERO(&actual);
	if (sched_getaffinity(0, sizeof(actual), &actual) == 0) {
		if (CPU_COUNT(&actual) == 0) {	/* hotplug window, see top */
			w->inactive++;
			return;
		}
		CPU_OR(&extra, &actual, &w->want);
		if (!CPU_EQUAL(&extra, &w->want)) {
			w->resets++;
			w->want = actual;	/* adopt it until the next churn */
			return;
		}
	}
	/* Ask the kernel directly: the rseq value may be stale. */
	if (syscall(SYS_getcpu, &sys_cpu, NULL, NULL))
		sys_cpu = -1;
	proc_cpu = stat_cpu();
	w->violations++;
	if ((int)sys_cpu >= 0 && (int)sys_cpu < CPU_SETSIZE && CPU_ISSET(sys_cpu, &w->want) &&
	    proc_cpu >= 0 && proc_cpu < CPU_SETSIZE && CPU_ISSET(proc_cpu, &w->want))
		w->rseq_only++;
	cpulist(&w->want, want, sizeof(want));
	cpulist(&actual, act, sizeof(act));
	if (marker_fd >= 0 && !__atomic_exchange_n(&trace_stopped, 1, __ATOMIC_RELAXED)) {
		trace_marker("affinity_check: VIOLATION tid %d rseq_cpu %d getcpu %d stat_cpu %d mask %s kernel_mask %s\n",
			     gettid(), cpu, (int)sys_cpu, proc_cpu, want, act);
		if (tracing_on_fd >= 0)
			(void)!write(tracing_on_fd, "0", 1);
	}
	if (__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED) < MAX_REPORTS)
		printf("VIOLATION thread %d tid %d on cpu %d, mask %s (kernel mask %s) getcpu %d stat_cpu %d\n",
		       w->id, gettid(), cpu, want, act, (int)sys_cpu, proc_cpu);
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	uint64_t now, next_churn;
	unsigned long iter = 0;
	struct timespec ts = { 0, 0 };

	w->want = allowed;
	churn(w);
	next_churn = now_ns() + churn_ns;
	while ((now = now_ns()) < deadline_ns) {
		if (churn_ns && now >= next_churn) {
			churn(w);
			next_churn = now + churn_ns;
			check(w);	/* the migration setaffinity forced */
		}
		spin_ns(20000 + rnd(&w->seed) % 30001);
		check(w);
		if (++iter % 4 == 0) {
			if (rnd(&w->seed) & 1) {
				ts.tv_nsec = 50000 + rnd(&w->seed) % 150001;
				nanosleep(&ts, NULL);
			} else {
				sched_yield();
			}
			check(w);	/* where the wakeup put us */
		}
	}
	return NULL;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t THREADS] [-d SECONDS] [-c CHURN_MS] [-s SEED] [-T TRACEFS]\n"
		"  -t THREADS   threads (default: 2 x allowed CPUs, max %d)\n"
		"  -d SECONDS   run time, may be fractional (default 5)\n"
		"  -c CHURN_MS  change each thread's random mask every CHURN_MS\n"
		"               milliseconds, 0 = never (default 20)\n"
		"  -s SEED      random seed (default: from time and pid)\n"
		"  -T TRACEFS   mark mask changes in TRACEFS/trace_marker; stop\n"
		"               tracing at the first violation\n",
		prog, MAX_THREADS);
	exit(1);
}

/* Parse a whole-string number; -1 on junk. */
static double num(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0)
		return -1;
	return v;
}

int main(int argc, char **argv)
{
	int opt, i, nthreads = 0;
	double seconds = 5, churn_ms = 20, v;
	uint64_t seed = (uint64_t)time(NULL) * 2654435761u ^ getpid();
	struct worker *w;
	pthread_attr_t attr;
	char list[1024];
	uint64_t start;
	int err;

	while ((opt = getopt(argc, argv, "t:d:c:s:T:")) != -1) {
		switch (opt) {
		case 't':
			v = num(optarg);
			if (v < 1 || v > MAX_THREADS || v != (int)v)
				usage(argv[0]);
			nthreads = v;
			break;
		case 'd':
			seconds = num(optarg);
			if (seconds <= 0 || seconds > 86400)
				usage(argv[0]);
			break;
		case 'c':
			churn_ms = num(optarg);
			if (churn_ms < 0 || churn_ms > 3600000)
				usage(argv[0]);
			break;
		case 's':
			v = num(optarg);
			if (v < 0)
				usage(argv[0]);
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'T': {
			char path[4096];

			snprintf(path, sizeof(path), "%s/trace_marker", optarg);
			marker_fd = open(path, O_WRONLY);
			if (marker_fd < 0) {
				perror(path);
				return 1;
			}
			snprintf(path, sizeof(path), "%s/tracing_on", optarg);
			tracing_on_fd = open(path, O_WRONLY);
			if (tracing_on_fd < 0) {
				perror(path);
				return 1;
			}
			break;
		}
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);

	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("sched_getaffinity");
		return 1;
	}
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &allowed))
			allowed_cpus[nallowed++] = i;
	if (!nthreads)
		nthreads = 2 * nallowed > MAX_THREADS ? MAX_THREADS : 2 * nallowed;
	churn_ns = (long)(churn_ms * 1e6);
	cpulist(&allowed, list, sizeof(list));
	printf("affinity_check: %d threads on cpus %s for %.3g s, churn %g ms, seed %llu\n",
	       nthreads, list, seconds, churn_ms, (unsigned long long)seed);

	w = calloc(nthreads, sizeof(*w));
	if (!w) {
		perror("calloc");
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	start = now_ns();
	deadline_ns = start + (uint64_t)(seconds * 1e9);
	for (i = 0; i < nthreads; i++) {
		w[i].id = i;
		w[i].seed = (seed + 1) * 0x9E3779B97F4A7C15ull ^ (i + 1) * 0xD1B54A32D192ED03ull;
		if (!w[i].seed)
			w[i].seed = 1;
		err = pthread_create(&w[i].thread, &attr, worker_fn, &w[i]);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			return 1;	/* exit() ends the threads already started */
		}
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
		total_checks += w[i].checks;
		total_violations += w[i].violations;
		total_changes += w[i].changes;
		total_set_errors += w[i].set_errors;
		total_resets += w[i].resets;
		total_inactive += w[i].inactive;
		total_rseq_only += w[i].rseq_only;
	}
	seconds = (now_ns() - start) / 1e9;

	printf("checks %lu (%.0f per thread per second), violations %lu, mask changes %lu,"
	       " setaffinity errors %lu, affinity resets %lu, inactive mask %lu,"
	       " rseq-only violations %lu\n",
	       total_checks, total_checks / seconds / nthreads, total_violations,
	       total_changes, total_set_errors, total_resets, total_inactive, total_rseq_only);
	printf("RESULT {\"threads\": %d, \"cpus\": %d, \"seconds\": %.3f, \"checks\": %lu,"
	       " \"violations\": %lu, \"mask_changes\": %lu, \"setaffinity_errors\": %lu,"
	       " \"affinity_resets\": %lu, \"inactive_mask\": %lu, \"rseq_only\": %lu,"
	       " \"seed\": %llu}\n",
	       nthreads, nallowed, seconds, total_checks, total_violations, total_changes,
	       total_set_errors, total_resets, total_inactive, total_rseq_only,
	       (unsigned long long)seed);
	return total_violations || !total_checks ? 2 : 0;
}
