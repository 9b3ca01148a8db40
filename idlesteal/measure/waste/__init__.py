"""Wasted CPU time from a scheduler trace (docs/waste.md).

Input: the text of /sys/kernel/tracing/trace (or trace_pipe) with the
events sched_switch, sched_waking, sched_wakeup, sched_wakeup_new,
sched_migrate_task and, optionally, sched_process_exit and trace_marker
lines (tracing_mark_write) naming the window.  Output: `Waste`, and on
request a per-CPU timeline of idle / run / wasted segments.

The model (guest time, nanoseconds inside, seconds outside):

* A CPU runs one task at a time; pid 0 (swapper/N) is idle.  The CPU
  field ``[NNN]`` of a line is the CPU the event was recorded on and the
  ``comm-PID`` before it is the task that was current there.
* A task is RUNNING on the CPU that switched to it; WAITING on CPU c
  (runnable, not running) after a wakeup with target_cpu=c, after being
  switched out with prev_state R or R+ (preempted or yielding) on c, and
  on dest_cpu after a sched_migrate_task while waiting; BLOCKED after a
  switch-out with any other state, or after sched_waking until its
  sched_wakeup (between the two it is on no runqueue: its wakeup IPI is
  in flight).  A wakeup of a task that is still running (it set its
  state but had not yet scheduled) changes nothing.
* A task WAITING on CPU c' counts as a *waiter* for another CPU c when
  c is in its allowed set and, by default, c' is busy (running a task).
  A task waiting on an idle CPU is the wakeup that CPU is about to serve
  (IPI to switch-in); no other CPU could run it sooner, so it does not
  make other CPUs' idle time wasted.  ``waiters_on_idle_cpus=True``
  counts it anyway (the definition read literally).
* CPU c is *wasted* at a level (llc, node, machine) while it is idle and
  at least one waiter sits on another CPU of c's LLC / NUMA node / the
  machine.  The levels are inclusive: LLC-wasted implies node-wasted
  implies machine-wasted, so node - llc is the time only a cross-LLC
  pull inside the node could have used, machine - node only a
  cross-node one.
* An *episode* is a maximal interval during which one CPU is
  LLC-wasted.  It began by ``idle_entry`` when it starts at that CPU's
  own switch to idle (a task was already waiting in its LLC: the pull at
  idle entry did not happen or failed), by ``arrival`` otherwise: the
  CPU was already idle when a waiter appeared in its LLC (a wakeup onto
  a busy CPU, a preemption, a migration, or a CPU that hosted a pending
  wakeup becoming busy).  Episodes of zero length are dropped.
* Run delay: the total time tasks spent WAITING (every waiting task,
  wherever it waits).
* Migrations: every sched_migrate_task inside the window of a
  task that is not a per-CPU kthread (by name, as for affinity) and not
  the idle task.  A *waiting-task move* is one of a task that was WAITING
  when it was moved (a pull by the load balancer, newidle balance, a
  steal, an active-balance push of a preempted task); every other one is
  a placement of a sleeping task at its wakeup or fork (or of a task
  whose state is not known yet).  A *bounce* is a waiting-task move
  X -> Y undone by the task's very next migration, also a waiting-task
  move, Y -> X, no later than BOUNCE_WINDOW_NS after the first (counted
  on the first move, so X -> Y -> X -> Y is two; a wakeup placement
  between the two breaks the pair; the first move must lie in the
  window, the return is seen up to the window's end).

Affinity: tracepoints do not carry masks.  `Affinity` gives allowed sets
by pid or by comm (`parse_affinity`); per-CPU kernel threads are pinned
by name (ksoftirqd/N, migration/N, cpuhp/N, kworker/N:..., idle_inject/N,
rcuc/N); every other task is taken as allowed on every online CPU.
That is the approximation: a task that changed its own mask (taskset,
sched_setaffinity, cpusets) and is not in the map is treated as
movable anywhere; a mask is taken as constant over the trace, except
where a trace_marker line ``idlesteal affinity TID CPULIST`` (AFFINITY_MARK,
written by whoever changed the mask, just after the change) gives a
thread its new set from that instant on (workloads/restack.c writes one
per change).  Between the change and its line the old set is used.

What is assumed before the state is known:

* The window starts no earlier than the first event.  A CPU was running
  the task named in the prefix of the first event recorded on it (for a
  sched_switch, prev_pid) since the first event of the trace.  A CPU
  with no event in the first `lookahead` events (or in the whole trace)
  is assumed idle from the start: `Waste.assumed_idle_cpus` lists them.
* A task's state is unknown until an event defines it (a wakeup, a
  switch in or out, the initial current task of a CPU); until then it
  counts as nothing.  Except: a task whose first event within the first
  `lookahead` events is being switched in (or migrated) was runnable and
  waiting from the first event of the trace (no wakeup of it is in the
  trace and no CPU ran it), on the CPU it is switched in on (migrated
  from).  One first seen so later had been waiting since before its first
  event: that waiting is not counted (`Waste.unknown_start_tasks`).  Start
  tracing before the workload, or put the window start after a warm-up,
  and the undercount is confined to what precedes the window.
* The online set is fixed: CPU hotplug during the window is not modelled.

Lost events fail the analysis (`LostEvents`): a ``CPU:N [LOST M EVENTS]``
line, a ``##### CPU N buffer started ####`` line (ftrace prints it only
after an overrun) or a header whose entries-in-buffer is below
entries-written; `check_stats` does the same for per_cpu/cpuN/stats, the
only place that shows events dropped with options/overwrite off.
Timestamps must be seconds.microseconds (a nanosecond trace clock that
all CPUs share, so that lines of different CPUs merge in causal order:
``mono``; ``global`` only where the TSC is stable: under QEMU TCG the
kernel marks it unstable and ``global`` clamps a lagging CPU's events to
the latest stamp, which reorders them).
Events that contradict the model (a switch whose prev_pid is not what
the CPU was running, a task switched in that was not woken or not moved
there, a running task migrated) are counted in `Waste.inconsistencies`:
0 on a complete trace; lines of two CPUs with the same microsecond can
merge out of causal order and add a few.

Cost: one regex match per line, O(1) work per event except when a
domain's count of unpinned waiters goes between 0 and 1 (its CPUs are
re-checked) and for pinned waiters (their allowed CPUs are updated).

The package, one concern a module, each importing only those before it:
`trace` reads the trace text (events, lost-events checks, `WasteError`),
`cpus` the topology and the allowed sets, `result` the measure (`Waste`)
and the timeline's shape, `analyser` the state machine above (`Analyser`,
`analyse`, `timeline`), `plot` the timeline's picture.  Everything is
re-exported here: ``waste.X`` is the name to use outside.
"""
from __future__ import annotations

from ...util import ParseError
from .analyser import Analyser, Bound, analyse, timeline
from .cpus import (AFFINITY_MARK, AFFINITY_SNIPPET, Affinity, Topology, from_preset,
                   kthread_cpu, parse_affinity, parse_affinity_mark)
from .plot import COLOURS, plot_timeline
from .result import (BOUNCE_WINDOW_NS, BUCKETS, KINDS, LEVELS, PERCENTILES, Segment,
                     Timeline, Waste, histogram, percentile)
from .trace import (KNOWN_EVENTS, NS, Event, LostEvents, WasteError, check_header,
                    check_stats, parse, parse_line)

__all__ = [
    "AFFINITY_MARK", "AFFINITY_SNIPPET", "Affinity", "Analyser", "BOUNCE_WINDOW_NS",
    "BUCKETS", "Bound", "COLOURS", "Event", "KINDS", "KNOWN_EVENTS", "LEVELS",
    "LostEvents", "NS", "PERCENTILES", "ParseError", "Segment", "Timeline", "Topology",
    "Waste", "WasteError", "analyse", "check_header", "check_stats", "from_preset",
    "histogram", "kthread_cpu", "parse", "parse_affinity", "parse_affinity_mark",
    "parse_line", "percentile", "plot_timeline", "timeline",
]
