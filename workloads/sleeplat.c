/*
 * sleeplat - wakeup latency of a periodic sleeper beside CPU-bound tasks
 * (cyclictest in spirit, with the spinners built in).
 *
 * Usage: sleeplat [-n HOGS] [-p PERIOD_US] [-d SECONDS] [-w WARMUP_S]
 *
 * Forks HOGS spinners (default: one per CPU this program may use), waits
 * WARMUP_S seconds (default 1), then sleeps to absolute times PERIOD_US
 * apart (default 5000; clock_nanosleep(TIMER_ABSTIME), as cyclictest) for
 * SECONDS (default 8), as a SCHED_OTHER task.  Per wakeup two numbers:
 *
 *  - latency: when it ran minus when it asked to wake (the timer, the
 *    wakeup and the wait for a CPU): what a user of the sleeper sees;
 *  - delay: its wait on a run queue since its previous wakeup, from
 *    run_delay (the second field of /proc/thread-self/schedstat): the part
 *    the scheduler decides, less exposed to the host scheduling the
 *    guest's vCPUs under QEMU (a vCPU that does not run delays the timer
 *    interrupt, which the latency counts and the delay does not).
 *
 * With every CPU running a spinner, a scheduler with fixed 20 ms slices and
 * no wakeup preemption makes the sleeper wait for the spinner's slice to
 * end: latencies spread over 0-20 ms, the 99th percentile near 20 ms.
 *
 * Output: "RESULT {json}": wakeups, hogs, period_us, each one's 50th, 90th
 * and 99th percentile and maximum in microseconds (lat_*, delay_*; the
 * delay ones absent without /proc/thread-self/schedstat), and "overruns"
 * (periods missed because a wakeup came a whole period late).
 * Exit: 0 done (the caller judges), 1 usage or system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_HOGS	1024

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "sleeplat: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least @q of the samples at or below it. */
static uint64_t pct(const uint64_t *sorted, long n, double q)
{
	long k = (long)(q * n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

/* run_delay (ns) of the calling thread, -1 if unknown. */
static int64_t run_delay(int fd)
{
	char buf[128];
	unsigned long long run, delay;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		return -1;
	return (int64_t)delay;
}

static void print_pcts(const char *name, uint64_t *v, long n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	printf(", \"%s_p50_us\": %.1f, \"%s_p90_us\": %.1f, \"%s_p99_us\": %.1f, "
	       "\"%s_max_us\": %.1f", name, pct(v, n, 0.5) / 1e3, name, pct(v, n, 0.9) / 1e3,
	       name, pct(v, n, 0.99) / 1e3, name, v[n - 1] / 1e3);
}

int main(int argc, char **argv)
{
	long period_us = 5000, seconds = 8, warmup = 1, nhogs = -1, n = 0, max, overruns = 0;
	pid_t hogs[MAX_HOGS];
	uint64_t *lat, *delay, next, end, t;
	int64_t d0, d1;
	cpu_set_t set;
	int opt, fd, have_delay;

	while ((opt = getopt(argc, argv, "n:p:d:w:")) != -1) {
		switch (opt) {
		case 'n': nhogs = atol(optarg); break;
		case 'p': period_us = atol(optarg); break;
		case 'd': seconds = atol(optarg); break;
		case 'w': warmup = atol(optarg); break;
		default:
			fprintf(stderr, "usage: sleeplat [-n HOGS] [-p PERIOD_US] [-d SECONDS] "
				"[-w WARMUP_S]\n");
			return 1;
		}
	}
	if (nhogs < 0) {
		if (sched_getaffinity(0, sizeof(set), &set))
			die("sched_getaffinity");
		nhogs = CPU_COUNT(&set);
	}
	if (nhogs > MAX_HOGS || period_us < 100 || period_us > 1000000 || seconds < 1 ||
	    seconds > 3600 || warmup < 0 || warmup > 60) {
		fprintf(stderr, "sleeplat: -n 0..%d, -p 100..1000000, -d 1..3600, -w 0..60\n",
			MAX_HOGS);
		return 1;
	}
	max = seconds * 1000000 / period_us + 1;
	lat = calloc(max, sizeof(*lat));
	delay = calloc(max, sizeof(*delay));
	if (!lat || !delay)
		die("calloc");

	for (long i = 0; i < nhogs; i++) {
		hogs[i] = fork();
		if (hogs[i] < 0)
			die("fork");
		if (hogs[i] == 0)
			for (volatile unsigned long x = 0;; x++)
				;
	}
	sleep(warmup);

	fd = open("/proc/thread-self/schedstat", O_RDONLY);
	have_delay = run_delay(fd) >= 0;
	t = now_ns();
	next = t + period_us * 1000ull;
	end = t + seconds * 1000000000ull;
	d0 = run_delay(fd);
	while (next < end && n < max) {
		struct timespec ts = { next / 1000000000ull, next % 1000000000ull };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		t = now_ns();
		d1 = run_delay(fd);
		lat[n] = t > next ? t - next : 0;
		delay[n] = d1 >= d0 && d0 >= 0 ? (uint64_t)(d1 - d0) : 0;
		d0 = d1;
		n++;
		next += period_us * 1000ull;
		/* A wakeup a whole period late: start again from now. */
		if (next <= t) {
			overruns++;
			next = t + period_us * 1000ull;
		}
	}

	for (long i = 0; i < nhogs; i++)
		kill(hogs[i], SIGKILL);
	for (long i = 0; i < nhogs; i++)
		waitpid(hogs[i], NULL, 0);
	if (!n) {
		fprintf(stderr, "sleeplat: no wakeup measured\n");
		return 1;
	}

	printf("RESULT {\"wakeups\": %ld, \"hogs\": %ld, \"period_us\": %ld, \"overruns\": %ld",
	       n, nhogs, period_us, overruns);
	print_pcts("lat", lat, n);
	if (have_delay)
		print_pcts("delay", delay, n);
	printf("}\n");
	return 0;
}
