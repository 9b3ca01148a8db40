/*
 * cpuset_partition_hotplug - does CPU hotplug leave a cgroup v2 cpuset
 * partition and the top cpuset holding the same CPU?
 *
 * Usage: cpuset_partition_hotplug [-a CPU] [-b CPU] [-n ROUNDS]
 *
 * A minimal reproducer for the mainline cpuset warning of docs/stress.md
 * ("WARNING: kernel/cgroup/cpuset.c:888 at rebuild_sched_domains_locked",
 * Linux 7.2): one round is
 *
 *   1. cgroup P with cpuset.cpus "A,B", cpuset.cpus.partition "root"
 *      (valid), one task in it (a populated partition);
 *   2. CPU A offline, then CPU B offline: P has no CPU left and has a task,
 *      so hotplug makes it "root invalid"; its CPUs go back to the top
 *      cpuset (subpartitions_cpus is emptied of them);
 *   3. CPU A online: hotplug makes P valid again and takes A from the top
 *      cpuset (only the *active* CPUs of P's exclusive CPUs are added to
 *      subpartitions_cpus: update_parent_effective_cpumask(), partcmd_update,
 *      "deleting = xcpus & parent->effective_cpus");
 *   4. CPU B online: cpuset_handle_hotplug() gives B to the top cpuset
 *      (active CPUs minus subpartitions_cpus, which lacks B), and
 *      cpuset_hotplug_update_tasks() gives B to P as well (P's effective
 *      CPUs are its exclusive CPUs that are active): both hold B, and
 *      generate_sched_domains() warns about overlapping partition roots.
 *
 * After step 4 the program reads cpuset.cpus.effective of the top cgroup
 * and of P: with P a valid "root", a CPU in both is an overlap (the state
 * the warning is about, visible from user space; the warning itself is
 * WARN_ON_ONCE, the overlap is checked every round).  Then P goes back to
 * "member" and "root" (a fresh partition) for the next round.
 *
 * Defaults: A and B are the two highest CPUs.  Needs root, cgroup v2 with
 * the cpuset controller (mounted here at /sys/fs/cgroup if it is not), A
 * and B hotpluggable and not CPU 0.  Output: a STATE line per step, an
 * OVERLAP line per round that shows one, then "RESULT {json}".  Exit: 0
 * no overlap, 2 overlaps seen, 1 usage/system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define CG	"/sys/fs/cgroup"
#define P	CG "/cpuset_partition_hotplug"
#define MAXCPU	1024

static int errors;

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

static void read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

static void must(const char *path, const char *val)
{
	int e = write_file(path, val);

	if (e) {
		fprintf(stderr, "write %s > %s: %s\n", val, path, strerror(-e));
		errors++;
	}
}

static void online(int cpu, int on)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	must(path, on ? "1" : "0");
}

/* "0-3,6" -> set[cpu] = 1 */
static void parse_list(const char *s, char *set)
{
	memset(set, 0, MAXCPU);
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c < MAXCPU; c++)
			if (c >= 0)
				set[c] = 1;
		s = *end == ',' ? end + 1 : end;
	}
}

/* Print the state; return the number of CPUs in both the top cpuset's and
 * P's effective CPUs while P is a valid partition root. */
static int state(const char *step)
{
	char top[256], pe[256], part[256], xe[256];
	char a[MAXCPU], b[MAXCPU];
	int n = 0;

	read_file(CG "/cpuset.cpus.effective", top, sizeof(top));
	read_file(P "/cpuset.cpus.effective", pe, sizeof(pe));
	read_file(P "/cpuset.cpus.partition", part, sizeof(part));
	read_file(P "/cpuset.cpus.exclusive.effective", xe, sizeof(xe));
	printf("STATE %-10s top.effective=%s P.effective=%s P.exclusive.effective=%s "
	       "P.partition='%s'\n", step, top, pe, xe, part);
	if (strcmp(part, "root"))
		return 0;
	parse_list(top, a);
	parse_list(pe, b);
	for (int c = 0; c < MAXCPU; c++)
		n += a[c] && b[c];
	return n;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-a CPU] [-b CPU] [-n ROUNDS]\n", argv0);
	exit(1);
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int a = ncpu - 2, b = ncpu - 1, rounds = 1, overlaps = 0, opt;
	char cpus[64], buf[256];
	pid_t child;

	while ((opt = getopt(argc, argv, "a:b:n:")) != -1) {
		switch (opt) {
		case 'a': a = atoi(optarg); break;
		case 'b': b = atoi(optarg); break;
		case 'n': rounds = atoi(optarg); break;
		default: usage(argv[0]);
		}
	}
	if (a < 1 || b < 1 || a == b || a >= ncpu || b >= ncpu || rounds < 1)
		usage(argv[0]);

	if (access(CG "/cgroup.controllers", F_OK) &&
	    mount("none", CG, "cgroup2", 0, NULL)) {
		perror("mount cgroup2");
		return 1;
	}
	if (write_file(CG "/cgroup.subtree_control", "+cpuset")) {
		perror("enable cpuset");
		return 1;
	}
	online(a, 1);
	online(b, 1);
	if (mkdir(P, 0755) && errno != EEXIST) {
		perror("mkdir " P);
		return 1;
	}
	snprintf(cpus, sizeof(cpus), "%d,%d", a, b);
	must(P "/cpuset.cpus", cpus);

	/* one task in P, so that P with no CPU left is an error (invalid) */
	child = fork();
	if (child == 0) {
		snprintf(buf, sizeof(buf), "%d", getpid());
		if (write_file(P "/cgroup.procs", buf))
			_exit(1);
		for (;;)
			pause();
	}
	if (child < 0) {
		perror("fork");
		return 1;
	}
	usleep(200000);

	for (int r = 1; r <= rounds && !errors; r++) {
		int n;

		must(P "/cpuset.cpus.partition", "root");
		read_file(P "/cpuset.cpus.partition", buf, sizeof(buf));
		if (strcmp(buf, "root")) {
			fprintf(stderr, "round %d: partition is '%s', not 'root'\n", r, buf);
			errors++;
			break;
		}
		printf("ROUND %d: partition %s root, a task in it\n", r, cpus);
		state("root");
		online(a, 0);
		state("A-offline");
		online(b, 0);
		state("B-offline");
		online(a, 1);
		state("A-online");
		online(b, 1);
		n = state("B-online");
		if (n) {
			overlaps++;
			read_file(CG "/cpuset.cpus.effective", buf, sizeof(buf));
			printf("OVERLAP round %d: %d CPU(s) in both the top cpuset (%s) "
			       "and partition root %s\n", r, n, buf, P);
		}
		must(P "/cpuset.cpus.partition", "member");
	}

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	write_file(P "/cpuset.cpus.partition", "member");
	online(a, 1);
	online(b, 1);
	if (rmdir(P))
		perror("rmdir " P);
	printf("RESULT {\"cpus\": \"%s\", \"rounds\": %d, \"overlaps\": %d, \"errors\": %d}\n",
	       cpus, rounds, overlaps, errors);
	if (errors)
		return 1;
	return overlaps ? 2 : 0;
}
