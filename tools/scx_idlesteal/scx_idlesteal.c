/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_idlesteal loader: reads the CPU topology from sysfs, loads
 * scx_idlesteal.bpf.c, prints its counters once a second and unloads on
 * SIGINT or SIGTERM, giving the tasks back to the fair class.
 *
 *   SIGUSR1  stop stealing (run-time A/B switch)
 *   SIGUSR2  steal again
 *
 * Built with the kernel's tools/sched_ext Makefile; see idlesteal/scx.py.
 */
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <scx/common.h>
#include "scx_idlesteal.bpf.skel.h"

/*
 * 7.x's scx/compat.h defines the ops flags (read from the kernel's BTF, 0
 * where it lacks one); 6.12's defines none.  The same reading here.
 */
#ifndef SCX_OPS_ENQ_MIGRATION_DISABLED
#define SCX_OPS_ENQ_MIGRATION_DISABLED						\
	__COMPAT_ENUM_OR_ZERO("scx_ops_flags", "SCX_OPS_ENQ_MIGRATION_DISABLED")
#endif

#define MAX_CPUS	512
#define MAX_LLCS	64
#define MAX_LLC_CPUS	256
#define MAX_SIBLINGS	8

enum stat_idx {
	IDLESTEAL_STAT_STEAL, IDLESTEAL_STAT_FAILED, IDLESTEAL_STAT_SEARCH_NS,
	IDLESTEAL_STAT_GATED, IDLESTEAL_STAT_KICK, IDLESTEAL_STAT_LOCAL,
	IDLESTEAL_STAT_QUEUED, IDLESTEAL_STAT_REMOTE_LLC, IDLESTEAL_STAT_FALLBACK,
	IDLESTEAL_STAT_SYNC_QUEUED, IDLESTEAL_STAT_RECHECK, IDLESTEAL_STAT_IDLE_KICK,
	IDLESTEAL_STAT_PULL, IDLESTEAL_STAT_FALLBACK_RUN, IDLESTEAL_STAT_MIGDIS,
	IDLESTEAL_STAT_REMOTE_IDLE, IDLESTEAL_STAT_YIELD_KEEP, IDLESTEAL_STAT_YIELD_GIVE,
	IDLESTEAL_STAT_HOTPLUG, IDLESTEAL_STAT_KEPT, IDLESTEAL_STAT_PULL_LLC, IDLESTEAL_STAT_STARVED,
	IDLESTEAL_STAT_PREEMPT, IDLESTEAL_STAT_SHORT,
	IDLESTEAL_NR_STATS,
};

static const char *const stat_names[IDLESTEAL_NR_STATS] = {
	"steals", "failed", "search_ns", "gated", "kicks", "local", "queued",
	"remote_llc", "fallback", "sync_queued", "recheck", "idle_kick",
	"pulls", "fallback_run", "migdis", "remote_idle", "yield_keep", "yield_give",
	"hotplug", "kept", "pull_llc", "starved", "preempt", "short",
};

static const char help_fmt[] =
"scx_idlesteal: per-CPU vtime queues, idle CPUs steal from overloaded CPUs\n"
"of their LLC (SMT siblings first), gated by idle time against search cost;\n"
"cgroups' cpu.weight applied (flat).\n"
"\n"
"Usage: %s [-s SLICE_US] [-l MIN_SLICE_US] [-f] [-p] [-t TIMEOUT_MS] [-n] [-o]\n"
"       [-k] [-m] [-v]\n"
"\n"
"  -s SLICE_US    time slice, 100 to 10000000 (default: SCX_SLICE_DFL, 20 ms)\n"
"  -l MIN_SLICE_US  the shortest slice when tasks wait for a CPU (the slice\n"
"                 is divided by 1 + the tasks waiting), and how far ahead in\n"
"                 vtime a running task must be for a waking task to preempt\n"
"                 it; 50 to 10000000, capped at SLICE_US (default 1000)\n"
"  -f             fixed slices: never shortened for waiting tasks\n"
"  -p             no wakeup preemption: a waking task with no idle CPU\n"
"                 waits for a running task's slice to end\n"
"  -t TIMEOUT_MS  sched_ext's watchdog ejects the scheduler when a runnable\n"
"                 task waits this long (default 5000, at most 30000)\n"
"  -n             also steal from the other LLCs of the node\n"
"  -o             start with stealing off (no steals, no pulls)\n"
"  -k             wake no idle CPU for a task queued behind another (no\n"
"                 arrival kick): it waits for a CPU of its LLC to go idle\n"
"  -m             have ops.enqueue() see migration-disabled tasks, as 6.12\n"
"                 does (SCX_OPS_ENQ_MIGRATION_DISABLED; a test switch)\n"
"  -v             print libbpf debug messages\n"
"  -h             this help\n"
"\n"
"SIGUSR1 turns stealing off, SIGUSR2 on; SIGINT/SIGTERM unload.  When\n"
"sched_ext ejects it, the reason and a debug dump follow \"EXIT:\".\n";

static bool verbose;

/* A whole number of microseconds in [@min, @max]: 0, else -1. */
static int parse_us(const char *s, __u64 min, __u64 max, __u64 *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}
static volatile sig_atomic_t exit_req;
static volatile sig_atomic_t steal_req = -1;

static int libbpf_print_fn(enum libbpf_print_level level, const char *format,
			   va_list args)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, format, args);
}

static void on_exit_signal(int sig)
{
	exit_req = 1;
}

static void on_steal_signal(int sig)
{
	steal_req = sig == SIGUSR2;
}

/* Parse a sysfs CPU list ("0-3,8") into @set; returns 0 or -1. */
static int parse_cpulist(const char *text, bool *set, int max)
{
	const char *s = text;

	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			return -1;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s)
				return -1;
		}
		for (long i = a; i <= b; i++) {
			if (i < 0 || i >= max)
				return -1;
			set[i] = true;
		}
		s = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int read_cpulist(const char *path, bool *set, int max)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	int ret = -1;

	memset(set, 0, sizeof(*set) * max);
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		ret = parse_cpulist(buf, set, max);
	fclose(f);
	return ret;
}

static int read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The CPUs sharing @cpu's last-level cache: the highest cache index. */
static int read_llc(int cpu, bool *set)
{
	char path[256];
	int best = -1, best_level = -1;

	for (int i = 0; i < 16; i++) {
		int level;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, i);
		level = read_int(path);
		if (level < 0)
			break;
		if (level > best_level) {
			best_level = level;
			best = i;
		}
	}
	if (best < 0) {
		/* No cache information: the package stands for the LLC. */
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/package_cpus_list", cpu);
	} else {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
			 cpu, best);
	}
	return read_cpulist(path, set, MAX_CPUS);
}

static int cpu_node(int cpu)
{
	char pattern[128];
	glob_t g;
	int node = 0;

	snprintf(pattern, sizeof(pattern), "/sys/devices/system/cpu/cpu%d/node*", cpu);
	if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0)
		node = atoi(strrchr(g.gl_pathv[0], 'e') + 1);
	globfree(&g);
	return node;
}

/* The scheduler's topology tables (scx_idlesteal.bpf.c), of the online CPUs. */
struct topology {
	__u32 nr_llcs;
	__u32 cpu_llc[MAX_CPUS];
	__u32 cpu_pos[MAX_CPUS];
	__u32 cpu_nr_siblings[MAX_CPUS];
	__u32 cpu_siblings[MAX_CPUS][MAX_SIBLINGS];
	__u32 llc_nr_cpus[MAX_LLCS];
	__u32 llc_cpus[MAX_LLCS][MAX_LLC_CPUS];
	__u32 llc_node[MAX_LLCS];
};

/*
 * Read the topology of the CPUs online in @online; -1 on failure, said on
 * stderr unless @quiet (a CPU going on- or offline may lack its cache
 * information for a moment: tried again 100 ms later).
 */
static int read_topology(struct topology *t, const bool *online, int nr_cpus, bool quiet)
{
	static bool llc[MAX_CPUS], smt[MAX_CPUS];
	int llc_first[MAX_LLCS];
	char path[256];

	memset(t, 0, sizeof(*t));
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		int first = -1, id, n = 0;

		/* Offline CPUs belong to no LLC: their marks are dropped. */
		t->cpu_llc[cpu] = MAX_LLCS;
		if (!online[cpu])
			continue;
		if (read_llc(cpu, llc)) {
			if (!quiet)
				fprintf(stderr, "scx_idlesteal: cannot read the LLC of CPU %d\n", cpu);
			return -1;
		}
		for (int i = 0; i < nr_cpus; i++) {
			if (llc[i] && online[i]) {
				first = i;
				break;
			}
		}
		if (first < 0)
			first = cpu;
		for (id = 0; id < (int)t->nr_llcs; id++) {
			if (llc_first[id] == first)
				break;
		}
		if (id == (int)t->nr_llcs) {
			if (t->nr_llcs == MAX_LLCS) {
				fprintf(stderr, "scx_idlesteal: more than %d LLCs\n", MAX_LLCS);
				return -1;
			}
			llc_first[t->nr_llcs++] = first;
			t->llc_node[id] = cpu_node(cpu);
		}
		n = t->llc_nr_cpus[id];
		if (n == MAX_LLC_CPUS) {
			fprintf(stderr, "scx_idlesteal: more than %d CPUs in an LLC\n",
				MAX_LLC_CPUS);
			return -1;
		}
		t->cpu_llc[cpu] = id;
		t->cpu_pos[cpu] = n;
		t->llc_cpus[id][n] = cpu;
		t->llc_nr_cpus[id] = n + 1;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
		n = 0;
		if (read_cpulist(path, smt, MAX_CPUS) == 0) {
			for (int i = 0; i < nr_cpus && n < MAX_SIBLINGS; i++) {
				if (i != cpu && smt[i] && online[i] && llc[i])
					t->cpu_siblings[cpu][n++] = i;
			}
		}
		t->cpu_nr_siblings[cpu] = n;
	}
	return 0;
}

/*
 * Write @t into the scheduler's tables: before the load, or while it runs
 * (CPU hotplug).  Its programs bound every index they read, so one that
 * reads during the copy, half old and half new, at worst looks for a task
 * in the wrong queue or misses one: a failed or skipped steal.
 */
static void install_topology(struct scx_idlesteal *skel, const struct topology *t)
{
#define INSTALL(field) memcpy((void *)skel->bss->field, t->field, sizeof(t->field))
	INSTALL(cpu_llc);
	INSTALL(cpu_pos);
	INSTALL(cpu_nr_siblings);
	INSTALL(cpu_siblings);
	INSTALL(llc_cpus);
	INSTALL(llc_node);
	INSTALL(llc_nr_cpus);
#undef INSTALL
	skel->bss->nr_llcs = t->nr_llcs;
}

static void print_topology(const char *tag, const struct topology *t, const char *online)
{
	printf("%s: %u LLCs:", tag, t->nr_llcs);
	for (__u32 id = 0; id < t->nr_llcs; id++)
		printf(" %u CPUs (node %u)", t->llc_nr_cpus[id], t->llc_node[id]);
	printf(", online %s", online);
	fflush(stdout);
}

/* The online CPU list as sysfs writes it ("0-7\n"), into @buf; 0 or -1. */
static int read_online(char *buf, size_t size)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int ret = -1;

	if (!f)
		return -1;
	if (fgets(buf, size, f))
		ret = 0;
	fclose(f);
	return ret;
}

/*
 * Read and install the topology of the CPUs online now if they are not
 * @last (then updated), or, with @again, if it differs from what was
 * installed: the cache information of the other CPUs of a CPU's LLC is
 * updated in steps around its hotplug, so the loader reads it once more a
 * second after a change.  @tag says when.  1: installed, 0: unchanged,
 * -1: failed (a CPU in the middle of going on- or offline; tried again).
 */
static int update_topology(struct scx_idlesteal *skel, int nr_cpus, char *last, size_t size,
			   const char *tag, bool again)
{
	static struct topology t, installed;
	static bool online[MAX_CPUS];
	char now[4096];

	if (read_online(now, sizeof(now)))
		return -1;
	if (!again && last[0] && !strcmp(now, last))
		return 0;
	memset(online, 0, sizeof(online));
	if (parse_cpulist(now, online, MAX_CPUS) ||
	    read_topology(&t, online, nr_cpus, !strcmp(tag, "hotplug")))
		return -1;
	if (last[0] && !strcmp(now, last) && !memcmp(&t, &installed, sizeof(t)))
		return 0;
	install_topology(skel, &t);
	installed = t;
	snprintf(last, size, "%s", now);
	print_topology(tag, &t, now);
	return 1;
}

static void read_stats(struct scx_idlesteal *skel, __u64 *totals)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u64 cnts[nr_cpus];

	memset(totals, 0, sizeof(*totals) * IDLESTEAL_NR_STATS);
	for (__u32 idx = 0; idx < IDLESTEAL_NR_STATS; idx++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &idx, cnts))
			continue;
		for (int cpu = 0; cpu < nr_cpus; cpu++)
			totals[idx] += cnts[cpu];
	}
}

/* The first fields of the BPF side's struct cpu_ctx (the map's value is longer). */
struct cpu_ctx {
	__u64 idle_at, avg_idle, avg_cost, next_decay, kicked;
};

/* Per CPU: the steal gate's averages (a search is made while avg_idle >= avg_cost). */
static void print_gates(struct scx_idlesteal *skel)
{
	int nr_cpus = libbpf_num_possible_cpus();
	/* A per-CPU map's values come 8-byte aligned, one after another. */
	size_t stride = (bpf_map__value_size(skel->maps.cpu_ctxs) + 7) & ~(size_t)7;
	char *buf;
	__u32 zero = 0;

	if (nr_cpus <= 0 || stride < sizeof(struct cpu_ctx))
		return;
	buf = calloc(nr_cpus, stride);
	if (!buf)
		return;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.cpu_ctxs), &zero, buf)) {
		free(buf);
		return;
	}
	printf("gate avg_idle_us/avg_cost_us:");
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		const struct cpu_ctx *c = (const struct cpu_ctx *)(buf + cpu * stride);

		printf(" %d=%llu/%llu", cpu, (unsigned long long)c->avg_idle / 1000,
		       (unsigned long long)c->avg_cost / 1000);
	}
	free(buf);
	printf("\n");
}

static void print_stats(const char *tag, struct scx_idlesteal *skel)
{
	__u64 totals[IDLESTEAL_NR_STATS];

	read_stats(skel, totals);
	printf("%s", tag);
	for (int i = 0; i < IDLESTEAL_NR_STATS; i++)
		printf(" %s=%llu", stat_names[i], (unsigned long long)totals[i]);
	printf(" steal=%s\n", skel->data->steal_enabled ? "on" : "off");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	bool start_off = false, nearest = false, enq_migdis = false, no_kick = false;
	bool fixed_slices = false, no_preempt = false;
	__u64 slice_us = 0, slice_min_us = 1000;
	long timeout_ms = 0;
	unsigned int watchdog_ms;
	static char online_last[4096];
	int nr_cpus, settle = 0;
	long tick;
	struct scx_idlesteal *skel;
	struct bpf_link *link;
	__u64 ecode;
	int opt;

	libbpf_set_print(libbpf_print_fn);
	signal(SIGINT, on_exit_signal);
	signal(SIGTERM, on_exit_signal);
	signal(SIGUSR1, on_steal_signal);
	signal(SIGUSR2, on_steal_signal);

	while ((opt = getopt(argc, argv, "s:l:fpt:nokmvh")) != -1) {
		switch (opt) {
		case 's':
			if (parse_us(optarg, 100, 10000000, &slice_us)) {
				fprintf(stderr, "scx_idlesteal: -s %s: 100 to 10000000 us\n", optarg);
				return 1;
			}
			break;
		case 'l':
			if (parse_us(optarg, 50, 10000000, &slice_min_us)) {
				fprintf(stderr, "scx_idlesteal: -l %s: 50 to 10000000 us\n", optarg);
				return 1;
			}
			break;
		case 'f':
			fixed_slices = true;
			break;
		case 'p':
			no_preempt = true;
			break;
		case 't':
			timeout_ms = strtol(optarg, NULL, 0);
			if (timeout_ms < 1 || timeout_ms > 30000) {
				fprintf(stderr, "scx_idlesteal: -t %s: 1 to 30000 ms\n", optarg);
				return 1;
			}
			break;
		case 'n':
			nearest = true;
			break;
		case 'o':
			start_off = true;
			break;
		case 'k':
			no_kick = true;
			break;
		case 'm':
			enq_migdis = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr, help_fmt, basename(argv[0]));
			return opt != 'h';
		}
	}

restart:
	skel = SCX_OPS_OPEN(idlesteal_ops, scx_idlesteal);
	if (slice_us)
		skel->rodata->slice_ns = slice_us * 1000;
	skel->rodata->slice_min_ns = slice_min_us * 1000;
	skel->rodata->scale_slices = !fixed_slices;
	skel->rodata->wake_preempt = !no_preempt;
	if (timeout_ms)
		skel->struct_ops.idlesteal_ops->timeout_ms = timeout_ms;
	/* The LLC tables change at run time (CPU hotplug): not rodata. */
	watchdog_ms = skel->struct_ops.idlesteal_ops->timeout_ms;
	if (enq_migdis) {
		/* 0 on 6.12, which passes them to ops.enqueue() anyway. */
		u64 flag = SCX_OPS_ENQ_MIGRATION_DISABLED;

		if (!flag)
			fprintf(stderr, "scx_idlesteal: -m: no SCX_OPS_ENQ_MIGRATION_DISABLED "
				"on this kernel (6.12 always passes migration-disabled "
				"tasks to ops.enqueue())\n");
		skel->struct_ops.idlesteal_ops->flags |= flag;
	}
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus > MAX_CPUS) {
		fprintf(stderr, "scx_idlesteal: %d possible CPUs, at most %d supported\n",
			nr_cpus, MAX_CPUS);
		return 1;
	}
	skel->rodata->nr_cpus = nr_cpus;
	online_last[0] = 0;
	if (update_topology(skel, nr_cpus, online_last, sizeof(online_last), "topology",
			    false) < 0) {
		fprintf(stderr, "scx_idlesteal: cannot read the topology\n");
		return 1;
	}
	skel->data->steal_enabled = !start_off;
	skel->bss->nearest_llc = nearest;
	skel->data->enqueue_kick = !no_kick;

	SCX_OPS_LOAD(skel, idlesteal_ops, scx_idlesteal, uei);
	link = SCX_OPS_ATTACH(skel, idlesteal_ops, scx_idlesteal);
	printf("scx_idlesteal: loaded, stealing %s%s%s%s, watchdog %u ms, "
	       "slices %s, wakeup preemption %s\n",
	       start_off ? "off" : "on", nearest ? ", nearest LLC of the node too" : "",
	       no_kick ? ", no arrival kick" : "",
	       enq_migdis ? ", enqueues migration-disabled tasks" : "", watchdog_ms,
	       fixed_slices ? "fixed" : "scaled", no_preempt ? "off" : "on");
	fflush(stdout);

	/*
	 * Every 100 ms: the switches, and the online CPUs (CPU hotplug: the
	 * scheduler stays loaded, the tables are rewritten); every second the
	 * counters.
	 */
	for (tick = 0; !exit_req && !UEI_EXITED(skel, uei); tick++) {
		if (steal_req >= 0) {
			skel->data->steal_enabled = steal_req;
			start_off = !steal_req;
			printf("scx_idlesteal: stealing %s\n", steal_req ? "on" : "off");
			steal_req = -1;
		}
		switch (update_topology(skel, nr_cpus, online_last, sizeof(online_last),
					"hotplug", settle == 1)) {
		case 1:
			settle = 10;	/* read it again in a second */
			break;
		case 0:
			if (settle > 0)
				settle--;
			break;
		}
		if (tick % 10 == 0)
			print_stats("stats", skel);
		usleep(100000);
	}

	print_stats("final", skel);
	print_gates(skel);
	bpf_link__destroy(link);
	ecode = UEI_REPORT(skel, uei);
	scx_idlesteal__destroy(skel);

	/* A CPU change between opening and attaching (ops.hotplug_seq). */
	if (UEI_ECODE_RESTART(ecode)) {
		printf("scx_idlesteal: restarting (topology changed)\n");
		goto restart;
	}
	return 0;
}
