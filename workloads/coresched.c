/*
 * coresched - run a command under a core-scheduling cookie of its own
 *
 * Usage: coresched CMD [ARG...]
 *        coresched -g PID
 *
 * The first form gives this process's thread group a new cookie
 * (prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE), Documentation/admin-guide/
 * hw-vuln/core-scheduling.rst) and execs CMD; the tasks CMD forks inherit
 * it, so tasks started under one coresched share a cookie and tasks of two
 * coresched do not.  The second prints PID's cookie (0: none) as
 * "cookie PID 0x...".
 *
 * Exit: CMD's (it replaces this process), 0 after -g, 1 usage or system
 * error (ENODEV/EINVAL from prctl: the kernel has no CONFIG_SCHED_CORE or
 * the CPUs have no SMT).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE			62
#define PR_SCHED_CORE_GET		0
#define PR_SCHED_CORE_CREATE		1
#define PR_SCHED_CORE_SCOPE_THREAD_GROUP 1
#endif

static int usage(void)
{
	fprintf(stderr, "usage: coresched CMD [ARG...] | coresched -g PID\n");
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long cookie = 0;
	char *end;
	long pid;

	if (argc < 2)
		return usage();

	if (!strcmp(argv[1], "-g")) {
		if (argc != 3)
			return usage();
		errno = 0;
		pid = strtol(argv[2], &end, 10);
		if (errno || *end || end == argv[2] || pid <= 0) {
			fprintf(stderr, "coresched: bad PID '%s'\n", argv[2]);
			return 1;
		}
		if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, pid, 0,
			  (unsigned long)&cookie)) {
			fprintf(stderr, "coresched: get PID %ld: %s\n", pid,
				strerror(errno));
			return 1;
		}
		printf("cookie %ld 0x%lx\n", pid, cookie);
		return 0;
	}
	if (argv[1][0] == '-')
		return usage();

	if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0,
		  PR_SCHED_CORE_SCOPE_THREAD_GROUP, 0)) {
		fprintf(stderr, "coresched: create a cookie: %s\n", strerror(errno));
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "coresched: %s: %s\n", argv[1], strerror(errno));
	return 1;
}
