/*
 * restack - an imbalance the load balancer must chase, made again every
 * round: the wasted-CPU measure's constructed scenario with a known answer
 * (tests/guest/test_waste.py, docs/waste.md).
 *
 * Usage: restack -s SRC -y IDLE [-r ROUNDS] [-p PHASE_MS] [-b BLINK_US]
 *                [-m TRACE_MARKER]
 *
 * Two spinners.  Each round: both pinned to SRC (stacked: one waits, and
 * nothing else may run it), PHASE_MS later both given {SRC, IDLE}
 * (widened: one waits on SRC while IDLE may run it), PHASE_MS later the
 * next round.  With -b a blinker pinned to IDLE runs BLINK_US and sleeps
 * 1 ms in a loop, so IDLE enters idle (and newidle balancing) about 1000
 * times a second; without it IDLE stays idle and only the periodic and
 * nohz balancers can move a spinner there.
 *
 * Each mask change is written to TRACE_MARKER (default
 * /sys/kernel/tracing/trace_marker) at once as "idlesteal affinity TID
 * CPULIST", the line idlesteal/measure/waste/ reads to change a task's allowed
 * set in the middle of a trace.  A missing trace_marker is not an error
 * (the run is then not traced).
 *
 * The answer, by hand: in a stacked phase one spinner waits all along and
 * no other CPU may run it (no waste); in a widened phase a spinner waits
 * on SRC only until a balancer moves it to IDLE, and while it waits IDLE
 * is idle (without -b) or runs the blinker.  So the spinners' waiting in
 * all, less the stacked phases' length, is the time IDLE sat idle while a
 * task it could run waited: the LLC-wasted time (without -b; with -b at
 * most that).  The waiting in all is the kernel's own count, run_delay
 * (the second field of /proc/PID/schedstat), read before the first round
 * and after the last; the kernel adds a wait to it only when the task
 * runs again, so both reads follow 20 ms with the spinners spread over
 * SRC and IDLE, where neither waits.  The stacked phases' length is
 * measured with CLOCK_MONOTONIC (guest time) from each narrowing to the
 * next widening.
 *
 * Output: "RESULT {json}": rounds, the phase length, the spinners' run
 * delay over the rounds and the stacked phases' length (ms), and the
 * number of widened phases that ended with no spinner on IDLE (not moved
 * yet).  Exit: 0 done, 1 usage or system error.
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

#define MAX_ROUNDS	100000

static int marker_fd = -1;

static void die(const char *what)
{
	fprintf(stderr, "restack: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void set_mask(pid_t pid, int a, int b)
{
	char line[96];
	cpu_set_t set;
	int n;

	CPU_ZERO(&set);
	CPU_SET(a, &set);
	if (b >= 0)
		CPU_SET(b, &set);
	if (sched_setaffinity(pid, sizeof(set), &set))
		die("sched_setaffinity");
	if (marker_fd < 0 || pid == 0)
		return;
	if (b >= 0)
		n = snprintf(line, sizeof(line), "idlesteal affinity %d %d,%d\n", (int)pid,
			     a < b ? a : b, a < b ? b : a);
	else
		n = snprintf(line, sizeof(line), "idlesteal affinity %d %d\n", (int)pid, a);
	if (write(marker_fd, line, n) != n)
		die("write trace_marker");
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
	set_mask(pid, cpu, -1);		/* again, for the marker */
	return pid;
}

static pid_t blinker(int cpu, long run_us)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		struct timespec nap = { 0, 1000000 };

		set_mask(0, cpu, -1);
		for (;;) {
			uint64_t t0 = now_ns();

			while (now_ns() - t0 < (uint64_t)run_us * 1000)
				;
			nanosleep(&nap, NULL);
		}
	}
	set_mask(pid, cpu, -1);
	return pid;
}

/* run_delay (ns) of a task; -1 when unreadable. */
static long long run_delay(pid_t pid)
{
	unsigned long long run, delay;
	char path[64];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%llu %llu", &run, &delay);
	fclose(f);
	return n == 2 ? (long long)delay : -1;
}

/* The CPU a task last ran on (field 39 of /proc/PID/stat); -1 if unknown. */
static int last_cpu(pid_t pid)
{
	char path[64], buf[1024], *p;
	int field = 2, cpu = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	p = strrchr(buf, ')');		/* comm may hold spaces */
	if (!p)
		return -1;
	for (p++; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	if (field == 39)
		cpu = atoi(p);
	return cpu;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static long long delays(pid_t a, pid_t b)
{
	long long x = run_delay(a), y = run_delay(b);

	if (x < 0 || y < 0)
		die("read /proc/PID/schedstat (CONFIG_SCHED_INFO?)");
	return x + y;
}

int main(int argc, char **argv)
{
	const char *marker = "/sys/kernel/tracing/trace_marker";
	int src = -1, idle = -1, rounds = 20, opt, r, unmoved = 0;
	long phase_ms = 50, blink_us = -1;
	long long stacked = 0, d0, d1;
	pid_t h1, h2, bl = -1;

	while ((opt = getopt(argc, argv, "s:y:r:p:b:m:")) != -1) {
		switch (opt) {
		case 's': src = atoi(optarg); break;
		case 'y': idle = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'p': phase_ms = atol(optarg); break;
		case 'b': blink_us = atol(optarg); break;
		case 'm': marker = optarg; break;
		default: goto usage;
		}
	}
	if (src < 0 || idle < 0 || src == idle || src >= CPU_SETSIZE || idle >= CPU_SETSIZE ||
	    rounds < 1 || rounds > MAX_ROUNDS || phase_ms < 1 || phase_ms > 10000 ||
	    blink_us > 900)
		goto usage;
	marker_fd = open(marker, O_WRONLY);
	/*
	 * The parent stays off SRC and IDLE: it is not part of the scenario
	 * (run there, it would make both spinners wait in a stacked phase).
	 */
	{
		cpu_set_t set;
		int c, home = -1;

		if (sched_getaffinity(0, sizeof(set), &set))
			die("sched_getaffinity");
		for (c = 0; c < CPU_SETSIZE && home < 0; c++)
			if (CPU_ISSET(c, &set) && c != src && c != idle)
				home = c;
		if (home < 0) {
			fprintf(stderr, "restack: no CPU besides %d and %d to run on\n", src, idle);
			return 1;
		}
		set_mask(0, home, -1);
	}
	h1 = spinner(src);
	h2 = spinner(src);
	if (blink_us >= 0)
		bl = blinker(idle, blink_us);
	sleep_ms(100);

	set_mask(h2, idle, -1);			/* spread: nobody waits */
	sleep_ms(20);
	d0 = delays(h1, h2);
	for (r = 0; r < rounds; r++) {
		uint64_t t0;

		set_mask(h1, src, -1);
		set_mask(h2, src, -1);
		t0 = now_ns();
		sleep_ms(phase_ms);
		set_mask(h1, src, idle);
		set_mask(h2, src, idle);
		stacked += now_ns() - t0;
		sleep_ms(phase_ms);
		if (last_cpu(h1) != idle && last_cpu(h2) != idle)
			unmoved++;
	}
	set_mask(h1, src, -1);
	set_mask(h2, idle, -1);
	sleep_ms(20);
	d1 = delays(h1, h2);
	kill(h1, SIGKILL);
	kill(h2, SIGKILL);
	if (bl > 0)
		kill(bl, SIGKILL);
	while (wait(NULL) > 0)
		;
	printf("RESULT {\"rounds\": %d, \"phase_ms\": %ld, \"blink_us\": %ld, "
	       "\"run_delay_ms\": %.3f, \"stacked_ms\": %.3f, "
	       "\"unmoved\": %d, \"traced\": %s}\n", rounds, phase_ms, blink_us,
	       (d1 - d0) / 1e6, stacked / 1e6, unmoved, marker_fd >= 0 ? "true" : "false");
	return 0;
usage:
	fprintf(stderr, "usage: restack -s SRC -y IDLE [-r ROUNDS 1-%d] [-p PHASE_MS 1-10000] "
		"[-b BLINK_US 0-900] [-m TRACE_MARKER]\n", MAX_ROUNDS);
	return 1;
}
