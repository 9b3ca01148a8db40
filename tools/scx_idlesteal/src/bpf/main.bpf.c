/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_idlesteal - the idlesteal series' policy as a sched_ext scheduler
 *
 * Each CPU has a queue of its own (a DSQ whose id is the CPU number), in
 * weighted vtime order.  A waking task goes to an idle CPU if
 * scx_bpf_select_cpu_dfl() finds one, otherwise to the queue of the CPU it
 * last ran on, or, for a sync wakeup, of the waker's CPU when nothing waits
 * there; a sync wakeup placed on the waker's busy CPU goes ahead of that
 * CPU's queue only while the queue is empty (idlesteal_select_cpu()).
 * A CPU whose queue holds a waiting task is "overloaded" and is
 * marked in its LLC's overload mask: one 64-bit word per 8 positions in the
 * LLC, each word on a cache line of its own (the kernel series' sparsemask,
 * density 3), indexed by a CPU's position in its LLC.
 *
 * A CPU that finds its own queue empty, and has nothing else to keep running,
 * steals before it goes idle: overloaded SMT siblings first, then the other
 * overloaded CPUs of its LLC starting after its own position, at most
 * STEAL_MAX_VICTIMS victims per attempt.  From a victim it takes, of the
 * first STEAL_MAX_WALK tasks in its queue, the one allowed on this CPU that
 * has waited longest.  A search is skipped while this CPU's average idle
 * time is below the average cost of its searches (one in STEAL_TIME_EVERY
 * timed); a single sample counts for at most STEAL_COST_CLAMP_NS and the
 * estimate halves every second in which a gated CPU made no search, so one
 * slow search cannot switch stealing off.
 *
 * When a task is queued behind another on a busy CPU, an idle CPU of the
 * same LLC that may run it is kicked, so that it steals: sched_ext does not
 * call ops.dispatch() on an idle CPU by itself.  With none idle in the LLC,
 * the task goes to an idle CPU of another LLC of the node, and of another
 * node only when every LLC of its own has a task waiting.  This plays the
 * part of the kernel's nohz idle balancer for the series.  A CPU does not go idle with a
 * task in its own queue: it looks again after a failed steal (which dropped
 * its rq lock) and kicks itself from ops.update_idle().
 *
 * With no CPU idle nobody steals, so a CPU whose task used up its slice runs
 * the least in vtime of that task, the head of its own queue and the tasks
 * waiting in its LLC ("pulls"): the LLC's CPU-bound tasks run in one vtime
 * order, so N+1 of them on N CPUs share them and weights hold when every
 * CPU is busy.  With nothing to pull in its LLC it takes a task of another
 * LLC of its node that is 2 slices behind in vtime.  A task that has waited
 * a fifth of the watchdog's limit in a queue runs next whatever its vtime,
 * and a waking task is queued at most a slice (task_slice()) behind the
 * head of the queue it joins, however far the other CPUs moved the clock.
 *
 * Latency: a task's slice is the slice (20 ms by default) divided by one
 * plus the tasks waiting in its CPU's queue, no less than a minimum slice
 * (1 ms; task_slice()); a waking task that finds no idle CPU preempts the
 * task of its LLC furthest ahead of it in vtime, when that one is more than
 * the minimum slice ahead (a sleeper keeps up to a slice of credit), by
 * going to the head of that CPU's local DSQ with SCX_ENQ_PREEMPT
 * (preempt_victim()).  So a sleeper beside CPU-bound tasks waits for a
 * context switch, not for the end of their 20 ms slices.
 *
 * Cgroups (cpu.weight): a task of a cgroup below the root is charged as its
 * cgroup's share of it, so that a cgroup's runnable tasks together advance
 * in vtime as one task of the cgroup's hierarchical weight: its cpu.weight
 * at the root's level, below that its parent's hierarchical weight shared
 * among the parent's active children (the ones with runnable tasks) by
 * their cpu.weight, as scx_flatcg flattens the hierarchy.  A cgroup with
 * cpu.idle set weighs the least cpu.weight, 1.
 *
 * A task whose CPU is no longer in its mask goes to a shared fallback queue
 * in vtime order, which a CPU serves when its head has a lower vtime than
 * the CPU's own queue (or the task it is running); an idle CPU of the mask
 * is claimed and kicked.  A migration-disabled task (ops.enqueue() sees
 * them on 6.12, or with -m) stays in its CPU's queue and is never stolen.
 *
 * With -n (or nearest_llc), a CPU whose own LLC has nothing to give also
 * tries the other LLCs of its NUMA node.
 *
 * CPU hotplug does not restart the scheduler (ops.cpu_online/offline): a
 * CPU going offline stops being a steal victim, and the loader rewrites the
 * topology tables when the online CPUs change.
 *
 * The watchdog limit is 5 s (the loader's -t); ops.dump() and friends add
 * the switches, counters, overload masks and per-CPU gate state to the
 * debug dump sched_ext takes when it ejects the scheduler.
 *
 * The topology comes from the loader (scx_utils' view of sysfs); see src/topo.rs.
 */
#include <scx/common.bpf.h>
#include "intf.h"

/*
 * Built by scx_cargo with the scx repository's headers, whose compat.bpf.h
 * maps each kfunc's newer name to the one the running kernel has, down to
 * 6.12's, at load time: one object loads on 6.12, 7.2 and 7.3 (CO-RE).
 */

char _license[] SEC("license") = "GPL";

#define CHUNK_BITS		8	/* positions per mask word (density 3) */
#define MAX_CHUNKS		(MAX_LLC_CPUS / CHUNK_BITS)
#define STEAL_MAX_VICTIMS	4
#define STEAL_MAX_WALK		32	/* as SCHED_NR_MIGRATE_BREAK */
/* Idle picks that may pass over an offline CPU (pick_idle_online()). */
#define PICK_TRIES		4
#define STEAL_COST_CLAMP_NS	500000ULL
#define STEAL_COST_DECAY_NS	1000000000ULL
#define STEAL_TIME_EVERY	8	/* searches per timed one: see steal_timed() */
/* The window of a CPU's utilization for its cpufreq target (update_cpuperf()). */
#define PERF_WINDOW_NS		10000000ULL
/* A pull from another LLC wants a task this far behind in vtime (slices). */
#define PULL_LLC_MARGIN		2
/*
 * The task of a CPU's queue that has waited longest runs next, whatever
 * its vtime, if it has waited a fifth of the watchdog's limit (STARVE_DIV);
 * each CPU looks a tenth of that often (starve_ns(), run_starved()).
 */
#define STARVE_DIV		5
#define STARVE_CHECKS		10
/* The tasks of a queue the guard looks at, from its tail (run_starved()). */
#define STARVE_MAX_WALK		256
/* Tasks whose CPU left their mask (DSQs 0..nr_cpus-1 are the CPUs'). */
#define FALLBACK_DSQ		MAX_CPUS
/* The watchdog's limit on a runnable task's wait (the loader's -t). */
#define IDLESTEAL_TIMEOUT_MS	5000

/* Set by the loader before loading. */
const volatile u32 nr_cpus = 1;		/* possible CPUs */
const volatile u32 timeout_ms;		/* the watchdog's limit (-t); 0: IDLESTEAL_TIMEOUT_MS */
const volatile u64 slice_ns;		/* 0: SCX_SLICE_DFL */
/*
 * The latency story (the loader's -l, -f, -p).  slice_min_ns: the shortest
 * slice a task gets however many wait for its CPU (capped at the slice),
 * and how far ahead in vtime a running task must be of a waking one to be
 * preempted by it.  scale_slices: a task's slice is the slice divided by
 * one plus the tasks waiting in its CPU's queue, no less than slice_min_ns
 * (off: always the slice).  wake_preempt: a waking task that finds no idle
 * CPU preempts the task of its LLC furthest ahead of it in vtime.
 */
const volatile u64 slice_min_ns = 1000000ULL;
const volatile bool scale_slices = true;
const volatile bool wake_preempt = true;

/*
 * The topology of the online CPUs, written by the loader before loading and
 * again, in place, when the online CPUs change (CPU hotplug): not rodata.
 * Every read is bounded, so a program that runs while the loader rewrites
 * them sees at worst a mix of old and new: a steal that fails or is missed.
 */
volatile u32 nr_llcs;
volatile u32 cpu_llc[MAX_CPUS];			/* CPU -> LLC (MAX_LLCS: offline) */
volatile u32 cpu_pos[MAX_CPUS];			/* CPU -> position in its LLC */
volatile u32 cpu_nr_siblings[MAX_CPUS];
volatile u32 cpu_siblings[MAX_CPUS][MAX_SIBLINGS];	/* SMT, without self */
volatile u32 llc_nr_cpus[MAX_LLCS];
volatile u32 llc_cpus[MAX_LLCS][MAX_LLC_CPUS];	/* position -> CPU */
volatile u32 llc_node[MAX_LLCS];

/*
 * Where the queue walks (STEAL_MAX_WALK) start counting: always 0, and not
 * rodata, so the verifier does not know it.  A count from a constant 0 is
 * a known number in each pass of a walk, and deciding the walk's end from
 * it marks it precise: 6.12's verifier then follows each of the 32 passes
 * on its own and went over its 1,000,000 instructions in
 * idlesteal_dispatch (the steal walk inside the loops over victims).  As a
 * range, the passes fold into one.
 */
volatile u32 walk_zero;

/* Run-time switches, written by the loader (SIGUSR1/SIGUSR2, -n, -k). */
volatile bool steal_enabled = true;
volatile bool nearest_llc;
/*
 * Wake an idle CPU for a task queued behind another (-k clears it): the
 * arrival kick, a switch as the kernel's STEAL_KICK is.
 */
volatile bool enqueue_kick = true;
/*
 * The arrival kick and the move to another LLC look for a CPU of a fully
 * idle core first (-c clears it: any idle CPU, in LLC order).
 */
volatile bool kick_whole_core = true;

UEI_DEFINE(uei);

/* p->scx.runnable_at is in jiffies (libbpf reads the running kernel's Kconfig). */
extern const int CONFIG_HZ __kconfig __weak;

struct mask_chunk {
	u64 word;
	u64 pad[7];
};

/* LLC -> its overload mask, by position. */
static struct mask_chunk overload[MAX_LLCS][MAX_CHUNKS];


struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(u32));
	__uint(value_size, sizeof(u64));
	__uint(max_entries, IDLESTEAL_NR_STATS);
} stats SEC(".maps");


struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(u32));
	__uint(value_size, sizeof(struct cpu_ctx));
	__uint(max_entries, 1);
} cpu_ctxs SEC(".maps");

/*
 * Per task: its runtime when it last started running (ops.running()); its
 * cgroup (ops.init_task(), ops.cgroup_move()); the cgroup and weight it
 * added to that cgroup's runnable weight while runnable (ops.runnable(),
 * taken back by ops.quiescent()); whether it gave its turn up.
 */
struct task_ctx {
	u64 exec_at;
	u64 cgid;		/* its cgroup's id */
	u64 cg_added_id;	/* the cgroup cg_added went to */
	u32 cg_added;		/* weight added there, 0: none */
	s32 last_wakee;		/* pid of the task it last woke with SCX_WAKE_SYNC */
	bool in_cgroup;		/* a cgroup below the root */
	bool yielded;		/* sched_yield() to a waiting task: not kept running */
	bool out_of_order;	/* run out of vtime order: starved, or stolen past the head */
	bool sync_wakeup;	/* woken with SCX_WAKE_SYNC (ops.select_cpu()) */
	bool none_idle;		/* ops.select_cpu() found no idle CPU for it */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

/*
 * Per cgroup (cpu.weight; sched_ext's cgroup support, CONFIG_EXT_GROUP_SCHED),
 * by cgroup id: its weight, its parent, the weight of its runnable tasks,
 * and for the hierarchy its active count (its runnable tasks and its active
 * children: it is active while that is not 0) and the cpu.weight of its
 * active children.  A cgroup counts as active in its parent from its count's
 * 0 -> 1 to its 1 -> 0; the counts change by atomic +-1 (cgrp_activity()),
 * so concurrent wakeups and sleeps in one cgroup leave them right whatever
 * their order.  cgroup v2 puts no task in a cgroup that passes the cpu
 * controller on to its children (no internal processes; threaded cgroups
 * aside), so a cgroup has runnable tasks or active children, not both.
 */
struct cgrp_ctx {
	u32 weight;		/* cpu.weight */
	bool idle;		/* cpu.idle: weighs IDLE_CGROUP_WEIGHT instead */
	u64 parent_id;		/* 0: a child of the root */
	s64 runnable_weight;	/* its runnable tasks' weights */
	s64 nr_active;		/* its runnable tasks + its active children */
	s64 child_weight;	/* cpu.weight of its active children */
};

#define MAX_CGROUPS		4096
#define MAX_CGROUP_DEPTH	16	/* levels below the root followed up */
#define HWEIGHT_SHIFT		10	/* hierarchical weights in 1/1024ths */
/*
 * cpu.idle: CFS gives an idle group's entity SCHED_IDLE's weight, 3 against
 * nice 0's 1024 (0.29 in cpu.weight's units); here the least cpu.weight.
 */
#define IDLE_CGROUP_WEIGHT	1

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_CGROUPS);
	__type(key, u64);
	__type(value, struct cgrp_ctx);
} cgrp_ctxs SEC(".maps");

/* What @cgc weighs among its siblings: its cpu.weight, or cpu.idle's. */
static u32 cgrp_weight(const struct cgrp_ctx *cgc)
{
	if (cgc->idle)
		return IDLE_CGROUP_WEIGHT;
	return cgc->weight ?: 1;
}

static u64 vtime_now;

/*
 * Tasks put in the fallback queue less those taken from it (take_fallback()):
 * at least the number queued there, more after one left it another way
 * (the kernel dequeued it for a property change, or it exited).  Only a
 * gate: 0 means the fallback queue is empty, so ops.yield() need not look
 * (counting a DSQ is a hash table lookup by its id); fallback_maybe()
 * resets it when it finds the queue empty.
 */
static u64 nr_fallback;

/* SCX_SLICE_DFL is only known at load time (an enum read from the kernel). */
static u64 slice(void)
{
	return slice_ns ?: SCX_SLICE_DFL;
}

static void stat_add(u32 idx, u64 v)
{
	u64 *cnt = bpf_map_lookup_elem(&stats, &idx);

	if (cnt)
		*cnt += v;
}

/* The shortest slice, and the vtime lead that lets a waking task preempt. */
static u64 slice_min(void)
{
	u64 max = slice();

	return slice_min_ns && slice_min_ns < max ? slice_min_ns : max;
}

/*
 * The slice of a task that starts (or keeps) running on @cpu: the slice
 * divided by one plus the tasks waiting in @cpu's queue, at least
 * slice_min() (as scx_bpfland scales its slice by the tasks waiting): with
 * k tasks waiting, each waits for about one slice in all, not k slices.
 * The tasks that wake up later are the preemption's (idlesteal_enqueue()).
 */
static u64 task_slice(s32 cpu)
{
	u64 max = slice(), min = slice_min(), s;
	s32 waiting;

	if (!scale_slices)
		return max;
	waiting = scx_bpf_dsq_nr_queued(cpu);
	if (waiting <= 0)
		return max;
	s = max / (waiting + 1);
	return s > min ? s : min;
}

/*
 * The time stamps of the callbacks that run at every switch and wakeup (a
 * task starts running, a CPU dispatches or goes idle): this CPU's rq clock,
 * scx_bpf_now(), as the peers take them (bpf_ktime_get_ns() before 6.14:
 * compat.bpf.h).  bpf_ktime_get_ns() reads the
 * clocksource, which in an 8-vCPU TCG guest is the HPET (its TSCs are
 * found unsynchronized at boot), an emulated device whose reads QEMU
 * serializes, so that every switch would pay for a device read.  Two CPUs' rq clocks may
 * disagree a little; the one reader across CPUs (curr_vtime_now()) takes a
 * stamp ahead of its own as no time.  A search's cost is still timed by
 * bpf_ktime_get_ns(): within ops.dispatch() the rq clock stands still.
 * So one search in STEAL_TIME_EVERY is timed (steal_timed()).
 */
static u64 now_ns(void)
{
	return scx_bpf_now();
}

static struct cpu_ctx *this_cpu_ctx(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_ctxs, &zero);
}

/* Same update as the kernel's update_avg(): avg += (sample - avg) / 8. */
/* The time its current task of ours ran since @cctx->run_at, into busy_ns. */
static void count_busy(struct cpu_ctx *cctx, u64 now)
{
	if (cctx->run_at && now > cctx->run_at)
		cctx->busy_ns += now - cctx->run_at;
}

static void update_avg(u64 *avg, u64 sample)
{
	if (sample >= *avg)
		*avg += (sample - *avg) / 8;
	else
		*avg -= (*avg - sample) / 8;
}

/*
 * Table reads through MEMBER_VPTR(): the verifier must see every index
 * bounded, and the compiler may otherwise index with a copy of a value
 * whose check it has not seen.  Out of range reads as @none.
 */
#define TABLE_READ(table, index, none)					\
({									\
	const volatile u32 *__v = MEMBER_VPTR(table, index);		\
	__v ? *__v : (none);						\
})

static u32 cpu_llc_of(s32 cpu) { return TABLE_READ(cpu_llc, [cpu], MAX_LLCS); }
static u32 cpu_pos_of(s32 cpu) { return TABLE_READ(cpu_pos, [cpu], MAX_LLC_CPUS); }
static u32 nr_siblings(s32 cpu) { return TABLE_READ(cpu_nr_siblings, [cpu], 0); }
static s32 sibling(s32 cpu, u32 i) { return TABLE_READ(cpu_siblings, [cpu][i], -1); }
static u32 llc_nr(u32 llc) { return TABLE_READ(llc_nr_cpus, [llc], 0); }
static s32 llc_cpu(u32 llc, u32 pos) { return TABLE_READ(llc_cpus, [llc][pos], -1); }
static u32 llc_node_of(u32 llc) { return TABLE_READ(llc_node, [llc], 0); }

static struct mask_chunk *mask_chunk(u32 llc, u32 pos)
{
	if (llc >= MAX_LLCS || pos >= MAX_LLC_CPUS)
		return NULL;
	return MEMBER_VPTR(overload, [llc][pos / CHUNK_BITS]);
}

static void set_overloaded(s32 cpu, bool on)
{
	struct mask_chunk *c;
	u64 bit;
	u32 pos;

	if (cpu < 0 || cpu >= MAX_CPUS)
		return;
	pos = cpu_pos_of(cpu);
	c = mask_chunk(cpu_llc_of(cpu), pos);
	if (!c)
		return;
	bit = 1ULL << (pos % CHUNK_BITS);
	/* Write only on a change: readers share the line. */
	if (!!(c->word & bit) == on)
		return;
	if (on)
		__sync_fetch_and_or(&c->word, bit);
	else
		__sync_fetch_and_and(&c->word, ~bit);
}

/*
 * @llc's overload mask word @i, or NULL past its last word: the walk over
 * an LLC's words, bpf_for(i, 0, MAX_CHUNKS) up to the first NULL.
 */
static struct mask_chunk *llc_chunk(u32 llc, u32 i)
{
	if (llc >= MAX_LLCS || i >= (llc_nr(llc) + CHUNK_BITS - 1) / CHUNK_BITS)
		return NULL;
	return MEMBER_VPTR(overload, [llc][i]);
}

static bool is_overloaded(u32 llc, u32 pos)
{
	struct mask_chunk *c = mask_chunk(llc, pos);

	return c && (c->word & (1ULL << (pos % CHUNK_BITS)));
}

static void refresh_overloaded(s32 cpu)
{
	set_overloaded(cpu, scx_bpf_dsq_nr_queued(cpu) > 0);
}

/*
 * After a steal from @victim's queue, by another CPU, without @victim's
 * lock: clear its bit if the queue is empty, then look again.  An enqueue
 * on @victim in between may have found the bit still set and left it
 * (set_overloaded() writes only on a change), and a clear after that
 * would hide its task from every stealer.  The second look sees that task
 * unless its insert has not landed yet (it completes after ops.enqueue()
 * returns); then the bit stays clear until @victim's next dispatch sets
 * it, and the task waits for @victim or that dispatch, a slice at most.
 */
static void refresh_victim(s32 victim)
{
	if (scx_bpf_dsq_nr_queued(victim) <= 0) {
		set_overloaded(victim, false);
		if (scx_bpf_dsq_nr_queued(victim) <= 0)
			return;
	}
	set_overloaded(victim, true);
}

static u64 wake_vtime(struct task_struct *p);
static bool node_all_waiting(s32 cpu);

/* Is any CPU of @p's mask idle (sched_ext's idle mask)? */
static bool any_idle_for(const struct task_struct *p)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	bool any = bpf_cpumask_intersects(idle, p->cpus_ptr);

	scx_bpf_put_idle_cpumask(idle);
	return any;
}

/*
 * Is @p the task the current one, its waker, woke with its last sync wakeup
 * too?  Records @p as the last.  The two tasks of a ping-pong pair wake
 * each other every time; a hackbench sender wakes one receiver after
 * another (the fair class' wake_wide() reads the same from wakee_flips).
 */
static bool same_wakee(struct task_struct *p)
{
	struct task_ctx *wctx;
	bool same;

	wctx = bpf_task_storage_get(&task_ctxs, bpf_get_current_task_btf(), 0, 0);
	if (!wctx)
		return false;
	same = wctx->last_wakee == p->pid;
	wctx->last_wakee = p->pid;
	return same;
}

s32 BPF_STRUCT_OPS(idlesteal_select_cpu, struct task_struct *p, s32 prev_cpu,
		   u64 wake_flags)
{
	bool is_idle = false, same = (wake_flags & SCX_WAKE_SYNC) && same_wakee(p);
	s32 cpu;

	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	/* For the wakeup preemption (idlesteal_enqueue(), sync_woken()). */
	if (tctx && wake_preempt)
		tctx->sync_wakeup = wake_flags & SCX_WAKE_SYNC;

	/*
	 * No idle CPU that @p may use: what scx_bpf_select_cpu_dfl() would
	 * say after up to eight searches (@prev_cpu, not idle), said by one
	 * look at the idle mask.  Under load that is most wakeups: a pipe
	 * or socket ping-pong with every CPU busy.
	 */
	if (any_idle_for(p))
		cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	else
		cpu = prev_cpu;
	if (tctx)
		tctx->none_idle = !is_idle;
	if (!is_idle) {
		s32 waker = bpf_get_smp_processor_id();

		/*
		 * No CPU is idle.  A sync wakee then goes to the waker's CPU
		 * when nothing waits there (its local DSQ and its own queue
		 * empty): the waker is about to sleep, so the wakee runs
		 * next on the CPU whose cache holds what the waker wrote,
		 * the fair class' wake_affine().  Queued on its previous CPU
		 * instead, behind other work, a pipe pair's wakee waits
		 * there or is stolen by the next CPU to go idle, and the
		 * pair keeps moving: a longer round trip, and a CPU idle
		 * while the wakee waits.
		 *
		 * A ping-pong pair that shares a CPU (the waker's CPU is the
		 * wakee's previous one, and the waker woke this same task
		 * last time: same_wakee()) goes straight into that CPU's
		 * local DSQ: no ops.enqueue() and no ops.dispatch() for the
		 * wakee, which were a third of the callbacks' time per
		 * switch.  Nothing waits there, so nothing is passed, and the next wakee finds the
		 * local DSQ taken and is queued in vtime order.  The price: while its
		 * waker runs on, no idle CPU can steal the wakee (for at
		 * most the waker's slice; no CPU was idle a moment ago).
		 * Hence the pair test: a waker that wakes one task after
		 * another (a hackbench sender) and does not sleep leaves
		 * its wakees in the queue, where a CPU going idle takes them.
		 */
		if ((wake_flags & SCX_WAKE_SYNC) &&
		    bpf_cpumask_test_cpu(waker, p->cpus_ptr) &&
		    !scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL) &&
		    !scx_bpf_dsq_nr_queued(waker)) {
			stat_add(IDLESTEAL_STAT_WAKER_CPU, 1);
			if (waker != cpu || !same)
				return waker;
			/* No ops.enqueue() to take the marks: not for later. */
			if (tctx) {
				tctx->none_idle = false;
				tctx->sync_wakeup = false;
			}
			scx_bpf_task_set_dsq_vtime(p, wake_vtime(p));
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice(), 0);
			return waker;
		}
		return cpu;
	}

	/*
	 * On a WAKE_SYNC wakeup scx_bpf_select_cpu_dfl() also returns the
	 * waker's own CPU, which is busy, when its local DSQ is empty and some
	 * CPU elsewhere is idle.  Inserting into SCX_DSQ_LOCAL there starves
	 * that CPU's own queue: in a pipe or socket ping-pong the local DSQ is
	 * never empty at a scheduling point, so ops.dispatch() is not called
	 * and what waits in the queue, tasks pinned to that CPU included
	 * (which no other CPU may steal), waits until the chain breaks or the
	 * watchdog ejects the scheduler.  So the wakee goes first only when
	 * nothing waits; otherwise ops.enqueue() queues it in vtime order
	 * behind the waiters, and kicks an idle CPU that may steal it.  (The
	 * global queue cannot be counted from BPF; every CPU that dispatches
	 * consumes it, so a chain on one CPU does not hold it up.)
	 */
	if ((wake_flags & SCX_WAKE_SYNC) && cpu == bpf_get_smp_processor_id() &&
	    scx_bpf_dsq_nr_queued(cpu) > 0) {
		stat_add(IDLESTEAL_STAT_SYNC_QUEUED, 1);
		return cpu;
	}

	stat_add(IDLESTEAL_STAT_LOCAL, 1);
	scx_bpf_task_set_dsq_vtime(p, wake_vtime(p));
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice(), 0);
	return cpu;
}

/*
 * Is @cpu online?  A CPU keeps its bit in sched_ext's idle mask when it
 * goes offline (its last pick was the idle task), so an idle search can
 * claim it; kicked, it does not wake, and the task it was claimed for
 * waits for whichever CPU looks next.  Claiming it clears the bit, so a
 * search that passes one over does not meet it again until it has been
 * online and idle.
 */
static bool claimed_online(s32 cpu)
{
	const struct cpumask *online = scx_bpf_get_online_cpumask();
	bool on = bpf_cpumask_test_cpu(cpu, online);

	scx_bpf_put_cpumask(online);
	if (!on)
		stat_add(IDLESTEAL_STAT_OFFLINE_IDLE, 1);
	return on;
}

/* scx_bpf_pick_idle_cpu() of @mask, passing over offline CPUs; or -EBUSY. */
static s32 pick_idle_online(const struct cpumask *mask, u64 flags)
{
	s32 cpu;
	u32 i;

	bpf_for(i, 0, PICK_TRIES) {
		cpu = scx_bpf_pick_idle_cpu(mask, flags);
		if (cpu < 0 || claimed_online(cpu))
			return cpu;
	}
	return -EBUSY;
}

/*
 * Kick @cpu, an idle CPU claimed for a task it is to take.  Its next search
 * skips the cost gate: the gate guesses whether a CPU about to go idle
 * stays idle long enough to pay for a search, and a CPU woken for a known
 * waiting task is another case (the kernel's nohz idle balancing, which the
 * kick plays, is not gated by the expected idle time either).
 */
static void kick_to_steal(s32 cpu)
{
	struct cpu_ctx *cctx;
	u32 zero = 0;

	cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu);
	if (cctx)
		WRITE_ONCE(cctx->kicked, 1);
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	stat_add(IDLESTEAL_STAT_KICK, 1);
}

/*
 * The LLC @i places after @llc in LLC order (1 <= @i < nr_llcs), or -1 when
 * it is not on @llc's node: the walk of "the other LLCs of this node".
 */
static s32 node_llc_after(u32 llc, u32 i)
{
	u32 other = (llc + i) % nr_llcs;

	if (other >= MAX_LLCS || llc_node_of(other) != llc_node_of(llc))
		return -1;
	return other;
}

/*
 * Claim (clear the idle bit of) an idle CPU of @llc, from position @pos + 1
 * on, on which @p may run; with @whole, only one whose SMT siblings are
 * idle too (in sched_ext's idle-core mask).  -1 if there is none.
 */
static __always_inline s32 claim_in_llc(struct task_struct *p, u32 llc, u32 n, u32 pos,
					const struct cpumask *whole)
{
	u32 i;
	s32 c;

	bpf_for(i, 1, MAX_LLC_CPUS) {
		u32 at;

		if (i >= n)
			break;
		at = (pos + i) % n;
		if (at >= MAX_LLC_CPUS)
			break;
		c = llc_cpu(llc, at);
		if (!bpf_cpumask_test_cpu(c, p->cpus_ptr))
			continue;
		if (whole && !bpf_cpumask_test_cpu(c, whole))
			continue;
		if (scx_bpf_test_and_clear_cpu_idle(c) && claimed_online(c))
			return c;
	}
	return -1;
}

/*
 * Claim (clear the idle bit of) an idle CPU of @cpu's LLC on which @p may
 * run, to be kicked so that it steals; -1 if there is none.  A claimed CPU
 * must be kicked: nobody else sees it idle any more.  With kick_whole_core
 * a CPU of a fully idle core first (the task then has a core to itself,
 * as select_idle_core() gives a waking fair task), then any.
 */
static s32 claim_idle_stealer(struct task_struct *p, s32 cpu)
{
	const struct cpumask *idle_cores;
	u32 llc, n, pos;
	s32 c;

	if (!steal_enabled || cpu < 0 || cpu >= MAX_CPUS)
		return -1;
	llc = cpu_llc_of(cpu);
	if (llc >= MAX_LLCS)
		return -1;
	n = llc_nr(llc);
	pos = cpu_pos_of(cpu);

	if (kick_whole_core) {
		idle_cores = scx_bpf_get_idle_smtmask();
		c = claim_in_llc(p, llc, n, pos, idle_cores);
		scx_bpf_put_idle_cpumask(idle_cores);
		if (c >= 0) {
			stat_add(IDLESTEAL_STAT_KICK_CORE, 1);
			return c;
		}
	}
	return claim_in_llc(p, llc, n, pos, NULL);
}

/*
 * Claim an idle CPU on which @p may run in another LLC of @cpu's node, the
 * LLCs in order after @cpu's; -1 if there is none.  A CPU is claimed only
 * when sched_ext's idle mask shows it idle, so a busy node costs a read of
 * the mask per CPU, not an atomic.
 */
static s32 claim_in_node(struct task_struct *p, s32 cpu)
{
	const struct cpumask *idle;
	u32 llc, i, pos;
	s32 other, c = -1;

	if (cpu < 0 || cpu >= MAX_CPUS)
		return -1;
	llc = cpu_llc_of(cpu);
	if (llc >= MAX_LLCS)
		return -1;
	idle = scx_bpf_get_idle_cpumask();
	bpf_for(i, 1, MAX_LLCS) {
		u32 n;

		if (i >= nr_llcs || c >= 0)
			break;
		other = node_llc_after(llc, i);
		if (other < 0)
			continue;
		n = llc_nr(other);
		bpf_for(pos, 0, MAX_LLC_CPUS) {
			s32 o;

			if (pos >= n)
				break;
			o = llc_cpu(other, pos);
			if (bpf_cpumask_test_cpu(o, idle) && bpf_cpumask_test_cpu(o, p->cpus_ptr) &&
			    scx_bpf_test_and_clear_cpu_idle(o) && claimed_online(o)) {
				c = o;
				break;
			}
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	return c;
}

/*
 * Was @p woken with SCX_WAKE_SYNC (the waker says it is about to sleep:
 * pipes, sockets)?  Clears the mark.  Such a wakeup does not preempt: in
 * message passing the woken task is within reach of the running one
 * anyway, and preempting the waker (or a sender with messages left)
 * turns a batch of messages into a switch each.  Without
 * ops.select_cpu() (a task allowed on one CPU) nobody set the mark.
 */
static bool sync_woken(struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (!tctx || !tctx->sync_wakeup)
		return false;
	tctx->sync_wakeup = false;
	return true;
}

/* The vtime of the task of ours running on @cctx's CPU, estimated at @now. */
static u64 curr_vtime_now(const struct cpu_ctx *cctx, u64 at, u64 now)
{
	u64 w = cctx->curr_weight ?: 100;

	return cctx->curr_vtime + (now > at ? (now - at) * 100 / w : 0);
}

/*
 * Wakeup preemption: the CPU of @cpu's LLC, allowed to @p, whose running
 * task (one of ours) is furthest ahead of @vtime, @p's, by more than
 * slice_min(); @cpu itself when its task is (no IPI, no migration, @p's
 * cache); -1 if none is.  EEVDF's wakeup preemption compares the waking
 * task with the task of its target CPU only; here every CPU of the LLC is
 * busy (no idle one was found), so the one whose task has had the most
 * gives way, as scx_lavd picks the victim of a preemption among CPUs.
 * Without stealing (-o) only @cpu: moving tasks between CPUs is off.
 */
static s32 preempt_victim(struct task_struct *p, s32 cpu, u64 vtime)
{
	struct cpu_ctx *cctx;
	u64 now = now_ns(), lead = vtime + slice_min(), best_v = 0, at, v;
	u32 zero = 0, llc, n, i, pos;
	s32 c, best = -1;

	if (cpu < 0 || cpu >= MAX_CPUS)
		return -1;
	cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu);
	if (cctx) {
		at = READ_ONCE(cctx->curr_at);
		if (at && time_before(lead, curr_vtime_now(cctx, at, now)))
			return cpu;
	}
	if (!steal_enabled)
		return -1;
	llc = cpu_llc_of(cpu);
	if (llc >= MAX_LLCS)
		return -1;
	n = llc_nr(llc);
	pos = cpu_pos_of(cpu);

	bpf_for(i, 1, MAX_LLC_CPUS) {
		u32 j;

		if (i >= n)
			break;
		j = (pos + i) % n;
		if (j >= MAX_LLC_CPUS)
			break;
		c = llc_cpu(llc, j);
		if (c < 0 || !bpf_cpumask_test_cpu(c, p->cpus_ptr))
			continue;
		cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, c);
		if (!cctx)
			continue;
		at = READ_ONCE(cctx->curr_at);
		if (!at)
			continue;
		v = curr_vtime_now(cctx, at, now);
		if (time_before(lead, v) && (best < 0 || time_before(best_v, v))) {
			best = c;
			best_v = v;
		}
	}
	return best;
}

/*
 * The clock that waking and new tasks are placed by: vtime_now, the vtime
 * of the tasks that start running (ops.running()) and of the task kept
 * running at a slice end (ops.dispatch()), moved forward by at most
 * CLOCK_STEP at a time.  Unbounded, the one task far ahead carries it off:
 * at cpu.weight 1:10,000 a task of the light cgroup is charged 10,000
 * times a heavy one's vtime for the same run, and at the next start of
 * such a task (pulled across LLCs, or alone in a queue) the clock would
 * jump by seconds; every waking task, placed at most a slice behind it,
 * would then wait behind the heavy tasks until the starvation guard, and
 * sched_ext's watchdog work, a kworker of the root, with it.  Bounded, the clock
 * still keeps up with the tasks of a loaded machine (each busy CPU starts
 * or keeps a task at least once a slice, each time moving it up to a
 * quarter slice), and a task of weight 1 moves it no faster than one of
 * nice 0.  The clock only moves forward: an update is a compare-and-swap
 * from the value it was computed from, and one that finds the clock moved
 * by another CPU meanwhile is dropped (a plain store could put back an
 * older value, and a step of the clock with it).
 *
 * Not the clock of each CPU alone (the earliest of vtime_now, its queue's
 * head and its running task): while a queue's head waits, such a clock
 * stands at the head's vtime and every waking task goes ahead of it, so
 * the head starves.  A waking task is placed by this clock and bounded by
 * its queue's head instead (queue_vtime()).
 */
#define CLOCK_STEP		(slice() / 4)

static void advance_clock(u64 vtime)
{
	u64 now = READ_ONCE(vtime_now), step = CLOCK_STEP;

	if (time_before(now + step, vtime))
		vtime = now + step;
	if (time_before(now, vtime))
		__sync_val_compare_and_swap(&vtime_now, now, vtime);
}

static u64 vtime_charge(struct task_struct *p, u64 ran);

/*
 * The vtime of @p waking to run or queue.  A task that slept keeps at most
 * one slice of credit and two slices of debt (charged at its weight)
 * against the clock (vtime_now, advance_clock()); EEVDF bounds a sleeper's
 * lag both ways too (update_entity_lag()).  The debt bound lets a task
 * placed by a clock far ahead (a CPU that ran only tasks of a cgroup of
 * weight 1) come back at its next wakeup.  Only at a wakeup: a runnable
 * task's vtime behind the clock is not credit from sleeping but what its
 * LLC's load left it, which the pulls across LLCs at a slice end go by.
 * Every path a waking task takes needs it, a direct insert into a local
 * DSQ too: the vtime it runs with is the one it is queued with after.
 */
static u64 wake_vtime(struct task_struct *p)
{
	u64 vtime = p->scx.dsq_vtime, clock = vtime_now, debt;

	if (time_before(vtime, clock - slice()))
		return clock - slice();
	if (!time_before(clock, vtime))
		return vtime;
	/* ahead of the clock: only then the charge (cgroup lookups) */
	debt = vtime_charge(p, 2 * slice());
	return time_before(clock + debt, vtime) ? clock + debt : vtime;
}

/*
 * @vtime, a waking task's (wake_vtime()), bounded to one slice of @cpu's
 * (task_slice()) behind the head of the queue of @cpu it is about to join.
 * wake_vtime() places it against vtime_now, which the fastest CPUs move;
 * the tasks of a crowded CPU (several CPU-bound tasks pinned to it, or an
 * oversubscribed cpuset) advance in vtime at a fraction of that pace, so a
 * task waking there would queue behind all of them by a gap that grows as
 * long as the crowd stays, and run only when run_starved() found it, at
 * every wakeup (a per-CPU kworker: a flush of every CPU waits on it).
 * Bounded, it waits for the tasks within a slice of the head, each of
 * them once at most (slices shrink with the queue: about the base slice
 * in all), as a waking task waits on EEVDF behind its own runqueue, not
 * behind the machine.  The bound does not move a task ahead of the head,
 * which waited longest; where the queue is empty there is nothing to bound.
 */
static u64 queue_vtime(s32 cpu, u64 vtime)
{
	struct task_struct *head = __COMPAT_scx_bpf_dsq_peek(cpu);
	u64 bound;

	if (!head)
		return vtime;
	bound = head->scx.dsq_vtime + task_slice(cpu);
	if (!time_before(bound, vtime))
		return vtime;
	stat_add(IDLESTEAL_STAT_WAKE_BOUNDED, 1);
	return bound;
}

/* Did ops.select_cpu() find no idle CPU for @p's wakeup?  Clears the mark. */
static bool took_none_idle(struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (!tctx || !tctx->none_idle)
		return false;
	tctx->none_idle = false;
	return true;
}

void BPF_STRUCT_OPS(idlesteal_enqueue, struct task_struct *p, u64 enq_flags)
{
	s32 cpu = scx_bpf_task_cpu(p), idle, stealer;
	u64 vtime = p->scx.dsq_vtime;
	/*
	 * Taken (cleared) on every enqueue, so that a mark left by a wakeup
	 * that returned before the kick below (its CPU idle, migration
	 * disabled) does not reach a later one that skipped ops.select_cpu().
	 */
	bool looked = took_none_idle(p) && (enq_flags & SCX_ENQ_WAKEUP);

	if (enq_flags & SCX_ENQ_WAKEUP)
		vtime = queue_vtime(cpu, wake_vtime(p));

	/*
	 * A migration-disabled task must run where it is (moving it is a
	 * runtime error that ejects the scheduler): its own CPU's queue, in
	 * vtime order, and no stealer is kicked for it.  Kernels that have
	 * SCX_OPS_ENQ_MIGRATION_DISABLED put such tasks on the local DSQ
	 * without asking unless it is set (-m); 6.12 asks.  The check is the
	 * peers' (common.bpf.h); on a kernel without PREEMPT_RCU, where BPF
	 * programs run without migration disabled, it misses a current task
	 * with a count of one, whose cpus_ptr is then its one CPU anyway.
	 */
	if (is_migration_disabled(p)) {
		stat_add(IDLESTEAL_STAT_MIGDIS, 1);
		scx_bpf_dsq_insert_vtime(p, cpu, slice(), vtime, enq_flags);
		if (scx_bpf_test_and_clear_cpu_idle(cpu))
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}

	/*
	 * The queue of a CPU @p may not run on would hold it forever.  It goes
	 * to the fallback queue, in vtime order; every CPU looks there before
	 * it takes from its own queue, and takes the fallback task that may
	 * run on it when that one is earlier.  An idle CPU of @p's mask is
	 * woken for it: it must be kicked once claimed, or it stays halted
	 * with its idle bit cleared, invisible to every idle search.  Not
	 * SCX_DSQ_GLOBAL: the kernel drains it before ops.dispatch(), so its
	 * tasks would go ahead of every vtime-ordered queue.  Not the queue
	 * of an idle CPU: the kernel moves the tasks of a CPU going offline
	 * only when they are on that CPU's runqueue (task_cpu()), which these
	 * are not.
	 */
	if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
		stat_add(IDLESTEAL_STAT_FALLBACK, 1);
		__sync_fetch_and_add(&nr_fallback, 1);
		scx_bpf_dsq_insert_vtime(p, FALLBACK_DSQ, slice(), vtime, enq_flags);
		idle = pick_idle_online(p->cpus_ptr, 0);
		if (idle >= 0)
			kick_to_steal(idle);
		return;
	}

	/* The owner picks it up when it is next free: kick it if idle. */
	if (scx_bpf_test_and_clear_cpu_idle(cpu)) {
		stat_add(IDLESTEAL_STAT_QUEUED, 1);
		scx_bpf_dsq_insert_vtime(p, cpu, slice(), vtime, enq_flags);
		set_overloaded(cpu, true);
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}

	/*
	 * @p waits behind another task.  An idle CPU of the LLC is kicked to
	 * steal it.  With none in the LLC, an idle CPU of another LLC takes it
	 * at once: only wakeups (scx_bpf_select_cpu_dfl()) look beyond the
	 * LLC, and a CPU-bound task that never sleeps would otherwise stay in
	 * an overloaded LLC while a CPU elsewhere idles for good.  The other
	 * LLCs of the node first, in LLC order; another node's CPU only when
	 * the node has none idle and every LLC of it has a task waiting
	 * (node_all_waiting()).  Its local DSQ, not its
	 * queue: the kernel moves a task off a CPU that goes offline only
	 * when it is on that CPU's runqueue.
	 */
	/*
	 * A wakee for which scx_bpf_select_cpu_dfl() found no idle CPU a
	 * moment ago is queued without searching again: the two searches
	 * below, on every such enqueue, find nothing nearly every time and
	 * cost message passing a part of its round trip.  A CPU that
	 * goes idle after that searches the LLC before it halts
	 * (the task is in the overload mask by then) unless its cost gate
	 * says not; then the task waits for its own CPU, as it would have had
	 * the wakeup come a moment earlier.
	 */
	if (looked)
		stat_add(IDLESTEAL_STAT_NONE_IDLE, 1);
	stealer = enqueue_kick && !looked ? claim_idle_stealer(p, cpu) : -1;
	if (stealer < 0 && steal_enabled && enqueue_kick && !looked) {
		idle = claim_in_node(p, cpu);
		if (idle < 0 && node_all_waiting(cpu)) {
			if (kick_whole_core)
				idle = pick_idle_online(p->cpus_ptr, SCX_PICK_IDLE_CORE);
			if (idle < 0)
				idle = pick_idle_online(p->cpus_ptr, 0);
		}
		if (idle >= 0) {
			stat_add(IDLESTEAL_STAT_REMOTE_IDLE, 1);
			if (llc_node_of(cpu_llc_of(idle)) != llc_node_of(cpu_llc_of(cpu)))
				stat_add(IDLESTEAL_STAT_REMOTE_NODE, 1);
			scx_bpf_task_set_dsq_vtime(p, vtime);
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | idle, slice(), enq_flags);
			scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
			return;
		}
	}

	/*
	 * A waking task with no idle CPU to go to would wait for a running
	 * task's slice to end (20 ms by default).  If it is more than
	 * slice_min() behind in vtime the task of its LLC furthest ahead (the
	 * sleep credit of at most a slice that a sleeper keeps makes it so),
	 * it goes to the head of that CPU's local DSQ and preempts it
	 * (SCX_ENQ_PREEMPT: the running task's slice ends at once, and it is
	 * queued through ops.enqueue(), charged what it ran).  Its vtime goes
	 * with it: the local DSQ does not carry one.
	 */
	if (wake_preempt && stealer < 0 && (enq_flags & SCX_ENQ_WAKEUP) && !sync_woken(p)) {
		s32 victim = preempt_victim(p, cpu, vtime);

		if (victim >= 0) {
			stat_add(IDLESTEAL_STAT_PREEMPT, 1);
			scx_bpf_task_set_dsq_vtime(p, vtime);
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | victim, slice(),
					   enq_flags | SCX_ENQ_PREEMPT);
			return;
		}
	}

	stat_add(IDLESTEAL_STAT_QUEUED, 1);
	scx_bpf_dsq_insert_vtime(p, cpu, slice(), vtime, enq_flags);
	set_overloaded(cpu, true);
	if (stealer >= 0)
		kick_to_steal(stealer);
}

/*
 * Which tasks a search may take: those allowed on the searching CPU and free
 * to migrate; for a pull at a slice end (bounded) only those whose vtime is
 * below @below, what the CPU's own task will have once charged.
 */
struct want {
	bool bounded;
	u64 below;
};

static bool wanted(s32 cpu, struct task_struct *p, const struct want *w)
{
	if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr) || is_migration_disabled(p))
		return false;
	return !w->bounded || time_before(p->scx.dsq_vtime, w->below);
}

/*
 * Take a task from @victim's queue.
 *
 * An idle CPU's steal (@w unbounded) whose victim's head may run here
 * takes it by scx_bpf_dsq_move_to_local(): the kernel's own consume,
 * which walks the queue in C and retries when the task it picked moves
 * under it (consume_dispatch_q()).  The walk below takes two passes from
 * BPF, and the victim, dispatching its own queue meanwhile, takes the task
 * first in most of the walk's failures; the consume fails far less often.
 * The task taken is the victim's
 * head in vtime order, the one it would run next, where the walk takes the
 * one that waited longest (they differ when a task queued later has less
 * vtime, a sleeper's credit).
 * If the head moves between the look and the consume, the task taken
 * may be out of vtime order unmarked, which moves vtime_now by one
 * bounded step at most (advance_clock()).
 *
 * Otherwise (a pull at a slice end, or a head that may not run here) of
 * the queue's first STEAL_MAX_WALK tasks the one @w wants that has waited
 * longest: the earliest p->scx.runnable_at, which sched_ext sets (in
 * jiffies) when a task starts waiting and resets when it runs; ties go to
 * the earlier in vtime order.
 * Two passes: a task can only be moved while its queue is being iterated.
 *
 * The second pass checks the mask again: an affinity change between the
 * passes dequeues and requeues the task, possibly in the same queue, and
 * the second iteration, begun after that, would move it to a CPU it may no
 * longer run on, which sched_ext treats as a scheduler bug ("target CPU not
 * allowed") and ejects the scheduler.  A change after the second check is
 * safe: the requeued task is newer than the iteration, and the move fails.
 */
static bool steal_from(s32 cpu, s32 victim, const struct want *w)
{
	struct task_struct *p;
	struct task_ctx *tctx;
	unsigned long oldest = 0;
	s32 pid = -1, first = -1;
	u32 walked = walk_zero;
	bool moved = false;

	if (!w->bounded) {
		p = __COMPAT_scx_bpf_dsq_peek(victim);
		if (!p)
			return false;
		if (wanted(cpu, p, w)) {
			moved = scx_bpf_dsq_move_to_local(victim, 0);
			if (moved)
				refresh_victim(victim);
			return moved;
		}
	}

	bpf_for_each(scx_dsq, p, victim, 0) {
		if (++walked > STEAL_MAX_WALK)
			break;
		if (!wanted(cpu, p, w))
			continue;
		if (first < 0)
			first = p->pid;
		if (pid < 0 || time_before(p->scx.runnable_at, oldest)) {
			oldest = p->scx.runnable_at;
			pid = p->pid;
		}
	}
	if (pid < 0)
		return false;

	bpf_for_each(scx_dsq, p, victim, 0) {
		if (p->pid != pid)
			continue;
		if (!wanted(cpu, p, w))
			break;
		/* Not the earliest in vtime: it must not move the clock. */
		tctx = pid != first ? bpf_task_storage_get(&task_ctxs, p, 0, 0) : NULL;
		if (tctx)
			tctx->out_of_order = true;
		moved = scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0);
		if (!moved && tctx)
			tctx->out_of_order = false;
		break;
	}
	if (moved)
		refresh_victim(victim);
	return moved;
}

static bool is_sibling(s32 cpu, s32 other)
{
	u32 i, n;

	if (cpu < 0 || cpu >= MAX_CPUS)
		return false;
	n = nr_siblings(cpu);
	bpf_for(i, 0, MAX_SIBLINGS) {
		if (i >= n)
			break;
		if (sibling(cpu, i) == other)
			return true;
	}
	return false;
}

/*
 * Walk @llc's overload mask from position @start on, wrapping, skipping
 * @cpu's SMT siblings (already tried).  Returns true once a task was stolen;
 * *@victims counts down the victims tried.
 */
static bool steal_llc(s32 cpu, u32 llc, u32 start, int *victims, const struct want *w)
{
	u32 n, i, at;
	s32 victim;

	if (llc >= MAX_LLCS)
		return false;
	n = llc_nr(llc);

	bpf_for(i, 0, MAX_LLC_CPUS) {
		if (i >= n || *victims <= 0)
			break;
		at = (start + i) % n;
		if (at >= MAX_LLC_CPUS)
			break;
		if (!is_overloaded(llc, at))
			continue;
		victim = llc_cpu(llc, at);
		if (victim == cpu || is_sibling(cpu, victim))
			continue;
		(*victims)--;
		if (steal_from(cpu, victim, w))
			return true;
	}
	return false;
}

static bool steal(s32 cpu, const struct want *w)
{
	int victims = STEAL_MAX_VICTIMS;
	u32 llc, pos, i, n;
	s32 sib;

	if (cpu < 0 || cpu >= MAX_CPUS)
		return false;
	llc = cpu_llc_of(cpu);
	pos = cpu_pos_of(cpu);

	n = nr_siblings(cpu);
	bpf_for(i, 0, MAX_SIBLINGS) {
		if (i >= n || victims <= 0)
			break;
		sib = sibling(cpu, i);
		if (sib < 0 || sib >= MAX_CPUS || !is_overloaded(llc, cpu_pos_of(sib)))
			continue;
		victims--;
		if (steal_from(cpu, sib, w))
			return true;
	}

	if (steal_llc(cpu, llc, pos + 1, &victims, w))
		return true;

	if (!nearest_llc || llc >= MAX_LLCS)
		return false;

	/* The other LLCs of this node, in order after this one. */
	bpf_for(i, 1, MAX_LLCS) {
		s32 other;

		if (i >= nr_llcs || victims <= 0)
			break;
		other = node_llc_after(llc, i);
		if (other < 0)
			continue;
		if (steal_llc(cpu, other, 0, &victims, w)) {
			stat_add(IDLESTEAL_STAT_REMOTE_LLC, 1);
			return true;
		}
	}
	return false;
}

/* Does @llc's mask have a member?  Reads its words until one is set. */
static bool llc_overloaded(u32 llc)
{
	struct mask_chunk *c;
	u32 i;

	bpf_for(i, 0, MAX_CHUNKS) {
		c = llc_chunk(llc, i);
		if (!c)
			break;
		if (c->word)
			return true;
	}
	return false;
}

/*
 * Does every LLC of @cpu's node have a task waiting (its own one besides
 * the task being placed)?  Only then does a task leave the node for an
 * idle CPU of another (the arrival push): a node whose CPUs are all busy
 * for a moment, a kworker or a shell beside its tasks, has nothing
 * waiting in some LLC, and a move across nodes leaves the task's memory
 * behind.  The kernel moves tasks across nodes for an imbalance, not for
 * one idle CPU, too.  A node that stays overloaded gets there: the slice
 * end pulls fill its other LLCs (pull_other_llcs()).
 */
static bool node_all_waiting(s32 cpu)
{
	u32 llc, i;
	s32 other;

	if (cpu < 0 || cpu >= MAX_CPUS)
		return false;
	llc = cpu_llc_of(cpu);
	if (llc >= MAX_LLCS || !llc_overloaded(llc))
		return false;
	bpf_for(i, 1, MAX_LLCS) {
		if (i >= nr_llcs)
			break;
		other = node_llc_after(llc, i);
		if (other >= 0 && !llc_overloaded(other))
			return false;
	}
	return true;
}

/* Is there anything to steal for @cpu?  If not, no search is made. */
static bool anything_to_steal(s32 cpu)
{
	u32 llc, i;

	if (cpu < 0 || cpu >= MAX_CPUS)
		return false;
	llc = cpu_llc_of(cpu);
	if (llc_overloaded(llc))
		return true;
	if (!nearest_llc || llc >= MAX_LLCS)
		return false;
	bpf_for(i, 0, MAX_LLCS) {
		if (i >= nr_llcs)
			break;
		if (i != llc && llc_node_of(i) == llc_node_of(llc) && llc_overloaded(i))
			return true;
	}
	return false;
}

/*
 * At a slice end with nothing in the own LLC to pull: a task waiting in
 * another LLC of this node that is behind @w->below by more than
 * PULL_LLC_MARGIN slices in vtime.  Steals, and pulls within an LLC, keep
 * the LLCs' tasks apart, and a CPU-bound task never wakes up to be placed
 * elsewhere, so without this the LLCs' loads stay as they started: a
 * cgroup whose tasks started in one LLC gets that LLC whatever its weight,
 * N+1 tasks split 5/4 over two LLCs for good.  Vtime says which LLC's tasks
 * fall behind; the margin keeps a task from going back and forth on small
 * differences (its cache stays behind).
 */
static bool pull_other_llcs(s32 cpu, const struct want *w)
{
	struct want far = { .bounded = true, .below = w->below - PULL_LLC_MARGIN * slice() };
	int victims = STEAL_MAX_VICTIMS;
	u32 llc, i;

	if (cpu < 0 || cpu >= MAX_CPUS)
		return false;
	llc = cpu_llc_of(cpu);
	if (llc >= MAX_LLCS)
		return false;
	bpf_for(i, 1, MAX_LLCS) {
		s32 other;

		if (i >= nr_llcs || victims <= 0)
			break;
		other = node_llc_after(llc, i);
		if (other < 0 || !llc_overloaded(other))
			continue;
		if (steal_llc(cpu, other, 0, &victims, &far))
			return true;
	}
	return false;
}

/* Is this CPU expected to be idle for less than a search costs? */
static bool steal_gated(struct cpu_ctx *cctx, u64 now)
{
	if (cctx->avg_idle >= cctx->avg_cost)
		return false;
	if (now >= cctx->next_decay) {
		cctx->avg_cost /= 2;
		cctx->next_decay = now + STEAL_COST_DECAY_NS;
	}
	return true;
}

/*
 * Is this search, the CPU's next, one to time?  Timing one takes two
 * bpf_ktime_get_ns() reads of the clocksource, on the 2x2x2 TCG guest the
 * HPET (see now_ns()): a search timed so averaged 491 us there, 21 us on
 * 1x1x2 (TSC).  The gate needs an average, not every sample: one search in
 * STEAL_TIME_EVERY is timed, the first one included, so a CPU has an
 * estimate from its first search on.
 */
static bool steal_timed(struct cpu_ctx *cctx)
{
	return !(cctx->searches++ % STEAL_TIME_EVERY);
}

/*
 * What @p has run since it last started running, by its runtime
 * (p->se.sum_exec_runtime, which sched_ext keeps up to date): a task that
 * is kept running at the end of its slice (nothing else to run) gets a new
 * slice without ops.stopping() and ops.running(), so what is left of its
 * slice says nothing about what it used.
 */
static u64 ran_since_running(struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	u64 now = p->se.sum_exec_runtime;

	if (!tctx || now < tctx->exec_at)
		return 0;
	return now - tctx->exec_at;
}

/*
 * @cgc's hierarchical weight, in 1/(1 << HWEIGHT_SHIFT)ths: among the root's
 * tasks and children, a child of the root weighs its cpu.weight; a cgroup
 * below weighs its parent's hierarchical weight times its cpu.weight over
 * the cpu.weight of its parent's active children (itself included).  A
 * parent the map has no room for ends the walk: the last cgroup found
 * weighs as a child of the root.  Never 0.
 */
static u64 cgrp_hweight(struct cgrp_ctx *cgc)
{
	u64 frac = 1ULL << HWEIGHT_SHIFT;	/* of the top ancestor's weight */
	struct cgrp_ctx *parent;
	u64 id, sum, w;
	u32 i;

	bpf_for(i, 0, MAX_CGROUP_DEPTH) {
		id = cgc->parent_id;
		if (!id)
			break;
		parent = bpf_map_lookup_elem(&cgrp_ctxs, &id);
		if (!parent)
			break;
		w = cgrp_weight(cgc);
		sum = READ_ONCE(parent->child_weight);
		if ((s64)sum < (s64)w)
			sum = w;
		frac = frac * w / sum ?: 1;
		cgc = parent;
	}
	return frac * cgrp_weight(cgc) ?: 1;
}

/*
 * @ran of @p's runtime in vtime.  A task of the root cgroup: weighted by its
 * own weight.  A task of a cgroup below the root: its cgroup's hierarchical
 * weight (cgrp_hweight(); a child of the root: its cpu.weight), shared among
 * the cgroup's runnable tasks by their weights, so that its tasks together
 * advance in vtime as one task of that weight would:
 * @ran * (the cgroup's runnable weight / the task's) * 100 / weight.
 * Two cgroups of 4 spinners each at cpu.weight 100 and 400 are charged 4
 * and 1 per ns: vtime order gives them 1:4 of the CPUs.  Two children of
 * one cgroup at 100 and 300, beside a sibling of their parent's at the same
 * weight as their parent, weigh 25 and 75 against its 100.
 */
static u64 vtime_charge(struct task_struct *p, u64 ran)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	struct cgrp_ctx *cgc;
	u64 w, group;
	s64 rw;

	if (!tctx || !tctx->cg_added)
		return scale_by_task_weight_inverse(p, ran);
	cgc = bpf_map_lookup_elem(&cgrp_ctxs, &tctx->cg_added_id);
	if (!cgc || !cgc->weight)
		return scale_by_task_weight_inverse(p, ran);
	w = tctx->cg_added;
	rw = READ_ONCE(cgc->runnable_weight);
	group = rw > (s64)w ? (u64)rw : w;
	return ran * group / w * (100 << HWEIGHT_SHIFT) / cgrp_hweight(cgc);
}

/* @p's vtime once charged for what it has run (ops.stopping()). */
static u64 charged_vtime(struct task_struct *p)
{
	return p->scx.dsq_vtime + vtime_charge(p, ran_since_running(p));
}

/* Did @p give its turn up with sched_yield()?  Clears the mark. */
static bool yielded(struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (!tctx || !tctx->yielded)
		return false;
	tctx->yielded = false;
	return true;
}

/*
 * Move here the first task of the fallback queue (vtime order) that may run
 * on @cpu, if @w wants it; of the queue's first STEAL_MAX_WALK tasks.
 */
static bool take_fallback(s32 cpu, const struct want *w)
{
	struct task_struct *p;
	u32 walked = walk_zero;

	if (scx_bpf_dsq_nr_queued(FALLBACK_DSQ) <= 0)
		return false;
	bpf_for_each(scx_dsq, p, FALLBACK_DSQ, 0) {
		if (++walked > STEAL_MAX_WALK)
			break;
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr) || is_migration_disabled(p))
			continue;
		/* The first allowed task is the earliest: later ones cannot win. */
		if (!wanted(cpu, p, w))
			return false;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0)) {
			stat_add(IDLESTEAL_STAT_FALLBACK_RUN, 1);
			__sync_fetch_and_sub(&nr_fallback, 1);
			return true;
		}
	}
	return false;
}

/*
 * Might the fallback queue hold a task?  Where nr_fallback says so but the
 * queue is empty, it is reset to 0, unless a task was counted in since it
 * was read (the compare-and-swap fails, the count stays): without that,
 * a count left behind by tasks that left the queue uncounted would make
 * every later sched_yield() pay the queue's lookup.  A task counted in but
 * not yet in the queue when it is reset is not seen by ops.yield() until
 * the next one is counted: it waits for the next CPU of its mask to
 * dispatch, as it does when no CPU yields.
 */
static bool fallback_maybe(void)
{
	u64 n = READ_ONCE(nr_fallback);

	if (!n)
		return false;
	if (scx_bpf_dsq_nr_queued(FALLBACK_DSQ) > 0)
		return true;
	__sync_val_compare_and_swap(&nr_fallback, n, 0);
	return false;
}

/* Is a task in the fallback queue that may run on @cpu? */
static bool fallback_for(s32 cpu)
{
	struct task_struct *p;
	u32 walked = walk_zero;

	if (scx_bpf_dsq_nr_queued(FALLBACK_DSQ) <= 0)
		return false;
	bpf_for_each(scx_dsq, p, FALLBACK_DSQ, 0) {
		if (++walked > STEAL_MAX_WALK)
			break;
		if (bpf_cpumask_test_cpu(cpu, p->cpus_ptr) && !is_migration_disabled(p))
			return true;
	}
	return false;
}

/* How long a queued task may wait before it runs out of vtime order. */
static u64 starve_ns(void)
{
	u64 ms = timeout_ms ?: IDLESTEAL_TIMEOUT_MS;

	return ms * 1000000ULL / STARVE_DIV;
}

/* How long @p has been runnable without running, in ns (jiffies-grained). */
static u64 waited_ns(struct task_struct *p, u64 jnow)
{
	u64 hz = CONFIG_HZ > 0 ? CONFIG_HZ : 100;

	return (jnow - p->scx.runnable_at) * (1000000000ULL / hz);
}

/*
 * Run the task of this CPU's queue that has waited longest, if it has
 * waited starve_ns() or more, looking at most every starve_ns() /
 * STARVE_CHECKS.  Vtime order alone can make a task wait for any length of
 * time: one of a cgroup of cpu.weight 1 is charged 10,000 times what one of
 * weight 10,000 is for the same runtime (nice -20 against 19: about 6,000),
 * so one slice of it puts it behind 10,000 slices of the other, and
 * sched_ext's watchdog ejects the scheduler after its limit (the loader's
 * -t).  Such a task is late in vtime order, so the walk starts at the
 * queue's tail and looks at STARVE_MAX_WALK tasks, all of a queue that
 * long or shorter; and at its head, where the tasks that waited their turn
 * in vtime order are.
 *
 * The longest wait, not the first found over the limit: when the queue is
 * so long that a turn of it takes longer than starve_ns() (40 tasks on one
 * CPU with 5 ms slices), most of its tasks are over the limit, the guard
 * acts at every dispatch, and the head of the queue runs only when the
 * guard does not act.  A guard that took the first task found from the
 * tail would serve the tail while the head and the tasks behind it wait
 * past the watchdog's limit; taking the longest wait, its rescues go round
 * the queue in the order of the waits.  The walk then costs a pass over
 * the queue at every dispatch for as long as tasks starve, and one every
 * starve_ns() / STARVE_CHECKS otherwise.
 *
 * Deriving both times from the watchdog's limit keeps the guard ahead of
 * the watchdog at any -t; after a rescue the next dispatch looks again, so
 * several starved at once run one a dispatch.
 */
static bool run_starved(s32 cpu, struct cpu_ctx *cctx, u64 now)
{
	struct task_struct *p, *head;
	struct task_ctx *tctx;
	u64 limit = starve_ns(), longest = 0, waited, jnow;
	u32 walked = walk_zero;
	s32 pid = -1;

	if (now < cctx->next_starve_check)
		return false;
	cctx->next_starve_check = now + limit / STARVE_CHECKS;
	if (scx_bpf_dsq_nr_queued(cpu) <= 0)
		return false;
	jnow = bpf_jiffies64();
	bpf_for_each(scx_dsq, p, cpu, SCX_DSQ_ITER_REV) {
		if (++walked > STARVE_MAX_WALK)
			break;
		waited = waited_ns(p, jnow);
		if (waited >= limit && waited > longest) {
			longest = waited;
			pid = p->pid;
		}
	}

	/* the head, if it waited as long (0 if no task of the walk is late) */
	head = __COMPAT_scx_bpf_dsq_peek(cpu);
	waited = head ? waited_ns(head, jnow) : 0;
	if (waited >= limit && waited >= longest) {
		/* in vtime order: the clock may follow it */
		if (!scx_bpf_dsq_move_to_local(cpu, 0))
			return false;
		goto rescued;
	}
	if (pid < 0)
		return false;

	walked = walk_zero;
	bpf_for_each(scx_dsq, p, cpu, SCX_DSQ_ITER_REV) {
		if (++walked > STARVE_MAX_WALK)
			break;
		if (p->pid != pid)
			continue;
		/* Its vtime is no measure of the clock (ops.running()). */
		tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
		if (tctx)
			tctx->out_of_order = true;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			goto rescued;
		if (tctx)
			tctx->out_of_order = false;
		break;
	}
	return false;

rescued:
	stat_add(IDLESTEAL_STAT_STARVED, 1);
	refresh_overloaded(cpu);
	/* look again soon: another may be as late */
	cctx->next_starve_check = now;
	return true;
}

void BPF_STRUCT_OPS(idlesteal_dispatch, s32 cpu, struct task_struct *prev)
{
	struct want any = { .bounded = false }, below;
	struct task_struct *head;
	struct cpu_ctx *cctx;
	bool prev_runs = prev && (prev->scx.flags & SCX_TASK_QUEUED);
	u64 now, t0 = 0, cost, sl;
	bool stolen, timed;

	cctx = this_cpu_ctx();
	if (cctx && run_starved(cpu, cctx, now_ns()))
		return;

	/*
	 * The fallback queue first, but only for a task earlier in vtime than
	 * the head of this CPU's own queue, or, with that empty, than what
	 * @prev (still runnable, its slice used up) will have.
	 */
	if (scx_bpf_dsq_nr_queued(FALLBACK_DSQ) > 0) {
		head = __COMPAT_scx_bpf_dsq_peek(cpu);
		if (head) {
			below.bounded = true;
			below.below = head->scx.dsq_vtime;
		} else if (prev_runs) {
			below.bounded = true;
			below.below = charged_vtime(prev);
		} else {
			below.bounded = false;
		}
		if (take_fallback(cpu, &below))
			return;
	}

	/*
	 * @prev used up its slice and is still runnable: the CPU runs what
	 * has had least, in vtime, of @prev (once charged), the head of its
	 * own queue, and the tasks waiting elsewhere in the LLC.  So the
	 * LLC's CPU-bound tasks run in one vtime order, which is what makes
	 * weights (nice, cpu.weight) hold when every CPU is busy:
	 *
	 * - a task waiting elsewhere in the LLC with less is pulled here.
	 *   Without this N+1 CPU-bound tasks on N CPUs never move (no CPU
	 *   goes idle, so nobody steals, and two tasks share one CPU for
	 *   good), and two cgroups' tasks split each CPU by its own mix, a
	 *   CPU with two tasks of one cgroup 1:1 whatever the weights;
	 * - @prev keeps the CPU while it is behind the head of its queue:
	 *   otherwise the turn alternates between a CPU's tasks at every
	 *   slice end, since vtime only orders the waiting ones.
	 *
	 * @prev goes to this CPU's queue (ops.enqueue()) when it loses, where
	 * the next CPU whose slice ends may take it in turn.  A task that
	 * yielded to a waiting task is not kept.
	 */
	if (prev_runs && !yielded(prev)) {
		bool own = false;

		below.bounded = true;
		below.below = charged_vtime(prev);
		/*
		 * A task kept running is not started again (ops.running()):
		 * without this, CPUs that keep their tasks would leave the
		 * clock where it was, and a task that wakes or starts would be
		 * placed that far behind them in vtime, and run ahead of them
		 * until it has caught up (the guest test "newcomers": whole
		 * CPUs where the fair share is half).
		 */
		advance_clock(below.below);
		head = __COMPAT_scx_bpf_dsq_peek(cpu);
		if (head && !time_before(below.below, head->scx.dsq_vtime)) {
			below.below = head->scx.dsq_vtime;
			own = true;
		}
		if (steal_enabled && anything_to_steal(cpu) && steal(cpu, &below)) {
			stat_add(IDLESTEAL_STAT_PULL, 1);
			return;
		}
		if (steal_enabled && pull_other_llcs(cpu, &below)) {
			stat_add(IDLESTEAL_STAT_PULL_LLC, 1);
			return;
		}
		if (own && scx_bpf_dsq_move_to_local(cpu, 0)) {
			refresh_overloaded(cpu);
			return;
		}
		if (head)
			stat_add(IDLESTEAL_STAT_KEPT, 1);
		refresh_overloaded(cpu);
		sl = task_slice(cpu);
		if (sl < slice())
			stat_add(IDLESTEAL_STAT_SHORT, 1);
		scx_bpf_task_set_slice(prev, sl);
		return;
	}

	if (scx_bpf_dsq_move_to_local(cpu, 0)) {
		refresh_overloaded(cpu);
		return;
	}
	set_overloaded(cpu, false);

	if (prev_runs)
		return;

	if (!steal_enabled || !anything_to_steal(cpu) || !cctx)
		return;

	now = now_ns();
	if (cctx->kicked)
		cctx->kicked = 0;
	else if (steal_gated(cctx, now)) {
		stat_add(IDLESTEAL_STAT_GATED, 1);
		return;
	}

	timed = steal_timed(cctx);
	if (timed)
		t0 = bpf_ktime_get_ns();
	stolen = steal(cpu, &any);
	if (timed) {
		cost = bpf_ktime_get_ns() - t0;
		update_avg(&cctx->avg_cost,
			   cost < STEAL_COST_CLAMP_NS ? cost : STEAL_COST_CLAMP_NS);
		stat_add(IDLESTEAL_STAT_SEARCH_NS, cost);
		stat_add(IDLESTEAL_STAT_TIMED, 1);
	}
	cctx->next_decay = now + STEAL_COST_DECAY_NS;
	stat_add(stolen ? IDLESTEAL_STAT_STEAL : IDLESTEAL_STAT_FAILED, 1);
	if (stolen)
		return;

	/*
	 * Moving a task from a victim's queue drops this CPU's rq lock.  A
	 * task queued here meanwhile found this CPU not idle, so nobody kicked
	 * it, and if this CPU came here from idle it goes back to idle without
	 * ops.update_idle() being called: look at the own queue again, now
	 * that the lock is held.
	 */
	if (scx_bpf_dsq_move_to_local(cpu, 0)) {
		stat_add(IDLESTEAL_STAT_RECHECK, 1);
		refresh_overloaded(cpu);
	} else if (take_fallback(cpu, &any)) {
		stat_add(IDLESTEAL_STAT_RECHECK, 1);
	}
}

void BPF_STRUCT_OPS(idlesteal_update_idle, s32 cpu, bool idle)
{
	struct cpu_ctx *cctx = this_cpu_ctx();
	u64 now = now_ns();

	if (!cctx)
		return;
	if (idle) {
		cctx->idle_at = now;
		/*
		 * The interlock with ops.enqueue() (see __scx_update_idle()):
		 * the kernel sets the idle bit before calling this, so either
		 * an enqueue saw this CPU idle and kicked it, or this sees the
		 * task it queued.  A task can be queued here without this
		 * CPU's rq lock (the kernel's global-queue pass after
		 * ops.dispatch() drops it): wake up and dispatch it.  The
		 * fallback queue is shared: a task queued there just after
		 * this look waits for the next CPU of its mask to dispatch (a
		 * slice at most); ops.enqueue() kicks an idle one.
		 */
		if (scx_bpf_dsq_nr_queued(cpu) > 0 || fallback_for(cpu)) {
			stat_add(IDLESTEAL_STAT_IDLE_KICK, 1);
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		}
	} else if (cctx->idle_at) {
		update_avg(&cctx->avg_idle, now - cctx->idle_at);
		cctx->idle_at = 0;
	}
}

void BPF_STRUCT_OPS(idlesteal_running, struct task_struct *p)
{
	struct cpu_ctx *cctx = this_cpu_ctx();
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	/*
	 * The clock follows the vtime of the tasks that start running, which
	 * run in vtime order; not one run out of that order (it starved, or a
	 * steal took it past the head of its queue for its long wait), which
	 * may be far ahead (a task of a cgroup of weight 1): tasks placed by
	 * the clock (advance_clock()) would wait behind everything queued.
	 */
	if (tctx && tctx->out_of_order)
		tctx->out_of_order = false;
	else
		advance_clock(p->scx.dsq_vtime);
	if (tctx)
		tctx->exec_at = p->se.sum_exec_runtime;
	if (cctx) {
		u64 now = now_ns();

		cctx->curr_vtime = p->scx.dsq_vtime;
		cctx->curr_weight = p->scx.weight;
		WRITE_ONCE(cctx->curr_at, now);
		cctx->run_at = now;
	}
	/*
	 * Its slice, by the tasks waiting for this CPU now (task_slice()):
	 * only ever shortened (a task that resumes what was left of its slice
	 * keeps no more than that).
	 */
	if (scale_slices) {
		u64 sl = task_slice(scx_bpf_task_cpu(p));

		if (sl < p->scx.slice) {
			stat_add(IDLESTEAL_STAT_SHORT, 1);
			scx_bpf_task_set_slice(p, sl);
		}
	}
}

/*
 * sched_yield(): @from gives its CPU up only to a task waiting for this CPU
 * (its own queue, or a fallback task that may run here): then its slice
 * ends.  With nothing waiting it keeps its slice and the kernel keeps it
 * running without calling ops.dispatch(); sched_ext's default without
 * ops.yield() ends the slice, which costs a dispatch (and a search for
 * something to pull) and a slice refill per call.  Either way it is charged
 * what it ran (ops.stopping()), not a slice.  yield_to() (@to set) is not
 * supported: no boost, false.
 *
 * "Waiting" is read from this CPU's overload bit and the fallback gate
 * (fallback_maybe()), not by counting the two queues: counting a DSQ looks it
 * up by id in a hash table, twice per sched_yield() call.
 * The bit can be stale for a moment either way: set after a steal took
 * the last task (the slice ends for nothing, a dispatch sets it right), or
 * clear while a task queued without this CPU's lock (then that task waits
 * out the slice, as it would for a yielder that keeps running).  It is not
 * set for a migration-disabled task (6.12, or -m), which no stealer may
 * take; that one waits out the slice too.
 */
bool BPF_STRUCT_OPS(idlesteal_yield, struct task_struct *from, struct task_struct *to)
{
	s32 cpu;

	if (to)
		return false;
	cpu = scx_bpf_task_cpu(from);
	if (is_overloaded(cpu_llc_of(cpu), cpu_pos_of(cpu)) ||
	    (fallback_maybe() && fallback_for(cpu))) {
		struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, from, 0, 0);

		if (tctx)
			tctx->yielded = true;
		scx_bpf_task_set_slice(from, 0);
		stat_add(IDLESTEAL_STAT_YIELD_GIVE, 1);
	} else {
		stat_add(IDLESTEAL_STAT_YIELD_KEEP, 1);
	}
	return false;
}

/* Charge what @p ran, weighted: its real runtime, not its slice. */
void BPF_STRUCT_OPS(idlesteal_stopping, struct task_struct *p, bool runnable)
{
	struct cpu_ctx *cctx = this_cpu_ctx();

	if (cctx) {
		WRITE_ONCE(cctx->curr_at, 0);
		count_busy(cctx, now_ns());
		cctx->run_at = 0;
	}
	scx_bpf_task_set_dsq_vtime(p, charged_vtime(p));
}

/*
 * cpufreq: a scheduler that never calls scx_bpf_cpuperf_set() leaves every
 * CPU's target at full performance (SCX_CPUPERF_ONE), whatever its load,
 * and schedutil follows that.  Each CPU sets its own from the share of
 * the last PERF_WINDOW_NS its tasks ran, averaged over windows (a quarter
 * weight to the new one, so a CPU that turns busy reaches 90% of full in
 * eight windows), at a tick: a CPU that runs a task for long ticks, an
 * idle one does not and keeps its last target (the hardware's idle states
 * are cpufreq's business then).
 */
static void update_cpuperf(struct cpu_ctx *cctx, s32 cpu, u64 now)
{
	u64 span, busy, util;

	count_busy(cctx, now);
	if (cctx->run_at)
		cctx->run_at = now;
	if (!cctx->perf_at || now < cctx->perf_at) {
		cctx->perf_at = now;
		cctx->perf_busy = cctx->busy_ns;
		return;
	}
	span = now - cctx->perf_at;
	if (span < PERF_WINDOW_NS)
		return;
	busy = cctx->busy_ns - cctx->perf_busy;
	util = busy >= span ? SCX_CPUPERF_ONE : busy * SCX_CPUPERF_ONE / span;
	cctx->perf_lvl = (3 * cctx->perf_lvl + util) / 4;
	cctx->perf_at = now;
	cctx->perf_busy = cctx->busy_ns;
	scx_bpf_cpuperf_set(cpu, cctx->perf_lvl);
}

void BPF_STRUCT_OPS(idlesteal_tick, struct task_struct *p)
{
	struct cpu_ctx *cctx = this_cpu_ctx();

	if (cctx)
		update_cpuperf(cctx, bpf_get_smp_processor_id(), now_ns());
}

/* A new task starts at the clock, by which a waking one is placed. */
void BPF_STRUCT_OPS(idlesteal_enable, struct task_struct *p)
{
	scx_bpf_task_set_dsq_vtime(p, vtime_now);
}

/*
 * cpu.weight.  Each task's cgroup is known from ops.init_task() and
 * ops.cgroup_move() (by id: scx_bpf_task_cgroup() may only be asked about
 * the task an operation is called for, and the charge is also computed for
 * @prev in ops.dispatch()).  A task of a cgroup below the root adds its
 * weight to its cgroup's runnable weight while it is runnable; the charge
 * (vtime_charge()) divides the cgroup's weight by it.
 */
static void task_set_cgroup(struct task_struct *p, struct cgroup *cgrp)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return;
	tctx->cgid = cgrp->kn->id;
	tctx->in_cgroup = cgrp->level > 0;
}

s32 BPF_STRUCT_OPS(idlesteal_init_task, struct task_struct *p,
		   struct scx_init_task_args *args)
{
	/* No such field on a kernel without CONFIG_EXT_GROUP_SCHED. */
	if (bpf_core_field_exists(args->cgroup) && args->cgroup)
		task_set_cgroup(p, args->cgroup);
	return 0;
}

/* Called between ops.quiescent() and ops.runnable() for a runnable task. */
void BPF_STRUCT_OPS(idlesteal_cgroup_move, struct task_struct *p,
		    struct cgroup *from, struct cgroup *to)
{
	task_set_cgroup(p, to);
}

/*
 * One more (@delta 1) or one fewer (-1) active thing in cgroup @id: a
 * runnable task, or an active child.  A count that goes 0 -> 1 makes the
 * cgroup active in its parent, 1 -> 0 inactive, and so on up: its
 * cpu.weight joins or leaves the parent's child_weight and the parent's
 * count moves by one.  The counts move by atomic +-1 and a cgroup's moves
 * across 0 <-> 1 alternate, so the parent sees one join per leave whatever
 * the order of concurrent wakeups and sleeps; its count may pass below 0
 * for a moment (a leave's -1 ahead of the join's +1), which is neither a
 * join nor a leave.
 */
static void cgrp_activity(u64 id, s64 delta)
{
	struct cgrp_ctx *cgc, *parent;
	s64 old;
	u32 i;

	bpf_for(i, 0, MAX_CGROUP_DEPTH) {
		cgc = bpf_map_lookup_elem(&cgrp_ctxs, &id);
		if (!cgc)
			return;
		old = __sync_fetch_and_add(&cgc->nr_active, delta);
		if (old != (delta > 0 ? 0 : 1))
			return;
		id = cgc->parent_id;
		if (!id)
			return;
		parent = bpf_map_lookup_elem(&cgrp_ctxs, &id);
		if (!parent)
			return;
		__sync_fetch_and_add(&parent->child_weight, delta * cgrp_weight(cgc));
	}
}

void BPF_STRUCT_OPS(idlesteal_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	struct cgrp_ctx *cgc;

	if (!tctx || !tctx->in_cgroup || tctx->cg_added)
		return;
	cgc = bpf_map_lookup_elem(&cgrp_ctxs, &tctx->cgid);
	if (!cgc)
		return;
	tctx->cg_added_id = tctx->cgid;
	tctx->cg_added = p->scx.weight ?: 1;
	__sync_fetch_and_add(&cgc->runnable_weight, tctx->cg_added);
	cgrp_activity(tctx->cgid, 1);
}

/* ... and takes back what it added, whatever nice or a move did since. */
void BPF_STRUCT_OPS(idlesteal_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	struct cgrp_ctx *cgc;
	s64 w;

	if (!tctx || !tctx->cg_added)
		return;
	w = tctx->cg_added;
	tctx->cg_added = 0;
	cgc = bpf_map_lookup_elem(&cgrp_ctxs, &tctx->cg_added_id);
	if (!cgc)
		return;
	__sync_fetch_and_sub(&cgc->runnable_weight, w);
	cgrp_activity(tctx->cg_added_id, -1);
}

/*
 * cpu.idle of a cgroup that is there before the scheduler: sched_ext passes
 * only the weight and bandwidth to ops.cgroup_init(), and calls
 * ops.cgroup_set_idle() on changes.  Read from its task group, CO-RE: the
 * field is task_group.scx.idle in 7.2 (older vmlinux.h headers, the one
 * scx_cargo ships, call it sched_idle); a kernel without it has no
 * ops.cgroup_set_idle() either (6.12), and cpu.idle is then not applied.
 */
struct scx_task_group___idle {
	bool idle;
} __attribute__((preserve_access_index));

struct task_group___idle {
	struct cgroup_subsys_state css;
	struct scx_task_group___idle scx;
} __attribute__((preserve_access_index));

static bool cgrp_idle_now(struct cgroup *cgrp)
{
	struct cgroup_subsys_state *css = NULL;
	struct task_group___idle *tg;
	int id = bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id);
	bool idle = false;

	if (!bpf_core_field_exists(((struct task_group___idle *)0)->scx.idle) ||
	    id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return false;
	if (bpf_core_read(&css, sizeof(css), &cgrp->subsys[id]) || !css)
		return false;
	tg = (void *)css - bpf_core_field_offset(struct task_group___idle, css);
	if (bpf_core_read(&idle, sizeof(idle), &tg->scx.idle))
		return false;
	return idle;
}

/*
 * A cgroup the map has no room for keeps its tasks' own weights.  sched_ext
 * calls this for a parent before its children.
 */
s32 BPF_STRUCT_OPS_SLEEPABLE(idlesteal_cgroup_init, struct cgroup *cgrp,
			     struct scx_cgroup_init_args *args)
{
	struct cgrp_ctx cgc = { .weight = args->weight };
	struct cgroup *parent;
	u64 id = cgrp->kn->id;

	cgc.idle = cgrp_idle_now(cgrp);
	if (cgrp->level > 1) {
		parent = bpf_cgroup_ancestor(cgrp, cgrp->level - 1);
		if (parent) {
			cgc.parent_id = parent->kn->id;
			bpf_cgroup_release(parent);
		}
	}
	bpf_map_update_elem(&cgrp_ctxs, &id, &cgc, BPF_NOEXIST);
	return 0;
}

void BPF_STRUCT_OPS(idlesteal_cgroup_exit, struct cgroup *cgrp)
{
	u64 id = cgrp->kn->id;

	bpf_map_delete_elem(&cgrp_ctxs, &id);
}

/*
 * A new cpu.weight or cpu.idle for cgroup @cgrp.  An active cgroup's weight
 * is in its parent's child_weight: it moves there too.  Not atomic with a
 * join or leave of this cgroup: a change just as its first task wakes or
 * its last one sleeps can leave the parent's sum off by the difference (its
 * children then get a little more or less than their share); the sum is
 * read no lower than the cgroup's own weight (cgrp_hweight()).
 */
static void cgrp_reweight(struct cgroup *cgrp, s64 weight, s64 idle)
{
	u64 id = cgrp->kn->id;
	struct cgrp_ctx *cgc = bpf_map_lookup_elem(&cgrp_ctxs, &id);
	struct cgrp_ctx *parent;
	s64 old;

	if (!cgc)
		return;
	old = cgrp_weight(cgc);
	if (weight >= 0)
		cgc->weight = weight;
	if (idle >= 0)
		cgc->idle = idle;
	id = cgc->parent_id;
	if (!id || READ_ONCE(cgc->nr_active) <= 0)
		return;
	parent = bpf_map_lookup_elem(&cgrp_ctxs, &id);
	if (parent)
		__sync_fetch_and_add(&parent->child_weight, (s64)cgrp_weight(cgc) - old);
}

void BPF_STRUCT_OPS(idlesteal_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	cgrp_reweight(cgrp, weight, -1);
}

/*
 * Not in idlesteal_ops below: the loader sets it where the kernel has
 * ops.cgroup_set_idle (6.19+).  libbpf refuses a whole object whose ops set
 * a member the kernel lacks, and veristat (6.12's) loads the object as it
 * is, so on 6.12 it would verify nothing.
 */
void BPF_STRUCT_OPS(idlesteal_cgroup_set_idle, struct cgroup *cgrp, bool idle)
{
	cgrp_reweight(cgrp, -1, idle);
}

/*
 * CPU hotplug.  Without these sched_ext exits the scheduler on every CPU
 * change (the loader then loads it again, which under QEMU TCG takes 1-2 s
 * of BPF verification, and a change meanwhile aborts the load).
 *
 * A CPU going offline: sched_cpu_deactivate() takes it out of the active
 * mask, waits for an RCU grace period (the CPU still dispatches and
 * ops.enqueue() is still called for its runqueue meanwhile), takes its
 * runqueue offline, and only then calls ops.cpu_offline().  Taking the
 * runqueue offline (rq_offline_scx()) puts every task of it that is not
 * on its local DSQ there, without ops.enqueue(), and balance_push() moves
 * them to active CPUs; 7.2 and 6.12.117 do both, in this order.  A task in
 * a CPU's queue is always on that CPU's runqueue: the queue is the one of
 * task_cpu() when it is inserted (the fallback queue and a remote CPU's
 * local DSQ are the exceptions, and neither belongs to a CPU), and a task
 * leaves the queue before it migrates.  So the queue is empty when
 * ops.cpu_offline() runs (the ports' guest test takes a CPU offline with
 * tasks in its queue); the CPU is only dropped from its LLC's overload
 * mask so that stealers skip it.
 *
 * The loader sees the online CPUs change within 100 ms and rewrites the
 * topology tables; until then a CPU that was offline when they were last
 * written belongs to no LLC: it serves its own queue and the fallback
 * queue, takes tasks sent to it as an idle CPU, but neither steals nor is
 * stolen from.
 */
void BPF_STRUCT_OPS(idlesteal_cpu_online, s32 cpu)
{
	stat_add(IDLESTEAL_STAT_HOTPLUG, 1);
}

void BPF_STRUCT_OPS(idlesteal_cpu_offline, s32 cpu)
{
	set_overloaded(cpu, false);
	stat_add(IDLESTEAL_STAT_HOTPLUG, 1);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(idlesteal_init)
{
	u32 i;
	s32 ret;

	bpf_for(i, 0, MAX_CPUS) {
		if (i >= nr_cpus)
			break;
		ret = scx_bpf_create_dsq(i, -1);
		if (ret) {
			scx_bpf_error("failed to create DSQ %d (%d)", i, ret);
			return ret;
		}
	}
	ret = scx_bpf_create_dsq(FALLBACK_DSQ, -1);
	if (ret)
		scx_bpf_error("failed to create the fallback DSQ (%d)", ret);
	return ret;
}

/*
 * Debug dump: sched_ext calls these when it ejects the scheduler (the
 * loader prints the dump after "EXIT:"), with the kernel's own per-CPU and
 * per-task lines around them.  What a stall report needs from us: the
 * switches, the counters, each LLC's overload mask, and per CPU its queue,
 * its overload bit and the state of its steal gate.
 */
static u64 stat_total(u32 idx)
{
	u64 *cnt, sum = 0;
	u32 cpu;

	bpf_for(cpu, 0, MAX_CPUS) {
		if (cpu >= nr_cpus)
			break;
		cnt = bpf_map_lookup_percpu_elem(&stats, &idx, cpu);
		if (cnt)
			sum += *cnt;
	}
	return sum;
}

void BPF_STRUCT_OPS(idlesteal_dump, struct scx_dump_ctx *dctx)
{
	struct mask_chunk *c;
	u32 llc, i;

	scx_bpf_dump("idlesteal: steal=%d nearest_llc=%d slice_ns=%llu vtime_now=%llu\n",
		     steal_enabled, nearest_llc, slice(), vtime_now);
	scx_bpf_dump("idlesteal: steals=%llu failed=%llu gated=%llu kicks=%llu\n",
		     stat_total(IDLESTEAL_STAT_STEAL), stat_total(IDLESTEAL_STAT_FAILED),
		     stat_total(IDLESTEAL_STAT_GATED), stat_total(IDLESTEAL_STAT_KICK));
	scx_bpf_dump("idlesteal: local=%llu queued=%llu fallback=%llu remote_llc=%llu\n",
		     stat_total(IDLESTEAL_STAT_LOCAL), stat_total(IDLESTEAL_STAT_QUEUED),
		     stat_total(IDLESTEAL_STAT_FALLBACK), stat_total(IDLESTEAL_STAT_REMOTE_LLC));
	scx_bpf_dump("idlesteal: sync_queued=%llu recheck=%llu idle_kick=%llu pulls=%llu\n",
		     stat_total(IDLESTEAL_STAT_SYNC_QUEUED), stat_total(IDLESTEAL_STAT_RECHECK),
		     stat_total(IDLESTEAL_STAT_IDLE_KICK), stat_total(IDLESTEAL_STAT_PULL));
	scx_bpf_dump("idlesteal: fallback_run=%llu migdis=%llu remote_idle=%llu fallback_queued=%d\n",
		     stat_total(IDLESTEAL_STAT_FALLBACK_RUN), stat_total(IDLESTEAL_STAT_MIGDIS),
		     stat_total(IDLESTEAL_STAT_REMOTE_IDLE), scx_bpf_dsq_nr_queued(FALLBACK_DSQ));
	scx_bpf_dump("idlesteal: yield_keep=%llu yield_give=%llu hotplug=%llu kept=%llu\n",
		     stat_total(IDLESTEAL_STAT_YIELD_KEEP), stat_total(IDLESTEAL_STAT_YIELD_GIVE),
		     stat_total(IDLESTEAL_STAT_HOTPLUG), stat_total(IDLESTEAL_STAT_KEPT));
	scx_bpf_dump("idlesteal: pull_llc=%llu starved=%llu preempt=%llu short=%llu\n",
		     stat_total(IDLESTEAL_STAT_PULL_LLC), stat_total(IDLESTEAL_STAT_STARVED),
		     stat_total(IDLESTEAL_STAT_PREEMPT), stat_total(IDLESTEAL_STAT_SHORT));
	scx_bpf_dump("idlesteal: slice_min_ns=%llu scale_slices=%d wake_preempt=%d\n",
		     slice_min(), scale_slices, wake_preempt);

	bpf_for(llc, 0, MAX_LLCS) {
		if (llc >= nr_llcs)
			break;
		scx_bpf_dump("idlesteal: llc %u node %u cpus %u overloaded positions:",
			     llc, llc_node_of(llc), llc_nr(llc));
		bpf_for(i, 0, MAX_CHUNKS) {
			c = llc_chunk(llc, i);
			if (!c)
				break;
			if (c->word)
				scx_bpf_dump(" %u+0x%llx", i * CHUNK_BITS, c->word);
		}
		scx_bpf_dump("\n");
	}
}

void BPF_STRUCT_OPS(idlesteal_dump_cpu, struct scx_dump_ctx *dctx, s32 cpu, bool idle)
{
	struct cpu_ctx *cctx;
	u32 zero = 0, llc;
	s32 queued;

	if (cpu < 0 || cpu >= MAX_CPUS)
		return;
	queued = scx_bpf_dsq_nr_queued(cpu);
	/* No output for an idle CPU with nothing queued: the kernel skips it. */
	if (idle && queued <= 0)
		return;
	cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu);
	llc = cpu_llc_of(cpu);
	scx_bpf_dump("idlesteal: queue=%d overloaded=%d llc=%u pos=%u\n",
		     queued, llc < MAX_LLCS && is_overloaded(llc, cpu_pos_of(cpu)),
		     llc, cpu_pos_of(cpu));
	if (cctx)
		scx_bpf_dump("idlesteal: avg_idle_ns=%llu avg_cost_ns=%llu gated=%d idle_since_ns=%llu perf=%llu\n",
			     cctx->avg_idle, cctx->avg_cost, cctx->avg_idle < cctx->avg_cost,
			     cctx->idle_at, cctx->perf_lvl);
}

void BPF_STRUCT_OPS(idlesteal_dump_task, struct scx_dump_ctx *dctx, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);

	scx_bpf_dump("idlesteal: vtime-vtime_now=%lld allowed_on_task_cpu=%d",
		     (s64)(p->scx.dsq_vtime - vtime_now),
		     bpf_cpumask_test_cpu(cpu, p->cpus_ptr));
}

void BPF_STRUCT_OPS(idlesteal_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(idlesteal_ops,
	       .select_cpu		= (void *)idlesteal_select_cpu,
	       .enqueue			= (void *)idlesteal_enqueue,
	       .dispatch		= (void *)idlesteal_dispatch,
	       .update_idle		= (void *)idlesteal_update_idle,
	       .running			= (void *)idlesteal_running,
	       .stopping		= (void *)idlesteal_stopping,
	       .tick			= (void *)idlesteal_tick,
	       .yield			= (void *)idlesteal_yield,
	       .enable			= (void *)idlesteal_enable,
	       .init_task		= (void *)idlesteal_init_task,
	       .runnable		= (void *)idlesteal_runnable,
	       .quiescent		= (void *)idlesteal_quiescent,
	       .cgroup_init		= (void *)idlesteal_cgroup_init,
	       .cgroup_exit		= (void *)idlesteal_cgroup_exit,
	       .cgroup_move		= (void *)idlesteal_cgroup_move,
	       .cgroup_set_weight	= (void *)idlesteal_cgroup_set_weight,
	       .cpu_online		= (void *)idlesteal_cpu_online,
	       .cpu_offline		= (void *)idlesteal_cpu_offline,
	       .init			= (void *)idlesteal_init,
	       .dump			= (void *)idlesteal_dump,
	       .dump_cpu		= (void *)idlesteal_dump_cpu,
	       .dump_task		= (void *)idlesteal_dump_task,
	       .exit			= (void *)idlesteal_exit,
	       /*
	        * The flags the peers set, and why not here:
	        * ENQ_LAST: ops.dispatch() already sees the task whose slice
	        *   ended (its pulls); ops.enqueue() for a CPU's last task would
	        *   add a round trip to keep it running.
	        * ENQ_EXITING: an exiting task in the local DSQ, as the kernel
	        *   puts it, cannot be stranded in a queue of ours.
	        * ENQ_MIGRATION_DISABLED: such a task can only run where it is,
	        *   which the local DSQ gives; -m sets it (a test switch).
	        * ALLOW_QUEUED_WAKEUP: wakeups by IPI would save the waker the
	        *   remote runqueue lock on big machines; not measured here.
	        */
	       .flags			= SCX_OPS_KEEP_BUILTIN_IDLE,
	       .timeout_ms		= IDLESTEAL_TIMEOUT_MS,
	       .name			= "idlesteal");
