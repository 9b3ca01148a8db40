"""Wasted CPU time from a scheduler trace (issue 19, the split of issue 30).

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
  counts it anyway (the issue's literal wording).
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
* Migrations (issue 20): every sched_migrate_task inside the window of a
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
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping, NamedTuple, Optional, Union

from ..guest.topology import Preset, parse_cpulist
from ..util import HarnessError, ParseError, pyplot

LEVELS = ("llc", "node", "machine")
_LLC, _NODE, _MACHINE = 0, 1, 2
KINDS = ("idle_entry", "arrival")
_IDLE_ENTRY, _ARRIVAL = 0, 1
# Episode length buckets: (upper bound in ns, exclusive; label).
BUCKETS: tuple[tuple[Optional[int], str], ...] = (
    (10_000, "<10us"), (100_000, "10-100us"), (1_000_000, "0.1-1ms"),
    (10_000_000, "1-10ms"), (None, ">=10ms"))
PERCENTILES = (50, 90, 99)
NS = 1_000_000_000
# A waiting-task move undone by the task's next move within this much
# trace time is a bounce (docs/waste.md).
BOUNCE_WINDOW_NS = 5_000_000
_NEVER = 1 << 62            # a window start not yet seen (marker): nothing counts

# Timeline: per CPU, (start s, end s, "idle" | "run" | "wasted"), in order.
Segment = tuple[float, float, str]
Timeline = dict[int, list[Segment]]
Bound = Union[float, str, None]     # seconds, a trace_marker text, or the trace's edge


class WasteError(HarnessError):
    """The trace cannot be analysed as asked (window, CPUs, no events)."""


class LostEvents(WasteError):
    """The ring buffer overflowed: the measurement failed."""

    def __init__(self, cpu: Optional[int], count: Optional[int], line: str, lineno: int = 0):
        self.cpu, self.count, self.line, self.lineno = cpu, count, line, lineno
        where = f"line {lineno}: " if lineno else ""
        super().__init__(f"{where}lost trace events ({line.strip()}): a failed measurement; "
                         "enlarge buffer_size_kb or read trace_pipe while tracing")


# ---------------------------------------------------------------- topology

@dataclass(frozen=True, eq=False)
class Topology:
    """cpu -> LLC id and cpu -> NUMA node id.  Every LLC lies in one node."""
    llc: Mapping[int, int]
    node: Mapping[int, int]

    def __post_init__(self) -> None:
        if set(self.llc) != set(self.node):
            raise WasteError("topology: llc and node maps name different CPUs")
        node_of_llc: dict[int, int] = {}
        for cpu, llc in self.llc.items():
            if node_of_llc.setdefault(llc, self.node[cpu]) != self.node[cpu]:
                raise WasteError(f"topology: LLC {llc} spans NUMA nodes")

    @property
    def cpus(self) -> list[int]:
        return sorted(self.llc)

    @classmethod
    def from_groups(cls, llcs: Iterable[Iterable[int]],
                    nodes: Optional[Iterable[Iterable[int]]] = None) -> Topology:
        """LLC i = the i-th group of CPUs; node j likewise (default: one node)."""
        llc = {cpu: i for i, group in enumerate(llcs) for cpu in group}
        node = ({cpu: j for j, group in enumerate(nodes) for cpu in group}
                if nodes is not None else {cpu: 0 for cpu in llc})
        return cls(llc, node)


def from_preset(preset: Preset) -> Topology:
    """The topology a `topology.Preset` promises (QEMU's CPU numbering:
    consecutive CPUs fill a core, then a die = LLC, then a socket; sockets
    spread evenly over the nodes): 2x2x2 is CPUs 0-3 in LLC 0, 4-7 in LLC 1."""
    return Topology.from_groups(preset.llc_groups(), preset.node_groups())


# ---------------------------------------------------------------- affinity

_PERCPU_KTHREAD = re.compile(r"^(?:ksoftirqd|migration|cpuhp|idle_inject|rcuc)/(\d+)$"
                             r"|^kworker/(\d+):")


def kthread_cpu(comm: str) -> Optional[int]:
    """The CPU a per-CPU kernel thread is bound to, by its name, or None."""
    m = _PERCPU_KTHREAD.match(comm)
    if m is None:
        return None
    return int(m.group(1) if m.group(1) is not None else m.group(2))


@dataclass
class Affinity:
    """Allowed CPUs by pid (a thread id), then by comm; then per-CPU
    kthreads by name; anything else: every CPU (None)."""
    by_pid: dict[int, frozenset[int]] = field(default_factory=dict)
    by_comm: dict[str, frozenset[int]] = field(default_factory=dict)

    def mask(self, pid: int, comm: str) -> Optional[frozenset[int]]:
        if pid in self.by_pid:
            return self.by_pid[pid]
        if comm in self.by_comm:
            return self.by_comm[comm]
        cpu = kthread_cpu(comm)
        return frozenset((cpu,)) if cpu is not None else None


# A guest shell snippet printing the format parse_affinity() reads, one
# line per thread (run it while the workload's threads exist); a thread
# that exits while it runs is left out.
AFFINITY_SNIPPET = r"""for d in /proc/[0-9]*/task/[0-9]*; do
  l=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' $d/status 2>/dev/null) || continue
  c=$(cat $d/comm 2>/dev/null) || continue
  [ -n "$l" ] && [ -n "$c" ] && echo "${d##*/} $c $l"
done"""


def parse_affinity(text: str) -> Affinity:
    """Read lines ``TID COMM CPULIST`` (e.g. ``339 hackbench 0-7``; COMM may
    hold spaces: the first word is the thread id, the last the
    Cpus_allowed_list) and ``* COMM CPULIST`` (every thread of that name).
    Blank lines and lines starting with # are skipped."""
    aff = Affinity()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if len(words) < 3:
            raise ParseError(f"affinity line {n}: want 'TID COMM CPULIST', got {raw!r}")
        try:
            cpus = frozenset(parse_cpulist(words[-1]))
        except ValueError:
            raise ParseError(f"affinity line {n}: bad CPU list {words[-1]!r}") from None
        comm = " ".join(words[1:-1])
        if words[0] == "*":
            aff.by_comm[comm] = cpus
        elif words[0].isdigit():
            aff.by_pid[int(words[0])] = cpus
        else:
            raise ParseError(f"affinity line {n}: want a thread id or '*', got {words[0]!r}")
    return aff


# A trace_marker line giving a thread a new allowed set mid-trace:
# "idlesteal affinity TID CPULIST".
AFFINITY_MARK = "idlesteal affinity "


def parse_affinity_mark(text: str) -> tuple[int, frozenset[int]]:
    """(tid, cpus) of an AFFINITY_MARK line's text; ParseError if malformed."""
    words = text.split()[2:]
    if len(words) != 2 or not words[0].isdigit():
        raise ParseError(f"affinity marker: want '{AFFINITY_MARK}TID CPULIST', got {text!r}")
    try:
        cpus = frozenset(parse_cpulist(words[1]))
    except ValueError:
        raise ParseError(f"affinity marker: bad CPU list in {text!r}") from None
    if not cpus:
        raise ParseError(f"affinity marker: empty CPU list in {text!r}")
    return int(words[0]), cpus


# ---------------------------------------------------------------- parsing

class Event(NamedTuple):
    """One trace line.  ``pid``/``comm`` are the event's task (prev_* for
    sched_switch); ``cpu_arg`` is target_cpu or dest_cpu; ``state`` is
    prev_state for sched_switch and the text for tracing_mark_write."""
    ts: int                 # ns
    cpu: int                # recorded on
    cur: int                # pid current on that CPU when recorded
    name: str
    pid: int = -1
    comm: str = ""
    cpu_arg: int = -1
    orig_cpu: int = -1
    state: str = ""
    next_pid: int = -1
    next_comm: str = ""


_LINE = re.compile(r"-(\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+): (\w+): ?(.*)$")
_SWITCH = re.compile(r"prev_comm=(.*?) prev_pid=(\d+) prev_prio=-?\d+ prev_state=(\S+) ==> "
                     r"next_comm=(.*?) next_pid=(\d+) next_prio=-?\d+")
_WAKE = re.compile(r"comm=(.*?) pid=(\d+) prio=-?\d+(?: success=\d+)? target_cpu=(\d+)")
_MIGRATE = re.compile(r"comm=(.*?) pid=(\d+) prio=-?\d+ orig_cpu=(\d+) dest_cpu=(\d+)")
_EXIT = re.compile(r"comm=(.*?) pid=(\d+) prio=-?\d+")
_LOST = re.compile(r"^CPU:(\d+) \[LOST (?:(\d+) )?EVENTS\]")
_STARTED = re.compile(r"^##### CPU (\d+) buffer started ####")
_ENTRIES = re.compile(r"^# entries-in-buffer/entries-written: (\d+)/(\d+)\s+#P:(\d+)")
_WAKE_EVENTS = ("sched_wakeup", "sched_wakeup_new", "sched_waking")
KNOWN_EVENTS = ("sched_switch", *_WAKE_EVENTS, "sched_migrate_task", "sched_process_exit",
                "tracing_mark_write")


def _ns(sec: str, frac: str) -> int:
    return int(sec) * NS + int((frac + "000000000")[:9])


def _body(name: str, body: str, line: str) -> re.Match[str]:
    pattern = (_SWITCH if name == "sched_switch" else _MIGRATE if name == "sched_migrate_task"
               else _EXIT if name == "sched_process_exit" else _WAKE)
    m = pattern.match(body)
    if m is None:
        raise ParseError(f"{name} line does not read as the 7.x format: {line.strip()!r}")
    return m


def check_header(line: str) -> Optional[int]:
    """A '#' line: raise LostEvents on an overrun mark; return #P (online
    CPUs) from the entries header, else None."""
    m = _STARTED.match(line)
    if m:
        raise LostEvents(int(m.group(1)), None, line)
    m = _ENTRIES.match(line)
    if m is None:
        return None
    kept, written = int(m.group(1)), int(m.group(2))
    if kept < written:
        raise LostEvents(None, written - kept,
                         line + f" ({written - kept} overwritten, or consumed by a reader)")
    return int(m.group(3))


_STATS_CPU = re.compile(r"cpu(\d+)")
_STATS_LOSS = re.compile(r"^(overrun|commit overrun|dropped events): (\d+)", re.M)


def check_stats(text: str) -> None:
    """Raise LostEvents when per_cpu/cpuN/stats show an overrun (the writer
    lapped the reader: events overwritten) or dropped events (a full
    buffer with options/overwrite off drops new events, and the trace text
    says nothing of it).  `text`: the stats files one after another, each
    after a line naming its path (``==> /sys/kernel/tracing/per_cpu/cpu3/stats``,
    as `head` prints them), or a single file."""
    cpu: Optional[int] = None
    for line in text.splitlines():
        if not line.startswith(("overrun", "commit overrun", "dropped events")):
            m = _STATS_CPU.search(line)
            if m and ("stats" in line or line.startswith("==")):
                cpu = int(m.group(1))
            continue
        m = _STATS_LOSS.match(line)
        if m and int(m.group(2)) > 0:
            raise LostEvents(cpu, int(m.group(2)), f"per_cpu stats: {line.strip()}")


def parse_line(line: str) -> Optional[Event]:
    """One event, or None for a line that is not one of KNOWN_EVENTS (a
    comment, a stack trace, another event).  Raises LostEvents on a lost
    events line, ParseError on a known event in an unknown format."""
    if line.startswith("#"):
        check_header(line)
        return None
    if line.startswith("CPU:"):
        lost = _LOST.match(line)
        if lost:
            raise LostEvents(int(lost.group(1)),
                             int(lost.group(2)) if lost.group(2) else None, line)
    m = _LINE.search(line)
    if m is None:
        return None
    name = m.group(5)
    if name not in KNOWN_EVENTS:
        return None
    ts, cpu, cur, body = _ns(m.group(3), m.group(4)), int(m.group(2)), int(m.group(1)), m.group(6)
    if name == "tracing_mark_write":
        return Event(ts, cpu, cur, name, state=body.strip())
    b = _body(name, body, line)
    if name == "sched_switch":
        return Event(ts, cpu, cur, name, int(b.group(2)), b.group(1), state=b.group(3),
                     next_pid=int(b.group(5)), next_comm=b.group(4))
    if name == "sched_migrate_task":
        return Event(ts, cpu, cur, name, int(b.group(2)), b.group(1), cpu_arg=int(b.group(4)),
                     orig_cpu=int(b.group(3)))
    if name == "sched_process_exit":
        return Event(ts, cpu, cur, name, int(b.group(2)), b.group(1))
    return Event(ts, cpu, cur, name, int(b.group(2)), b.group(1), cpu_arg=int(b.group(3)))


def parse(lines: Iterable[str]) -> Iterator[Event]:
    """The events of a trace, in order; LostEvents names the line number."""
    for n, line in enumerate(lines, 1):
        try:
            ev = parse_line(line)
        except LostEvents as e:
            raise LostEvents(e.cpu, e.count, e.line, n) from None
        if ev is not None:
            yield ev


# ---------------------------------------------------------------- result

def percentile(sorted_values: list[int], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default):
    rank = q/100 * (n-1)."""
    if not sorted_values:
        return 0.0
    rank = q / 100 * (len(sorted_values) - 1)
    lo = int(rank)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (rank - lo)


def histogram(lengths_ns: Iterable[int]) -> dict[str, int]:
    """Episode counts per BUCKETS label."""
    counts = {label: 0 for _, label in BUCKETS}
    for n in lengths_ns:
        for bound, label in BUCKETS:
            if bound is None or n < bound:
                counts[label] += 1
                break
    return counts


@dataclass
class Waste:
    """The measure over one window; times in seconds of guest time."""
    start: float
    end: float
    cpus: list[int]
    llc_of: dict[int, int]
    idle: dict[int, float]                  # per CPU
    wasted: dict[str, float]                # per level (LEVELS), all CPUs
    wasted_cpu: dict[int, float]            # LLC-wasted per CPU
    run_delay: float
    waits: int                              # times a task started to wait
    episodes: int                           # LLC-wasted episodes
    histogram: dict[str, int]               # episodes per BUCKETS label
    percentiles_us: dict[str, float]        # p50, p90, p99, max of episode length
    began: dict[str, float]                 # LLC-wasted time per KINDS
    began_episodes: dict[str, int]
    events: int
    assumed_idle_cpus: list[int] = field(default_factory=list)
    unknown_start_tasks: int = 0
    inconsistencies: int = 0
    waiters_on_idle_cpus: bool = False
    migrations: int = 0                     # of tasks other than per-CPU kthreads
    migrations_waiting: int = 0             # of those: the task was waiting (a pull/steal)
    bounces: int = 0                        # of those: moved back by its next move, in time

    @property
    def window(self) -> float:
        return self.end - self.start

    @property
    def cpu_time(self) -> float:
        """Online CPUs x window."""
        return len(self.cpus) * self.window

    @property
    def busy(self) -> dict[int, float]:
        return {c: self.window - i for c, i in self.idle.items()}

    @property
    def idle_total(self) -> float:
        return sum(self.idle.values())

    def fraction(self, level: str = "llc") -> float:
        """Wasted time at `level` as a fraction of the CPU time."""
        return self.wasted[level] / self.cpu_time

    @property
    def wasted_llc(self) -> dict[int, float]:
        """LLC-wasted time per LLC id."""
        out: dict[int, float] = {}
        for cpu, w in self.wasted_cpu.items():
            out[self.llc_of[cpu]] = out.get(self.llc_of[cpu], 0.0) + w
        return out

    def llc_fraction(self) -> dict[int, float]:
        """Per LLC: its LLC-wasted time / (its online CPUs x window)."""
        ncpus: dict[int, int] = {}
        for cpu in self.cpus:
            ncpus[self.llc_of[cpu]] = ncpus.get(self.llc_of[cpu], 0) + 1
        return {llc: w / (ncpus[llc] * self.window) for llc, w in sorted(self.wasted_llc.items())}

    def as_dict(self) -> dict:
        """JSON-ready (string keys)."""
        return {
            "start": self.start, "end": self.end, "window": self.window,
            "cpus": self.cpus, "cpu_time": self.cpu_time,
            "idle": {str(c): v for c, v in self.idle.items()},
            "busy": {str(c): v for c, v in self.busy.items()},
            "idle_total": self.idle_total,
            "wasted": dict(self.wasted),
            "fraction": {lv: self.fraction(lv) for lv in LEVELS},
            "wasted_cpu": {str(c): v for c, v in self.wasted_cpu.items()},
            "wasted_llc": {str(k): v for k, v in sorted(self.wasted_llc.items())},
            "llc_fraction": {str(k): v for k, v in self.llc_fraction().items()},
            "run_delay": self.run_delay, "waits": self.waits,
            "episodes": self.episodes, "histogram": dict(self.histogram),
            "percentiles_us": dict(self.percentiles_us),
            "began": dict(self.began), "began_episodes": dict(self.began_episodes),
            "began_fraction": {k: v / self.cpu_time for k, v in self.began.items()},
            "events": self.events, "assumed_idle_cpus": self.assumed_idle_cpus,
            "unknown_start_tasks": self.unknown_start_tasks,
            "inconsistencies": self.inconsistencies,
            "waiters_on_idle_cpus": self.waiters_on_idle_cpus,
            "migrations": self.migrations, "migrations_waiting": self.migrations_waiting,
            "bounces": self.bounces, "bounce_window_ns": BOUNCE_WINDOW_NS,
            "migrations_per_cpu_s": self.migrations / self.cpu_time,
            "migrations_waiting_per_cpu_s": self.migrations_waiting / self.cpu_time,
            "bounces_per_cpu_s": self.bounces / self.cpu_time,
        }

    def format(self) -> str:
        """A few lines of text."""
        pct = 100 / self.cpu_time
        lines = [
            f"window {self.start:.6f}-{self.end:.6f} s ({self.window:.6f} s), "
            f"{len(self.cpus)} CPUs, CPU time {self.cpu_time:.6f} s, {self.events} events",
            f"idle {self.idle_total:.6f} s ({self.idle_total * pct:.1f}%), "
            f"run delay {self.run_delay:.6f} s over {self.waits} waits",
            "wasted: " + ", ".join(f"{lv} {self.wasted[lv]:.6f} s ({self.wasted[lv] * pct:.2f}%)"
                                   for lv in LEVELS),
            "  per LLC: " + ", ".join(f"{k} {100 * v:.2f}%"
                                      for k, v in self.llc_fraction().items()),
            f"  {self.episodes} episodes: " + ", ".join(f"{k} {v}"
                                                       for k, v in self.histogram.items())
            + "; " + ", ".join(f"{k} {v:.1f}" for k, v in self.percentiles_us.items()) + " us",
            "  began by: " + ", ".join(
                f"{k} {self.began[k]:.6f} s ({self.began[k] * pct:.2f}%, "
                f"{self.began_episodes[k]} episodes)" for k in KINDS),
            f"migrations {self.migrations} ({self.migrations / self.cpu_time:.1f}/CPU-s), "
            f"of waiting tasks {self.migrations_waiting} "
            f"({self.migrations_waiting / self.cpu_time:.1f}/CPU-s), bounces {self.bounces} "
            f"({self.bounces / self.cpu_time:.1f}/CPU-s, back within "
            f"{BOUNCE_WINDOW_NS / 1e6:g} ms)",
        ]
        notes = []
        if self.assumed_idle_cpus:
            notes.append(f"CPUs without events, taken as idle: {self.assumed_idle_cpus}")
        if self.unknown_start_tasks:
            notes.append(f"{self.unknown_start_tasks} tasks first seen switched in "
                         "(earlier waiting not counted)")
        if self.inconsistencies:
            notes.append(f"{self.inconsistencies} events contradict the model (events missing?)")
        return "\n".join(lines + [f"  note: {n}" for n in notes]) + "\n"


# ---------------------------------------------------------------- the analysis

_RUN, _WAIT, _BLOCK, _UNKNOWN = 0, 1, 2, 3


class _Task:
    __slots__ = ("pid", "comm", "state", "cpu", "mask", "eff", "since", "exiting",
                 "moved_from", "moved_at")

    def __init__(self, pid: int, comm: str, mask: Optional[frozenset[int]]):
        self.pid, self.comm, self.mask = pid, comm, mask
        self.state, self.cpu = _UNKNOWN, -1
        self.eff = False            # counted as a waiter now
        self.since = 0              # start of the current wait
        self.exiting = False
        self.moved_from = -1        # last move, while waiting and in the window: from CPU
        self.moved_at = 0           # ... at this time (ns)


def _to_ns(bound: Bound) -> Optional[int]:
    return round(bound * NS) if isinstance(bound, (int, float)) else None


class Analyser:
    """Feed trace lines (or Events) in order, then finish().

    start/end: seconds (trace time), or the text of a trace_marker line
    (the first one seen), or None for the first / last event.  Events
    before the start set up the state; nothing after the end is used,
    but lost events anywhere still fail the run."""

    def __init__(self, topo: Topology, online: Optional[Iterable[int]] = None,
                 affinity: Optional[Affinity] = None, start: Bound = None, end: Bound = None,
                 waiters_on_idle_cpus: bool = False, keep_timeline: bool = False,
                 lookahead: int = 100_000):
        self.cpus = sorted(set(online) if online is not None else topo.cpus)
        missing = [c for c in self.cpus if c not in topo.llc]
        if missing or not self.cpus:
            raise WasteError(f"online CPUs {missing or '(none)'} not in the topology")
        self.topo = topo
        # a copy: affinity markers change it for this trace only
        self.affinity = Affinity(dict(affinity.by_pid), dict(affinity.by_comm)) \
            if affinity else Affinity()
        self.literal = waiters_on_idle_cpus
        self.keep_timeline = keep_timeline
        self.lookahead = lookahead
        self._start_mark = start if isinstance(start, str) else None
        self._end_mark = end if isinstance(end, str) else None
        self._start_ns, self._end_ns = _to_ns(start), _to_ns(end)
        if self._start_ns is not None and self._end_ns is not None \
                and self._end_ns <= self._start_ns:
            raise WasteError(f"window end {end} is not after its start {start}")
        self._from = self._start_ns if self._start_ns is not None else _NEVER
        self._online = frozenset(self.cpus)
        size = max(self.cpus) + 1
        maps = (topo.llc, topo.node, {c: 0 for c in self.cpus})
        self._dom = [[m.get(c, -1) for c in range(size)] for m in maps]
        self._dom_cpus: list[dict[int, list[int]]] = [{} for _ in LEVELS]
        for lv in range(3):
            for c in self.cpus:
                self._dom_cpus[lv].setdefault(self._dom[lv][c], []).append(c)
        self._full: list[dict[int, int]] = [{d: 0 for d in dc} for dc in self._dom_cpus]
        self._restr = [[0] * size for _ in LEVELS]
        self._own = [0] * size
        self._wsince = [[-1] * size for _ in LEVELS]
        self._wasted = [[0] * size for _ in LEVELS]
        self._wkind = [_ARRIVAL] * size
        self._cur = [-1] * size
        self._idle_since = [0] * size
        self._idle_ns = [0] * size
        self._waiting_on: list[set[int]] = [set() for _ in range(size)]
        self._tasks: dict[int, _Task] = {}
        self._episodes: list[list[int]] = [[], []]
        self._run_delay = 0
        self._waits = 0
        self._events = 0
        self._unknown_start = 0
        self._inconsistent = 0
        self._migrations = 0
        self._migrations_waiting = 0
        self._bounces = 0
        self._dirty_cpus: set[int] = set()
        self._dirty_doms: set[tuple[int, int]] = set()
        self._went_idle: set[int] = set()
        self._tl: dict[int, list[tuple[int, int, str]]] = {c: [] for c in self.cpus}
        self._tl_state = ["" for _ in range(size)]
        self._tl_since = [0] * size
        # before every online CPU has shown what it runs
        self._pending: Optional[list[Event]] = []
        self._first_cur: dict[int, int] = {}
        self._assumed_idle: list[int] = []
        self._t0: Optional[int] = None
        self._last = 0
        self._closed_at: Optional[int] = None
        self._nlines = 0

    # -- input

    def feed(self, line: str) -> None:
        """One line of trace text."""
        self._nlines += 1
        if line.startswith("#"):
            try:
                ncpus = check_header(line)
            except LostEvents as e:
                raise LostEvents(e.cpu, e.count, e.line, self._nlines) from None
            if ncpus is not None and ncpus != len(self.cpus):
                raise WasteError(f"the trace says #P:{ncpus} online CPUs, the analysis was "
                                 f"given {len(self.cpus)}")
            return
        try:
            ev = parse_line(line)
        except LostEvents as e:
            raise LostEvents(e.cpu, e.count, e.line, self._nlines) from None
        if ev is not None:
            self.feed_event(ev)

    def feed_lines(self, lines: Iterable[str]) -> Analyser:
        for line in lines:
            self.feed(line)
        return self

    def feed_event(self, ev: Event) -> None:
        if ev.ts < self._last:
            raise WasteError(f"time goes backwards at {ev.ts / NS:.6f} s (after "
                             f"{self._last / NS:.6f} s): not a merged trace")
        self._last = ev.ts
        if ev.cpu not in self._online:
            raise WasteError(f"event on CPU {ev.cpu}, not in the online set {self.cpus}")
        if self._pending is None:
            self._process(ev)
            return
        self._pending.append(ev)
        self._first_cur.setdefault(ev.cpu, ev.cur)
        if len(self._pending) >= self.lookahead:
            self._replay()

    def _replay(self) -> None:
        """Set each CPU's initial task, then process the events held back."""
        pending, self._pending = self._pending or [], None
        if not pending:
            return
        self._t0 = t0 = pending[0].ts
        if self._start_ns is not None and self._start_ns < t0:
            raise WasteError(f"window start {self._start_ns / NS:.6f} s is before the first "
                             f"event ({t0 / NS:.6f} s): the trace does not cover it")
        if self._start_ns is None and self._start_mark is None:
            self._start_ns = self._from = t0
        for c in self.cpus:
            pid = self._first_cur.get(c)
            if pid is None:
                self._assumed_idle.append(c)
                pid = 0
            self._cur[c] = pid
            self._idle_since[c] = t0
            self._tl_since[c] = t0
            self._tl_state[c] = "run" if pid else "idle"
            if pid:
                task = self._task(pid, "")
                task.state, task.cpu = _RUN, c
        for pid, (cpu, comm) in self._waiting_from_start(pending).items():
            self._set(self._task(pid, comm), _WAIT, cpu, t0)
        for ev in pending:
            self._process(ev)

    def _waiting_from_start(self, pending: list[Event]) -> dict[int, tuple[int, str]]:
        """Tasks whose first event in the lookahead is being switched in or
        migrated: no wakeup of theirs is in the trace and no CPU ran them
        at its start, so they were runnable and waiting from the first
        event, on the CPU they are switched in on (or migrated from)."""
        seen = {pid for pid in self._first_cur.values() if pid}
        out: dict[int, tuple[int, str]] = {}
        for ev in pending:
            if ev.name == "sched_switch":
                seen.add(ev.pid)
                if ev.next_pid and ev.next_pid not in seen:
                    seen.add(ev.next_pid)
                    out[ev.next_pid] = (ev.cpu, ev.next_comm)
            elif ev.name == "sched_migrate_task":
                if ev.pid not in seen:
                    seen.add(ev.pid)
                    out[ev.pid] = (ev.orig_cpu, ev.comm)
            elif ev.pid >= 0:
                seen.add(ev.pid)
        return {pid: (cpu, comm) for pid, (cpu, comm) in out.items() if cpu in self._online}

    # -- the window

    def _process(self, ev: Event) -> None:
        if self._closed_at is not None:
            return
        t = ev.ts
        if self._end_ns is not None and t > self._end_ns:
            self._close(self._end_ns)
            return
        self._events += 1
        name = ev.name
        if name == "sched_switch":
            self._on_switch(ev)
        elif name == "sched_wakeup" or name == "sched_wakeup_new":
            self._on_wakeup(ev)
        elif name == "sched_migrate_task":
            self._on_migrate(ev)
        elif name == "sched_waking":
            self._on_waking(ev)
        elif name == "sched_process_exit":
            self._task(ev.pid, ev.comm).exiting = True
        else:
            self._on_marker(ev)
        if ev.cur != self._cur[ev.cpu] and name != "sched_switch":
            self._inconsistent += 1
        self._flush(t)

    def _on_marker(self, ev: Event) -> None:
        if ev.state.split()[:2] == AFFINITY_MARK.split():
            self._on_affinity(*parse_affinity_mark(ev.state))
        elif ev.state == self._start_mark and self._start_ns is None:
            self._start_ns = self._from = ev.ts
        elif ev.state == self._end_mark and self._start_ns is not None:
            self._close(ev.ts)

    def _on_affinity(self, pid: int, cpus: frozenset[int]) -> None:
        """A thread's allowed set changed (an AFFINITY_MARK line)."""
        self.affinity.by_pid[pid] = cpus
        task = self._tasks.get(pid)
        if task is None:
            return
        mask = self._mask(pid, task.comm)
        if mask != task.mask:
            if task.eff:
                self._count(task, -1)
            task.mask = mask
            self._refresh(task)

    def _clip(self, a: int, b: int) -> int:
        """Length of [a, b] inside the window (b never past its end)."""
        a = a if a > self._from else self._from
        return b - a if b > a else 0

    # -- events

    def _task(self, pid: int, comm: str) -> _Task:
        task = self._tasks.get(pid)
        if task is None:
            task = self._tasks[pid] = _Task(pid, comm, self._mask(pid, comm))
        elif comm != task.comm and comm:
            self._rename(task, comm)
        return task

    def _mask(self, pid: int, comm: str) -> Optional[frozenset[int]]:
        """Allowed online CPUs; None when that is all of them."""
        mask = self.affinity.mask(pid, comm)
        if mask is None or mask >= self._online:
            return None
        return mask & self._online

    def _rename(self, task: _Task, comm: str) -> None:
        """A new comm (exec, a kthread named after fork) may mean a new mask."""
        task.comm = comm
        mask = self._mask(task.pid, comm)
        if mask != task.mask:
            if task.eff:
                self._count(task, -1)
            task.mask = mask
            self._refresh(task)

    def _check_cpu(self, cpu: int) -> int:
        if cpu not in self._online:
            raise WasteError(f"a task moves to CPU {cpu}, not in the online set {self.cpus}")
        return cpu

    def _on_switch(self, ev: Event) -> None:
        c, t = ev.cpu, ev.ts
        if self._cur[c] != ev.pid:
            self._inconsistent += 1
        if ev.next_pid:
            nxt = self._task(ev.next_pid, ev.next_comm)
            if nxt.state == _UNKNOWN:
                self._unknown_start += 1
            elif nxt.state != _WAIT or nxt.cpu != c:    # not woken, or not moved here
                self._inconsistent += 1
            self._set(nxt, _RUN, c, t)
        self._set_cur(c, ev.next_pid, t)
        if ev.pid:
            prev = self._task(ev.pid, ev.comm)
            if ev.state == "R" or ev.state == "R+":
                self._set(prev, _WAIT, c, t)
            else:
                self._set(prev, _BLOCK, c, t)
                if prev.exiting:
                    del self._tasks[ev.pid]

    def _on_wakeup(self, ev: Event) -> None:
        task = self._task(ev.pid, ev.comm)
        if task.state != _RUN:
            self._set(task, _WAIT, self._check_cpu(ev.cpu_arg), ev.ts)
        elif task.cpu != ev.cpu_arg:  # a running task's wakeup (it had not slept yet) is local
            self._inconsistent += 1

    def _on_waking(self, ev: Event) -> None:
        task = self._task(ev.pid, ev.comm)
        if task.state == _UNKNOWN:  # it was asleep
            task.state, task.cpu = _BLOCK, ev.cpu_arg

    def _on_migrate(self, ev: Event) -> None:
        task = self._task(ev.pid, ev.comm)
        dest = self._check_cpu(ev.cpu_arg)
        waiting = task.state == _WAIT
        self._count_move(task, ev, waiting)
        if waiting:
            self._set(task, _WAIT, dest, ev.ts)
        elif task.state == _RUN:
            self._inconsistent += 1
        else:
            task.cpu = dest

    def _count_move(self, task: _Task, ev: Event, waiting: bool) -> None:
        """Migrations, waiting-task moves and bounces (the module's doc)."""
        if ev.ts < self._from or not task.pid or kthread_cpu(task.comm) is not None:
            task.moved_from = -1
            return
        self._migrations += 1
        if not waiting:
            task.moved_from = -1
            return
        self._migrations_waiting += 1
        if task.moved_from == ev.cpu_arg and ev.ts - task.moved_at <= BOUNCE_WINDOW_NS:
            self._bounces += 1      # X -> Y -> X -> Y: two (each move undone by the next)
        task.moved_from, task.moved_at = ev.orig_cpu, ev.ts

    # -- state changes (counted), then _flush re-checks what they touched

    def _set(self, task: _Task, state: int, cpu: int, t: int) -> None:
        """Move a task to (state, cpu) at t."""
        if task.eff:
            self._count(task, -1)
        if task.state == _WAIT:
            self._waiting_on[task.cpu].discard(task.pid)
            if state != _WAIT:
                self._run_delay += self._clip(task.since, t)
        if state == _WAIT:
            if task.state != _WAIT:
                task.since = t
                self._waits += 1
            self._waiting_on[cpu].add(task.pid)
        task.state, task.cpu = state, cpu
        self._refresh(task)

    def _refresh(self, task: _Task) -> None:
        """Count or uncount the task as a waiter, as its state says now."""
        want = task.state == _WAIT and (self.literal or self._cur[task.cpu] != 0)
        if want != task.eff:
            self._count(task, 1 if want else -1)

    def _count(self, task: _Task, sign: int) -> None:
        """Add (+1) or remove (-1) a waiter from the counts of the CPUs it
        could run on, marking what needs a re-check."""
        task.eff = sign > 0
        c = task.cpu
        if task.mask is None:
            self._own[c] += sign
            if self.literal:
                self._dirty_cpus.add(c)
            for lv in range(3):
                d = self._dom[lv][c]
                full = self._full[lv]
                old = full[d]
                full[d] = old + sign
                if old == 0 or old + sign == 0 or self.literal:
                    self._dirty_doms.add((lv, d))
            return
        for x in task.mask:
            if x == c:
                continue
            for lv in range(3):
                if self._dom[lv][x] == self._dom[lv][c]:
                    self._restr[lv][x] += sign
                    self._dirty_cpus.add(x)

    def _set_cur(self, c: int, pid: int, t: int) -> None:
        old = self._cur[c]
        self._cur[c] = pid
        if (old == 0) == (pid == 0):
            return
        self._dirty_cpus.add(c)
        if pid == 0:
            self._idle_since[c] = t
            self._went_idle.add(c)
        else:
            self._idle_ns[c] += self._clip(self._idle_since[c], t)
        if not self.literal:
            for w in self._waiting_on[c]:
                self._refresh(self._tasks[w])

    def _flush(self, t: int) -> None:
        """Re-check the wasted state of every CPU the event touched."""
        if self._dirty_doms:
            for lv, d in self._dirty_doms:
                for c in self._dom_cpus[lv][d]:
                    self._eval(lv, c, t)
            self._dirty_doms.clear()
        if self._dirty_cpus:
            for c in self._dirty_cpus:
                for lv in range(3):
                    self._eval(lv, c, t)
            self._dirty_cpus.clear()
        self._went_idle.clear()

    def _eval(self, lv: int, c: int, t: int) -> None:
        wasted = self._cur[c] == 0 and (self._full[lv][self._dom[lv][c]] > self._own[c]
                                        or self._restr[lv][c] > 0)
        since = self._wsince[lv][c]
        if wasted and since < 0:
            self._wsince[lv][c] = t
            if lv == _LLC:
                self._wkind[c] = _IDLE_ENTRY if c in self._went_idle else _ARRIVAL
        elif not wasted and since >= 0:
            self._end_waste(lv, c, t)
        if lv == _LLC and self.keep_timeline:
            self._tl_update(c, t)

    def _end_waste(self, lv: int, c: int, t: int) -> None:
        n = self._clip(self._wsince[lv][c], t)
        self._wsince[lv][c] = -1
        self._wasted[lv][c] += n
        if lv == _LLC and n > 0:
            self._episodes[self._wkind[c]].append(n)

    def _tl_update(self, c: int, t: int) -> None:
        state = ("run" if self._cur[c] else
                 "wasted" if self._wsince[_LLC][c] >= 0 else "idle")
        if state != self._tl_state[c]:
            self._tl_segment(c, t)
            self._tl_state[c], self._tl_since[c] = state, t

    def _tl_segment(self, c: int, t: int) -> None:
        a = max(self._tl_since[c], self._from)
        if t > a:
            self._tl[c].append((a, t, self._tl_state[c]))

    def _close(self, t: int) -> None:
        """End the window at t: every open interval ends there."""
        if self._start_ns is None:
            raise WasteError(f"the window ends at {t / NS:.6f} s before its start marker "
                             f"{self._start_mark!r} was seen")
        for c in self.cpus:
            if self._cur[c] == 0:
                self._idle_ns[c] += self._clip(self._idle_since[c], t)
            for lv in range(3):
                if self._wsince[lv][c] >= 0:
                    self._end_waste(lv, c, t)
            if self.keep_timeline:
                self._tl_segment(c, t)
        self._dirty_cpus.clear()
        self._dirty_doms.clear()
        for task in self._tasks.values():
            if task.state == _WAIT:
                self._run_delay += self._clip(task.since, t)
        self._closed_at = t

    # -- output

    def finish(self) -> Waste:
        """Close the window (at `end`, or the last event) and measure it."""
        if self._pending is not None:
            self._replay()
        if self._t0 is None:
            raise WasteError("no scheduler events in the trace")
        if self._closed_at is None:
            if self._end_mark is not None:
                raise WasteError(f"end marker {self._end_mark!r} not in the trace")
            if self._start_ns is None:
                raise WasteError(f"start marker {self._start_mark!r} not in the trace")
            self._close(self._end_ns if self._end_ns is not None else self._last)
        assert self._closed_at is not None and self._start_ns is not None
        if self._closed_at <= self._start_ns:
            raise WasteError("the window is empty")
        return self._result(self._start_ns, self._closed_at)

    def _result(self, a: int, b: int) -> Waste:
        lengths = sorted(self._episodes[0] + self._episodes[1])
        pct = {f"p{q}": percentile(lengths, q) / 1000 for q in PERCENTILES}
        pct["max"] = (lengths[-1] / 1000) if lengths else 0.0
        return Waste(
            start=a / NS, end=b / NS, cpus=list(self.cpus),
            llc_of={c: self.topo.llc[c] for c in self.cpus},
            idle={c: self._idle_ns[c] / NS for c in self.cpus},
            wasted={name: sum(self._wasted[lv][c] for c in self.cpus) / NS
                    for lv, name in enumerate(LEVELS)},
            wasted_cpu={c: self._wasted[_LLC][c] / NS for c in self.cpus},
            run_delay=self._run_delay / NS, waits=self._waits,
            episodes=len(lengths), histogram=histogram(lengths), percentiles_us=pct,
            began={k: sum(self._episodes[i]) / NS for i, k in enumerate(KINDS)},
            began_episodes={k: len(self._episodes[i]) for i, k in enumerate(KINDS)},
            events=self._events, assumed_idle_cpus=list(self._assumed_idle),
            unknown_start_tasks=self._unknown_start, inconsistencies=self._inconsistent,
            waiters_on_idle_cpus=self.literal, migrations=self._migrations,
            migrations_waiting=self._migrations_waiting, bounces=self._bounces)

    def timeline(self) -> Timeline:
        """After finish(): per CPU, (start s, end s, state) with state in
        idle / run / wasted (LLC-wasted), inside the window."""
        if not self.keep_timeline or self._closed_at is None:
            raise WasteError("timeline() needs keep_timeline=True and finish() first")
        return {c: [(a / NS, b / NS, s) for a, b, s in segs] for c, segs in self._tl.items()}


def analyse(lines: Iterable[str], topo: Topology, online: Optional[Iterable[int]] = None,
            affinity: Optional[Affinity] = None, start: Bound = None, end: Bound = None,
            waiters_on_idle_cpus: bool = False) -> Waste:
    """The measure of a trace (lines of text, e.g. an open file)."""
    return Analyser(topo, online, affinity, start, end,
                    waiters_on_idle_cpus).feed_lines(lines).finish()


def timeline(lines: Iterable[str], topo: Topology, online: Optional[Iterable[int]] = None,
             affinity: Optional[Affinity] = None, start: Bound = None, end: Bound = None,
             waiters_on_idle_cpus: bool = False) -> tuple[Waste, Timeline]:
    """The measure and the per-CPU timeline of a trace."""
    an = Analyser(topo, online, affinity, start, end, waiters_on_idle_cpus, keep_timeline=True)
    waste = an.feed_lines(lines).finish()
    return waste, an.timeline()


# ---------------------------------------------------------------- picture

COLOURS = {"run": "#4c72b0", "idle": "#dddddd", "wasted": "#d62728"}


def plot_timeline(tl: Timeline, path: Union[str, Path], title: str) -> bool:
    """A PNG: CPUs as rows (CPU 0 on top), time across (ms from the first
    segment), running / idle / LLC-wasted in three colours.  False when
    matplotlib is missing (util.pyplot() said so)."""
    plt = pyplot()
    if plt is None:
        return False
    t0 = min((segs[0][0] for segs in tl.values() if segs), default=0.0)
    cpus = sorted(tl)
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.35 * len(cpus)))
    for row, cpu in enumerate(cpus):
        for state, colour in COLOURS.items():
            bars = [((a - t0) * 1e3, (b - a) * 1e3) for a, b, s in tl[cpu] if s == state]
            if bars:
                ax.broken_barh(bars, (row - 0.4, 0.8), facecolors=colour, linewidth=0)
    ax.set_yticks(range(len(cpus)))
    ax.set_yticklabels([f"CPU {c}" for c in cpus])
    ax.set_ylim(len(cpus) - 0.5, -0.5)
    ax.set_xlabel("time (ms)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS.values()]
    ax.legend(handles, ["running", "idle", "idle while a task waits in the LLC"],
              loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.5 / max(len(cpus), 1)),
              ncol=3, fontsize=8)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(str(path), dpi=100)
    plt.close(fig)
    return True
