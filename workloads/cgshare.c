/*
 * cgshare - the CPU time each of several cgroups got over one window, read
 * by a task no fair-class or sched_ext scheduler delays.
 *
 * Usage: cgshare [-w WARMUP_S] [-d SECONDS] CGROUP_DIR...
 *
 * Makes itself SCHED_FIFO (priority 1: the RT class runs ahead of both
 * EEVDF and sched_ext), sleeps WARMUP_S (default 1), reads usage_usec
 * from each CGROUP_DIR/cpu.stat, sleeps SECONDS (default 4) and reads them
 * again.  Each cgroup's share is its usage over the wall time
 * (CLOCK_MONOTONIC, guest time) between the two rounds of reads, in CPUs.
 * All cgroups are read back to back in both rounds, so they share one
 * window; a reader of the fair class (a shell, or hogs' own parent) can
 * wait behind the tasks it measures, and then the windows differ: under a
 * sched_ext scheduler that gives a cgroup of cpu.weight 1 a task every
 * second, a shell read one cgroup a second after the other.
 *
 * Output: one line per cgroup, then "RESULT {json}": the window (s), the
 * CPUs this program may use, the shares in argument order and their sum
 * (at most the CPUs, up to the tick accounting's rounding).
 * Exit: 0 done, 1 usage or system error (no SCHED_FIFO is an error: the
 * windows would be what this program exists to avoid).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CGROUPS	16

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* usage_usec of @dir/cpu.stat, or -1 with a message. */
static long long usage_usec(const char *dir)
{
	char path[4096], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cgshare: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "usage_usec %lld", &v) == 1)
			break;
	fclose(f);
	if (v < 0)
		fprintf(stderr, "cgshare: %s: no usage_usec line\n", path);
	return v;
}

static int parse_seconds(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || *out < 0 || *out > 3600 ? -1 : 0;
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
			       .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	static long long u0[MAX_CGROUPS], u1[MAX_CGROUPS];
	struct sched_param sp = { .sched_priority = 1 };
	double warmup = 1, seconds = 4, w0, w1, sum = 0, share;
	int n, opt, i;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "w:d:")) != -1) {
		switch (opt) {
		case 'w':
			if (parse_seconds(optarg, &warmup))
				goto usage;
			break;
		case 'd':
			if (parse_seconds(optarg, &seconds) || seconds == 0)
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	n = argc - optind;
	if (n < 1 || n > MAX_CGROUPS)
		goto usage;
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "cgshare: SCHED_FIFO: %s\n", strerror(errno));
		return 1;
	}
	if (sched_getaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "cgshare: sched_getaffinity: %s\n", strerror(errno));
		return 1;
	}
	sleep_s(warmup);
	w0 = now_s();
	for (i = 0; i < n; i++)
		if ((u0[i] = usage_usec(argv[optind + i])) < 0)
			return 1;
	sleep_s(seconds);
	w1 = now_s();
	for (i = 0; i < n; i++)
		if ((u1[i] = usage_usec(argv[optind + i])) < 0)
			return 1;

	for (i = 0; i < n; i++) {
		share = (u1[i] - u0[i]) / 1e6 / (w1 - w0);
		sum += share;
		printf("cgroup %s share %.4f\n", argv[optind + i], share);
	}
	printf("RESULT {\"seconds\": %.3f, \"cpus\": %d, \"shares\": [", w1 - w0, CPU_COUNT(&set));
	for (i = 0; i < n; i++)
		printf("%s%.4f", i ? ", " : "", (u1[i] - u0[i]) / 1e6 / (w1 - w0));
	printf("], \"sum\": %.4f}\n", sum);
	return 0;

usage:
	fprintf(stderr, "usage: cgshare [-w WARMUP_S] [-d SECONDS] CGROUP_DIR... "
		"(1 to %d cgroups; seconds 0 to 3600, -d above 0)\n", MAX_CGROUPS);
	return 1;
}
