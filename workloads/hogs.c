/*
 * hogs - does every CPU-bound task get its share when there are more of
 * them than CPUs?
 *
 * Usage: hogs [-n TASKS] [-d SECONDS] [-w WARMUP_S] [-y YIELDERS]
 *
 * Forks TASKS processes (default: the CPUs this program may use, plus one)
 * that spin.  After WARMUP_S seconds (default 1) it reads each one's CPU
 * time (utime + stime, fields 14 and 15 of /proc/PID/stat) and again
 * SECONDS (default 4) later, then kills them.  Each task's share is its CPU
 * time over the wall time between the two reads; the fair share is
 * min(1, CPUs / TASKS).  With TASKS = CPUs + 1 a scheduler that never moves
 * a waiting task leaves two tasks sharing one CPU (a share of 1/2 each)
 * while the others keep a CPU to themselves.  The first YIELDERS tasks
 * (default 0) call sched_yield() at every turn of their loop: two tasks on
 * one CPU, one of them yielding, show whether a yield gives the CPU to the
 * task that waits (the other then gets nearly all of it) or not (1/2 each).
 *
 * Output: one line per task, then "RESULT {json}": the shares, their
 * minimum and maximum, the fair share, min/max over fair, and the mean of
 * the two smallest over fair ("low2_over_fair": two tasks sharing one CPU
 * for good read about 0.56 there on 8 CPUs; one share that guest time
 * accounting under a loaded host got wrong moves it less than the minimum).
 * Exit: 0 done (the caller judges the shares), 1 usage or system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TASKS	1024

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "hogs: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* utime + stime of @pid in clock ticks, or -1. */
static long long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *s;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* The command name may hold spaces: fields count from its ')'. */
	s = strrchr(buf, ')');
	if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

int main(int argc, char **argv)
{
	static pid_t pids[MAX_TASKS];
	static long long t0[MAX_TASKS], t1[MAX_TASKS];
	double seconds = 4, warmup = 1, w0, w1, fair, share, lo = 1e9, lo2 = 1e9, hi = 0;
	long hz = sysconf(_SC_CLK_TCK);
	int n = 0, yielders = 0, cpus, opt, i;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "n:d:w:y:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 'd': seconds = atof(optarg); break;
		case 'w': warmup = atof(optarg); break;
		case 'y': yielders = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: hogs [-n TASKS] [-d SECONDS] [-w WARMUP_S] [-y YIELDERS]\n");
			return 1;
		}
	}
	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity");
	cpus = CPU_COUNT(&set);
	if (n <= 0)
		n = cpus + 1;
	if (n > MAX_TASKS || seconds <= 0 || warmup < 0 || hz <= 0 || yielders < 0 ||
	    yielders > n) {
		fprintf(stderr, "hogs: bad arguments\n");
		return 1;
	}

	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (pids[i] == 0) {
			volatile unsigned long x = 0;

			if (i < yielders)
				for (;;) {
					x++;
					sched_yield();
				}
			for (;;)
				x++;
		}
	}
	usleep((useconds_t)(warmup * 1e6));
	w0 = now_s();
	for (i = 0; i < n; i++)
		t0[i] = cpu_ticks(pids[i]);
	usleep((useconds_t)(seconds * 1e6));
	w1 = now_s();
	for (i = 0; i < n; i++)
		t1[i] = cpu_ticks(pids[i]);
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);

	fair = (double)cpus / n;
	if (fair > 1)
		fair = 1;
	printf("hogs: %d tasks on %d CPUs for %.2f s, fair share %.3f\n", n, cpus, w1 - w0, fair);
	for (i = 0; i < n; i++) {
		if (t0[i] < 0 || t1[i] < 0) {
			fprintf(stderr, "hogs: cannot read /proc/%d/stat\n", (int)pids[i]);
			return 1;
		}
		share = (double)(t1[i] - t0[i]) / hz / (w1 - w0);
		if (share < lo) {
			lo2 = lo;
			lo = share;
		} else if (share < lo2) {
			lo2 = share;
		}
		if (share > hi)
			hi = share;
		printf("hog %d pid %d share %.3f\n", i, (int)pids[i], share);
	}
	printf("RESULT {\"tasks\": %d, \"cpus\": %d, \"seconds\": %.3f, \"fair\": %.4f, "
	       "\"min\": %.4f, \"max\": %.4f, \"min_over_fair\": %.4f, \"max_over_fair\": %.4f, "
	       "\"low2_over_fair\": %.4f, \"shares\": [", n, cpus, w1 - w0, fair, lo, hi, lo / fair,
	       hi / fair, n > 1 ? (lo + lo2) / 2 / fair : lo / fair);
	for (i = 0; i < n; i++)
		printf("%s%.4f", i ? ", " : "", (double)(t1[i] - t0[i]) / hz / (w1 - w0));
	printf("]}\n");
	return 0;
}
