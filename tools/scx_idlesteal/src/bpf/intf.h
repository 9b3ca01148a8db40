/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What scx_idlesteal's BPF side (main.bpf.c) and its loader share: the
 * table sizes, the counters' indexes and the per-CPU state the loader
 * reads at exit.  bindgen turns it into Rust (build.rs: src/bpf_intf.rs),
 * so the two sides cannot disagree on a size, an index or a layout.
 */
#ifndef __IDLESTEAL_INTF_H
#define __IDLESTEAL_INTF_H

#ifndef __VMLINUX_H__
typedef unsigned long long u64;
#endif

#define MAX_CPUS		8192	/* NR_CPUS of CONFIG_MAXSMP */
#define MAX_LLCS		256
#define MAX_LLC_CPUS		256
#define MAX_SIBLINGS		8

/* The counters (the map `stats`, per CPU); the loader names each one. */
enum stat_idx {
	IDLESTEAL_STAT_STEAL,		/* tasks stolen */
	IDLESTEAL_STAT_FAILED,		/* searches that took nothing */
	IDLESTEAL_STAT_SEARCH_NS,		/* time spent in the timed searches */
	IDLESTEAL_STAT_GATED,		/* searches skipped by the cost gate */
	IDLESTEAL_STAT_KICK,		/* idle CPUs kicked to steal */
	IDLESTEAL_STAT_LOCAL,		/* wakeups placed on an idle CPU */
	IDLESTEAL_STAT_QUEUED,		/* tasks queued on a CPU's own queue */
	IDLESTEAL_STAT_REMOTE_LLC,	/* stolen from another LLC of the node */
	IDLESTEAL_STAT_FALLBACK,	/* queued in the fallback queue: own CPU not allowed */
	IDLESTEAL_STAT_SYNC_QUEUED,	/* sync wakees queued behind the waker's waiters */
	IDLESTEAL_STAT_RECHECK,		/* own tasks found after a failed steal */
	IDLESTEAL_STAT_IDLE_KICK,	/* CPUs that went idle with their queue not empty */
	IDLESTEAL_STAT_PULL,		/* tasks pulled at a slice end (no CPU idle) */
	IDLESTEAL_STAT_FALLBACK_RUN,	/* tasks taken from the fallback queue */
	IDLESTEAL_STAT_MIGDIS,		/* migration-disabled tasks enqueued */
	IDLESTEAL_STAT_REMOTE_IDLE,	/* sent to an idle CPU of another LLC, none in its own */
	IDLESTEAL_STAT_YIELD_KEEP,	/* sched_yield() with nothing waiting: slice kept */
	IDLESTEAL_STAT_YIELD_GIVE,	/* sched_yield() to a waiting task: slice ended */
	IDLESTEAL_STAT_HOTPLUG,		/* CPUs that went online or offline */
	IDLESTEAL_STAT_KEPT,		/* slice ends where the task, behind in vtime, kept its CPU */
	IDLESTEAL_STAT_PULL_LLC,	/* tasks pulled at a slice end from another LLC */
	IDLESTEAL_STAT_STARVED,		/* tasks run out of vtime order after starve_ns() */
	IDLESTEAL_STAT_PREEMPT,		/* wakeups that preempted a task further ahead in vtime */
	IDLESTEAL_STAT_SHORT,		/* slices cut short for the tasks waiting for the CPU */
	IDLESTEAL_STAT_KICK_CORE,	/* arrival kicks that found a fully idle core */
	IDLESTEAL_STAT_NONE_IDLE,	/* wakees queued without a second idle search */
	IDLESTEAL_STAT_WAKER_CPU,	/* sync wakees, none idle, placed on the waker's CPU */
	IDLESTEAL_STAT_TIMED,		/* searches timed (1 in STEAL_TIME_EVERY) */
	IDLESTEAL_STAT_WAKE_BOUNDED,	/* wakeups queued at the bound behind the queue's head */
	IDLESTEAL_STAT_OFFLINE_IDLE,	/* idle claims that got an offline CPU, passed over */
	IDLESTEAL_STAT_REMOTE_NODE,	/* sent to an idle CPU of another node, none in its own */
	IDLESTEAL_NR_STATS,
};

/* Per CPU (the map `cpu_ctxs`). */
struct cpu_ctx {
	u64 idle_at;		/* when the CPU went idle, 0 if busy */
	u64 avg_idle;		/* ns, running average */
	u64 avg_cost;		/* ns, running average of a search */
	u64 next_decay;		/* ns: halve avg_cost when gated past this */
	u64 kicked;		/* kicked to steal: the next search is not gated */
	u64 searches;		/* searches made (steal_timed()) */
	u64 next_starve_check;	/* ns: when to look for a starved task next */
	/*
	 * The task of ours running here (ops.running() to ops.stopping()), for
	 * wakeup preemption: its vtime when it started, when it started
	 * (0: none of ours runs), its weight.  A task kept running at a slice
	 * end is not started again, so its vtime now is estimated from the
	 * time since it started (curr_vtime_now()).  Other CPUs read the three
	 * without a lock or barrier while this CPU may be rewriting them (it
	 * clears curr_at first and sets it last): a reader can pair one task's
	 * curr_at with the next one's vtime or weight.  That only moves one
	 * estimate of preempt_victim(), which then preempts another CPU or
	 * none; the choice is a heuristic, no invariant depends on it.
	 */
	u64 curr_vtime;
	u64 curr_at;
	u64 curr_weight;
	/*
	 * The CPU's utilization for cpufreq (update_cpuperf()): the time its
	 * tasks of ours ran (busy_ns, counted from run_at at each stop and
	 * tick), and over the current window (from perf_at, busy_ns then
	 * perf_busy) the running average perf_lvl, the target last set
	 * (SCX_CPUPERF_ONE, 1024: full performance).
	 */
	u64 run_at;
	u64 busy_ns;
	u64 perf_at;
	u64 perf_busy;
	u64 perf_lvl;
};

#endif /* __IDLESTEAL_INTF_H */
