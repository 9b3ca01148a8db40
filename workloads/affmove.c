/*
 * affmove - does a queued task whose affinity moves it run at once on the
 * idle CPU of its new mask?
 *
 * Usage: affmove -s SRC -y IDLE -b BUSY [-p PARENT_CPU] [-r ROUNDS]
 *
 * A spinner is pinned to SRC and one to BUSY.  The task under test, T,
 * blocks on a pipe.  Each round the parent (pinned to PARENT_CPU) pins T to
 * SRC and wakes it: T is queued behind SRC's spinner (a scheduler with long
 * slices and no wakeup preemption keeps it waiting).  2 ms later, if T has
 * not run yet, the parent gives T the mask {IDLE, BUSY} and measures how
 * long until T runs, and on which CPU; T then blocks again.
 *
 * The affinity change re-enqueues the queued T while it is still on SRC,
 * outside its new mask, and the kernel then moves it to one CPU of the mask
 * (cpumask_any_and_distribute(): the first after the CPU it picked last, so
 * with SRC < BUSY < IDLE it is BUSY).  A scheduler whose fallback claims
 * IDLE (clears its idle bit) for the re-enqueue without waking it leaves
 * IDLE halted and hidden from every idle search: T waits on BUSY until
 * BUSY's slice ends.  One that wakes IDLE has it take T from BUSY at once.
 *
 * Output: one line per round, then "RESULT {json}": rounds, the latencies'
 * median, 90th percentile and maximum (ms), how many rounds T first ran on
 * IDLE and on BUSY, and the rounds skipped (T ran on SRC, before the move
 * or while it was made).
 * Exit: 0 done (the caller judges), 1 usage or system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS	1000

struct shared {
	volatile uint64_t count;
	volatile int cpu;
};

static struct shared *sh;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "affmove: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void set_mask(pid_t pid, int a, int b)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a, &set);
	if (b >= 0)
		CPU_SET(b, &set);
	if (sched_setaffinity(pid, sizeof(set), &set))
		die("sched_setaffinity");
}

static pid_t spinner(int cpu)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		volatile unsigned long x = 0;

		set_mask(0, cpu, -1);
		for (;;)
			x++;
	}
	return pid;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static double lat[MAX_ROUNDS];
	int src = -1, idle = -1, busy = -1, parent = -1, rounds = 20, opt, r = 0, tries = 0;
	int on_idle = 0, skipped = 0, fd[2];
	pid_t h1, h2, t;
	char b = 1;

	while ((opt = getopt(argc, argv, "s:y:b:p:r:")) != -1) {
		switch (opt) {
		case 's': src = atoi(optarg); break;
		case 'y': idle = atoi(optarg); break;
		case 'b': busy = atoi(optarg); break;
		case 'p': parent = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (src < 0 || idle < 0 || busy < 0 || rounds < 1 || rounds > MAX_ROUNDS)
		goto usage;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap");
	if (pipe(fd))
		die("pipe");
	if (parent >= 0)
		set_mask(0, parent, -1);
	h1 = spinner(src);
	h2 = spinner(busy);
	t = fork();
	if (t < 0)
		die("fork");
	if (t == 0) {
		for (;;) {
			if (read(fd[0], &b, 1) != 1)
				_exit(0);
			sh->cpu = sched_getcpu();
			sh->count++;
		}
	}
	usleep(200000);

	while (r < rounds && tries < 10 * rounds) {
		uint64_t c = sh->count, t0;

		tries++;
		set_mask(t, src, -1);
		if (write(fd[1], &b, 1) != 1)
			die("write");
		usleep(2000);
		if (sh->count != c) {
			/* T ran before the move (the spinner's slice ended). */
			skipped++;
			continue;
		}
		t0 = now_ns();
		set_mask(t, idle, busy);
		while (sh->count == c)
			if (now_ns() - t0 > 10000000000ull) {
				fprintf(stderr, "affmove: T did not run for 10 s\n");
				goto out;
			}
		if (sh->cpu != idle && sh->cpu != busy) {
			/* T ran on SRC: it was running when the mask changed. */
			skipped++;
			usleep(20000);
			continue;
		}
		lat[r] = (now_ns() - t0) / 1e6;
		on_idle += sh->cpu == idle;
		printf("round %d latency_ms %.3f cpu %d\n", r, lat[r], sh->cpu);
		r++;
		usleep(20000);		/* IDLE goes idle again */
	}
out:
	kill(h1, SIGKILL);
	kill(h2, SIGKILL);
	kill(t, SIGKILL);
	while (wait(NULL) > 0)
		;
	if (r == 0) {
		fprintf(stderr, "affmove: no round (%d skipped)\n", skipped);
		return 1;
	}
	qsort(lat, r, sizeof(lat[0]), cmp);
	printf("RESULT {\"rounds\": %d, \"median_ms\": %.3f, \"p90_ms\": %.3f, \"max_ms\": %.3f, "
	       "\"on_idle\": %d, \"on_busy\": %d, \"skipped\": %d}\n",
	       r, lat[r / 2], lat[(r * 9) / 10 < r ? (r * 9) / 10 : r - 1], lat[r - 1],
	       on_idle, r - on_idle, skipped);
	return r == rounds ? 0 : 1;
usage:
	fprintf(stderr, "usage: affmove -s SRC -y IDLE -b BUSY [-p PARENT_CPU] [-r ROUNDS]\n");
	return 1;
}
