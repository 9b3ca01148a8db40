/*
 * affinity_churn - change the CPU masks of other running tasks, fast.
 *
 * Usage: affinity_churn [-d SECONDS] [-t THREADS] [-s SEED] COMM
 *
 * Every task (thread) whose comm is COMM gets a new random mask, again and
 * again, for SECONDS (default 10), from THREADS threads (default 2): each
 * CPU the program may use is in the mask with probability 1/2 (never an
 * empty mask).  The tasks are found in /proc, rescanned every 100 ms, so
 * tasks that come and go (hackbench runs in a loop) are covered.
 *
 * This is the affinity churn a stealing scheduler must survive: the masks
 * change while the tasks wait in queues, between a scheduler choosing one
 * to steal and moving it.  affinity_check (workloads/) checks that no task
 * runs outside its mask; this program only applies the changes.
 *
 * Output: one line "RESULT {json}": changes applied, distinct tasks seen,
 * failures other than a task that exited (ESRCH).
 * Exit: 0, or 1 on a usage error or a failure of sched_setaffinity().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_TASKS	4096
#define MAX_THREADS	64
#define RESCAN_NS	100000000ull

static const char *comm;
static cpu_set_t allowed;
static int allowed_cpus[CPU_SETSIZE], nallowed;
static uint64_t deadline_ns;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t tasks[MAX_TASKS];
static int ntasks;
static uint64_t rescan_at;
static uint64_t changes, failures, seen;
static int last_errno;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int has_comm(const char *path)
{
	char buf[64];
	FILE *f = fopen(path, "r");
	int ok = 0;

	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		ok = strcmp(buf, comm) == 0;
	}
	fclose(f);
	return ok;
}

/* Fill tasks[] with the threads named comm; call with lock held. */
static void scan(void)
{
	static pid_t known[MAX_TASKS];
	static int nknown;
	char path[600];
	struct dirent *pe, *te;
	DIR *proc, *task;

	ntasks = 0;
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((pe = readdir(proc)) && ntasks < MAX_TASKS) {
		if (pe->d_name[0] < '0' || pe->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", pe->d_name);
		task = opendir(path);
		if (!task)
			continue;
		while ((te = readdir(task)) && ntasks < MAX_TASKS) {
			pid_t tid;
			int i;

			if (te->d_name[0] < '0' || te->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/comm", pe->d_name,
				 te->d_name);
			if (!has_comm(path))
				continue;
			tid = atoi(te->d_name);
			tasks[ntasks++] = tid;
			for (i = 0; i < nknown && known[i] != tid; i++)
				;
			if (i == nknown) {
				seen++;
				if (nknown < MAX_TASKS)
					known[nknown++] = tid;
			}
		}
		closedir(task);
	}
	closedir(proc);
}

static void random_mask(cpu_set_t *set, unsigned int *seed)
{
	CPU_ZERO(set);
	for (int i = 0; i < nallowed; i++) {
		if (rand_r(seed) & 1)
			CPU_SET(allowed_cpus[i], set);
	}
	if (CPU_COUNT(set) == 0)
		CPU_SET(allowed_cpus[rand_r(seed) % nallowed], set);
}

static void *churn(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	pid_t mine[MAX_TASKS];
	uint64_t now, done = 0, bad = 0;
	cpu_set_t set;
	int n = 0, err = 0;

	while ((now = now_ns()) < deadline_ns) {
		pthread_mutex_lock(&lock);
		if (now >= rescan_at) {
			scan();
			rescan_at = now + RESCAN_NS;
		}
		n = ntasks;
		memcpy(mine, tasks, n * sizeof(pid_t));
		pthread_mutex_unlock(&lock);
		if (!n) {
			usleep(1000);
			continue;
		}
		for (int i = 0; i < n; i++) {
			random_mask(&set, &seed);
			if (sched_setaffinity(mine[i], sizeof(set), &set) == 0) {
				done++;
			} else if (errno != ESRCH) {
				bad++;
				err = errno;
			}
		}
	}
	pthread_mutex_lock(&lock);
	changes += done;
	failures += bad;
	if (err)
		last_errno = err;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	int opt, nthreads = 2;
	unsigned int seed = time(NULL);
	long seconds = 10;

	while ((opt = getopt(argc, argv, "d:t:s:")) != -1) {
		switch (opt) {
		case 'd':
			seconds = atol(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || seconds < 1 || nthreads < 1 || nthreads > MAX_THREADS)
		goto usage;
	comm = argv[optind];
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("affinity_churn: sched_getaffinity");
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &allowed))
			allowed_cpus[nallowed++] = c;
	}
	deadline_ns = now_ns() + seconds * 1000000000ull;
	for (int i = 0; i < nthreads; i++) {
		if (pthread_create(&th[i], NULL, churn, (void *)(uintptr_t)(seed + i))) {
			fprintf(stderr, "affinity_churn: pthread_create failed\n");
			return 1;
		}
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("RESULT {\"comm\": \"%s\", \"seconds\": %ld, \"threads\": %d, "
	       "\"changes\": %llu, \"tasks_seen\": %llu, \"failures\": %llu, "
	       "\"last_error\": \"%s\"}\n", comm, seconds, nthreads,
	       (unsigned long long)changes, (unsigned long long)seen,
	       (unsigned long long)failures, last_errno ? strerror(last_errno) : "");
	return failures ? 1 : 0;
usage:
	fprintf(stderr, "usage: affinity_churn [-d SECONDS] [-t THREADS] [-s SEED] COMM\n");
	return 1;
}
