/*
 * syncpin - does a task pinned to a CPU get its turn while a sync pipe
 * ping-pong runs there?
 *
 * Usage: syncpin -c CPU [-d SECONDS] [-p PERIOD_US]
 *
 * Two processes bounce one byte over a pair of pipes (pipe writes wake the
 * reader with WF_SYNC).  Both start pinned to CPU, so that they share it,
 * then widen their masks to every CPU the program may use, so that each
 * wakeup goes through the scheduler's CPU selection: on a sync wakeup
 * sched_ext's default selection keeps the wakee on the waker's CPU while
 * that CPU's local queue is empty.  Then a probe process pinned to CPU
 * sleeps PERIOD_US (default 10 ms) in a loop and records how late each
 * wakeup is, for SECONDS (default 8) from when it pinned itself; the
 * ping-pong runs that long too.  A scheduler that always runs the wakee
 * first starves the probe until the ping-pong ends (or its watchdog fires).
 *
 * Output: human-readable lines, then one line "RESULT {json}": the probe's
 * wakeups and worst delay (the time its pinning took counts as a delay),
 * the round trips and the share of them the ping-pong made on CPU.
 * Exit: 0 done (the caller judges the delay), 1 usage or system error.
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

#define WIDEN_AFTER	100	/* round trips made pinned before widening */

struct shared {
	volatile int widened_count;	/* ping-pong processes widened */
	volatile uint64_t pp_deadline;	/* set when the probe starts */
	uint64_t roundtrips;
	uint64_t on_cpu;		/* round trips of the first process on CPU */
	uint64_t probe_wakeups;
	uint64_t probe_max_delay_ns;
	uint64_t probe_pin_ns;		/* how long pinning the probe took */
	uint64_t probe_over_1s;		/* wakeups more than 1 s late */
};

static struct shared *sh;
static cpu_set_t allowed;
static int cpu = -1;
static uint64_t seconds = 8, period_us = 10000;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "syncpin: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void pin(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void xwrite(int fd)
{
	char b = 1;

	if (write(fd, &b, 1) != 1)
		die("write");
}

/* 0 at end of file (the other side is gone) */
static int xread(int fd)
{
	char b;
	ssize_t n = read(fd, &b, 1);

	if (n < 0)
		die("read");
	return n == 1;
}

static void pingpong(int rfd, int wfd, int first)
{
	uint64_t i, deadline;

	pin(cpu);
	for (i = 0;; i++) {
		if (i == WIDEN_AFTER) {
			if (sched_setaffinity(0, sizeof(allowed), &allowed))
				die("sched_setaffinity");
			__sync_fetch_and_add(&sh->widened_count, 1);
		}
		if (first) {
			deadline = sh->pp_deadline;
			if (deadline && now_ns() > deadline)
				break;
			xwrite(wfd);
			if (!xread(rfd))
				break;
			if (i > WIDEN_AFTER) {
				sh->roundtrips++;
				sh->on_cpu += sched_getcpu() == cpu;
			}
		} else {
			if (!xread(rfd))
				break;
			xwrite(wfd);
		}
	}
	exit(0);
}

static void probe(void)
{
	struct timespec ts = {
		.tv_sec = period_us / 1000000,
		.tv_nsec = (period_us % 1000000) * 1000,
	};
	uint64_t t0 = now_ns(), deadline, before, late;

	/* The ping-pong outlasts the probe by a second. */
	sh->pp_deadline = t0 + (seconds + 1) * 1000000000ull;
	pin(cpu);
	sh->probe_pin_ns = now_ns() - t0;
	sh->probe_max_delay_ns = sh->probe_pin_ns;
	deadline = t0 + seconds * 1000000000ull;
	while ((before = now_ns()) < deadline) {
		nanosleep(&ts, NULL);
		late = now_ns() - before;
		late = late > period_us * 1000 ? late - period_us * 1000 : 0;
		sh->probe_wakeups++;
		if (late > sh->probe_max_delay_ns)
			sh->probe_max_delay_ns = late;
		sh->probe_over_1s += late > 1000000000ull;
	}
	exit(0);
}

static pid_t spawn(void (*fn)(void))
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0)
		fn();
	return pid;
}

static int ab[2], ba[2];

static void first(void)
{
	close(ab[0]);
	close(ba[1]);
	pingpong(ba[0], ab[1], 1);
}

static void second(void)
{
	close(ab[1]);
	close(ba[0]);
	pingpong(ab[0], ba[1], 0);
}

int main(int argc, char **argv)
{
	pid_t a, b, p;
	int opt, st, rc = 0;
	uint64_t t;

	while ((opt = getopt(argc, argv, "c:d:p:")) != -1) {
		switch (opt) {
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'd':
			seconds = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			period_us = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: syncpin -c CPU [-d SECONDS] [-p PERIOD_US]\n");
			return 1;
		}
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		die("sched_getaffinity");
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed) ||
	    CPU_COUNT(&allowed) < 2 || !seconds || !period_us) {
		fprintf(stderr, "syncpin: -c needs one of at least two allowed CPUs, "
			"-d and -p more than 0\n");
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (sh == MAP_FAILED)
		die("mmap");
	memset(sh, 0, sizeof(*sh));
	if (pipe(ab) || pipe(ba))
		die("pipe");

	a = spawn(first);
	b = spawn(second);
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	t = now_ns();
	while (sh->widened_count < 2) {
		if (now_ns() - t > 10000000000ull) {
			fprintf(stderr, "syncpin: the ping-pong did not start\n");
			kill(a, SIGKILL);
			kill(b, SIGKILL);
			return 1;
		}
		usleep(1000);
	}
	usleep(200000);		/* let it settle on CPU */
	p = spawn(probe);

	while (wait(&st) > 0) {
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			rc = 1;
	}
	printf("syncpin: cpu %d, %llu round trips (%.0f%% on cpu %d), probe %llu wakeups, "
	       "worst %.1f ms late (pinning took %.1f ms)\n", cpu,
	       (unsigned long long)sh->roundtrips,
	       sh->roundtrips ? 100.0 * sh->on_cpu / sh->roundtrips : 0.0, cpu,
	       (unsigned long long)sh->probe_wakeups, sh->probe_max_delay_ns / 1e6,
	       sh->probe_pin_ns / 1e6);
	printf("RESULT {\"cpu\": %d, \"seconds\": %llu, \"period_us\": %llu, "
	       "\"roundtrips\": %llu, \"pingpong_on_cpu\": %llu, \"probe_wakeups\": %llu, "
	       "\"probe_max_delay_ms\": %.3f, \"probe_pin_ms\": %.3f, "
	       "\"probe_over_1s\": %llu}\n", cpu, (unsigned long long)seconds,
	       (unsigned long long)period_us, (unsigned long long)sh->roundtrips,
	       (unsigned long long)sh->on_cpu, (unsigned long long)sh->probe_wakeups,
	       sh->probe_max_delay_ns / 1e6, sh->probe_pin_ns / 1e6,
	       (unsigned long long)sh->probe_over_1s);
	(void)p;
	return rc;
}
