// SPDX-License-Identifier: GPL-2.0
/*
 * setaffinity_race - the short reproducer sent with the sched_setaffinity()
 * vs CPU hotplug fix (patches/fixes/): does sched_setaffinity() return 0
 * with its caller still on a CPU outside the new mask while a CPU of that
 * mask goes offline?
 *
 *   gcc -O2 -Wall -pthread -o setaffinity_race setaffinity_race.c
 *   ./setaffinity_race [SECONDS [THREADS]]     (default 60 s, 6 threads)
 *
 * Needs root and CPUs 0, 1 and 2; CPU 1 is taken offline and back in a
 * loop.  Each thread pins itself to CPU 0, then asks for {1,2}: the kernel
 * picks CPU 1 or 2 and has CPU 0's stopper move the thread there.  CPU 2
 * stays online, so a call that returns 0 must leave the thread off CPU 0.
 * Exit status: 0 none left on CPU 0, 1 some were, 2 error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static volatile int done;
static unsigned long calls, stranded;

static int set_cpus(int a, int b)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a, &set);
	if (b >= 0)
		CPU_SET(b, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void *mover(void *unused)
{
	unsigned int cpu;

	(void)unused;

	while (!done) {
		if (set_cpus(0, -1) || set_cpus(1, 2))
			continue;
		__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
		/* the system call, not glibc's rseq-cached sched_getcpu() */
		if (!syscall(SYS_getcpu, &cpu, NULL, NULL) && cpu == 0)
			__atomic_fetch_add(&stranded, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int cpu1_online(int on)
{
	int fd = open("/sys/devices/system/cpu/cpu1/online", O_WRONLY);
	int ret = -1;

	if (fd >= 0) {
		ret = write(fd, on ? "1" : "0", 1) == 1 ? 0 : -1;
		close(fd);
	}
	return ret;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 60;
	int threads = argc > 2 ? atoi(argv[2]) : 6;
	unsigned long cycles = 0, busy = 0;
	pthread_t tid[MAX_THREADS];
	time_t end;
	int i, err = 0;

	if (argc > 3 || seconds < 1 || threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "usage: %s [SECONDS (>= 1) [THREADS (1-%d)]]\n",
			argv[0], MAX_THREADS);
		return 2;
	}
	for (i = 0; i < threads; i++) {
		if (pthread_create(&tid[i], NULL, mover, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			return 2;
		}
	}
	end = time(NULL) + seconds;
	while (!err && time(NULL) < end) {
		if (cpu1_online(0) || cpu1_online(1)) {
			if (errno != EBUSY) {
				perror("/sys/devices/system/cpu/cpu1/online");
				err = 1;
			}
			busy++;
			continue;
		}
		cycles++;
	}
	done = 1;
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	cpu1_online(1);
	printf("%lu hotplug cycles (%lu EBUSY), %lu sched_setaffinity() calls, "
	       "%lu returned with the caller still on CPU 0\n", cycles, busy, calls, stranded);
	if (err || !cycles)
		return 2;
	return stranded ? 1 : 0;
}
