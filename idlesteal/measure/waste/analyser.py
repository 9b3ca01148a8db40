"""The state machine of the wasted-CPU-time measure (the model in the
package's doc): `Analyser` follows every CPU and task through the events
of `trace`, counts the waiters each CPU's LLC, node and machine hold, and
accumulates idle, wasted, run-delay and migration time into a `Waste`;
`analyse` and `timeline` run it over a trace's lines."""
from __future__ import annotations

from typing import Iterable, Optional, Union

from .cpus import AFFINITY_MARK, Affinity, Topology, kthread_cpu, parse_affinity_mark
from .result import (BOUNCE_WINDOW_NS, KINDS, LEVELS, PERCENTILES, Timeline, Waste,
                     histogram, percentile)
from .trace import NS, Event, LostEvents, WasteError, check_header, parse_line

# Indices into LEVELS and KINDS.
_LLC, _NODE, _MACHINE = 0, 1, 2
_IDLE_ENTRY, _ARRIVAL = 0, 1
_NEVER = 1 << 62            # a window start not yet seen (marker): nothing counts

Bound = Union[float, str, None]     # seconds, a trace_marker text, or the trace's edge


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
        """Migrations, waiting-task moves and bounces (the package's doc)."""
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
