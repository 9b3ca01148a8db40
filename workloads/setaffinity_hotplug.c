/*
 * setaffinity_hotplug - does sched_setaffinity() leave its caller outside
 * the new mask when the CPU the kernel picked for it goes offline?
 *
 * Usage: setaffinity_hotplug [-d SECONDS] [-t THREADS] [-c CPU] [-o CPU]
 *
 * A minimal reproducer for the race docs/stress.md describes: every worker
 * thread moves itself back and forth between CPU 0 and the mask {CPU, OTHER}
 * (default {1, 2}) while a hotplug thread takes CPU offline and brings it
 * back as fast as the kernel lets it.  sched_setaffinity() picks a
 * destination among the active CPUs of the new mask, then has the stopper
 * of the caller's CPU move the caller there; when the destination is
 * deactivated in between, a kernel without the fix returns 0 and leaves
 * the caller on CPU 0.
 *
 * After each successful sched_setaffinity(mask) the worker asks the kernel
 * where it runs (the getcpu system call, not glibc's rseq copy).  A CPU
 * outside the mask while the mask still has an active CPU
 * (sched_getaffinity() returns the mask ANDed with the active CPUs) is a
 * "stranded" event; the worker then keeps spinning for up to 20 ms and
 * records how long it stayed there.
 *
 * Needs root (CPU hotplug) and CPUs 0, CPU and OTHER online and hotpluggable
 * (CPU 0 is never taken offline).  Output: human-readable lines, then one
 * line "RESULT {json}".  Exit: 0 no stranded event, 2 stranded events (or
 * no hotplug cycle), 1 usage/system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS	64
#define MAX_REPORTS	10
#define LINGER_NS	20000000ull	/* how long a stranded worker watches */

static uint64_t deadline_ns;
static int hot_cpu = 1, other_cpu = 2;
static unsigned long hotplug_cycles, hotplug_errors;
static int reports;

struct worker {
	pthread_t thread;
	unsigned long moves, stranded, errors;
	uint64_t max_stranded_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int kernel_cpu(void)
{
	unsigned int cpu;

	if (syscall(SYS_getcpu, &cpu, NULL, NULL))
		return -1;
	return cpu;
}

static int set_online(int cpu, int on)
{
	char path[64];
	int fd, ok;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, on ? "1" : "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

static void *hotplug_fn(void *arg)
{
	(void)arg;
	while (now_ns() < deadline_ns) {
		if (set_online(hot_cpu, 0) || set_online(hot_cpu, 1))
			hotplug_errors++;
		else
			hotplug_cycles++;
	}
	set_online(hot_cpu, 1);
	return NULL;
}

/* After sched_setaffinity(@mask) returned 0: are we running inside it? */
static void check(struct worker *w, const cpu_set_t *mask)
{
	cpu_set_t active;
	uint64_t t0, t;
	int cpu = kernel_cpu(), first = cpu;

	if (cpu < 0 || CPU_ISSET(cpu, mask))
		return;
	/* The mask ANDed with the active CPUs: empty means hotplug broke it. */
	if (sched_getaffinity(0, sizeof(active), &active) || CPU_COUNT(&active) == 0)
		return;
	w->stranded++;
	t0 = now_ns();
	do {
		t = now_ns();
		cpu = kernel_cpu();
	} while (cpu >= 0 && !CPU_ISSET(cpu, mask) && t - t0 < LINGER_NS);
	if (t - t0 > w->max_stranded_ns)
		w->max_stranded_ns = t - t0;
	if (__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED) < MAX_REPORTS)
		printf("STRANDED tid %d on cpu %d after setaffinity to {%d,%d}: "
		       "%.3f ms until it left (limit %.0f ms)\n", gettid(), first,
		       hot_cpu, other_cpu, (t - t0) / 1e6, LINGER_NS / 1e6);
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	cpu_set_t home, away;

	CPU_ZERO(&home);
	CPU_SET(0, &home);
	CPU_ZERO(&away);
	CPU_SET(hot_cpu, &away);
	CPU_SET(other_cpu, &away);
	while (now_ns() < deadline_ns) {
		if (sched_setaffinity(0, sizeof(home), &home)) {
			w->errors++;
			continue;
		}
		if (sched_setaffinity(0, sizeof(away), &away)) {
			w->errors++;	/* both CPUs of the mask inactive: EINVAL */
			continue;
		}
		w->moves++;
		check(w, &away);
	}
	return NULL;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-d SECONDS] [-t THREADS] [-c CPU] [-o CPU]\n"
		"  -d SECONDS  run time (default 10)\n"
		"  -t THREADS  worker threads, 1 to %d (default 2)\n"
		"  -c CPU      the CPU taken offline and back (default 1, not 0)\n"
		"  -o CPU      the other CPU of the workers' mask (default 2, not 0)\n",
		prog, MAX_THREADS);
	exit(1);
}

static long arg(const char *s, long lo, long hi, const char *prog)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		usage(prog);
	return v;
}

int main(int argc, char **argv)
{
	struct worker w[MAX_THREADS] = {};
	unsigned long moves = 0, stranded = 0, errors = 0;
	uint64_t max_ns = 0;
	int opt, i, nthreads = 2, seconds = 10, err;
	pthread_t hp;

	while ((opt = getopt(argc, argv, "d:t:c:o:")) != -1) {
		switch (opt) {
		case 'd':
			seconds = arg(optarg, 1, 86400, argv[0]);
			break;
		case 't':
			nthreads = arg(optarg, 1, MAX_THREADS, argv[0]);
			break;
		case 'c':
			hot_cpu = arg(optarg, 1, CPU_SETSIZE - 1, argv[0]);
			break;
		case 'o':
			other_cpu = arg(optarg, 1, CPU_SETSIZE - 1, argv[0]);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc || hot_cpu == other_cpu)
		usage(argv[0]);

	printf("setaffinity_hotplug: %d threads between cpu 0 and {%d,%d}, cpu %d "
	       "offline/online, %d s\n", nthreads, hot_cpu, other_cpu, hot_cpu, seconds);
	deadline_ns = now_ns() + (uint64_t)seconds * 1000000000ull;
	err = pthread_create(&hp, NULL, hotplug_fn, NULL);
	for (i = 0; !err && i < nthreads; i++)
		err = pthread_create(&w[i].thread, NULL, worker_fn, &w[i]);
	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		return 1;
	}
	pthread_join(hp, NULL);
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
		moves += w[i].moves;
		stranded += w[i].stranded;
		errors += w[i].errors;
		if (w[i].max_stranded_ns > max_ns)
			max_ns = w[i].max_stranded_ns;
	}
	printf("moves %lu, stranded %lu (longest %.3f ms), setaffinity errors %lu, "
	       "hotplug cycles %lu (errors %lu)\n", moves, stranded, max_ns / 1e6, errors,
	       hotplug_cycles, hotplug_errors);
	printf("RESULT {\"threads\": %d, \"seconds\": %d, \"moves\": %lu, \"stranded\": %lu,"
	       " \"longest_stranded_ms\": %.3f, \"setaffinity_errors\": %lu,"
	       " \"hotplug_cycles\": %lu, \"hotplug_errors\": %lu}\n", nthreads, seconds, moves,
	       stranded, max_ns / 1e6, errors, hotplug_cycles, hotplug_errors);
	return stranded || !hotplug_cycles ? 2 : 0;
}
