/*
 * rtrun - run a command as a SCHED_FIFO task
 *
 * Usage: rtrun PRIO COMMAND [ARG...]
 *
 * Sets SCHED_FIFO at PRIO (1-99) for itself and execs COMMAND, whose
 * children inherit the policy.  Busybox has no chrt; the guest's init runs
 * its hang report with this (idlesteal/guest/init.sh): a real-time task
 * runs even when the fair or sched_ext tasks are not being scheduled.
 * Exit: 1 usage or system error, else COMMAND's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sched_param sp = { 0 };
	char *end;
	long prio;

	if (argc < 3) {
		fprintf(stderr, "usage: rtrun PRIO COMMAND [ARG...]\n");
		return 1;
	}
	errno = 0;
	prio = strtol(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || prio < 1 || prio > 99) {
		fprintf(stderr, "rtrun: PRIO must be 1 to 99, not '%s'\n", argv[1]);
		return 1;
	}
	sp.sched_priority = (int)prio;
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "rtrun: sched_setscheduler(SCHED_FIFO, %ld): %s\n", prio,
			strerror(errno));
		return 1;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "rtrun: %s: %s\n", argv[2], strerror(errno));
	return 1;
}
