"""The wasted-CPU measure (idlesteal/measure/waste/) on synthetic ftrace text.

Every expected number is worked out by hand in the comments; times in the
traces are microseconds (Trace writes them as ftrace's seconds.micro).
Unless said otherwise the topology is 2x2x2: LLC 0 = CPUs 0-3, LLC 1 =
CPUs 4-7, one node; CPUs without a single event are idle all along.
"""
from __future__ import annotations

import json
import random
import time

import pytest

from idlesteal.guest import topology
from idlesteal.measure import waste
from idlesteal.measure.waste import LostEvents, Topology, WasteError

T222 = waste.from_preset(topology.get("2x2x2"))
# 4 LLCs of 2 CPUs, 2 nodes: LLC {0,1} {2,3} | {4,5} {6,7}
T4 = Topology.from_groups([[0, 1], [2, 3], [4, 5], [6, 7]], [[0, 1, 2, 3], [4, 5, 6, 7]])
US = 1e-6
A, B, C, D, E = 101, 102, 103, 104, 105
NAMES = {A: "hackbench", B: "hack-bench two", C: "worker-3", D: "hog", E: "sysbench"}


class Trace:
    """ftrace text from calls, one line each.  Each line's prefix is the
    task current on the recording CPU, as ftrace prints it: `cur` says
    what each CPU runs when the trace begins (default: idle), switch()
    changes it.  The trace begins at 0 with a marker on CPU 0 (so CPU 0's
    first line tells what it runs)."""

    def __init__(self, cur: dict[int, int] | None = None, names: dict[int, str] | None = None,
                 begin: bool = True):
        self.cur = dict(cur or {})
        self.names = {**NAMES, **(names or {})}
        self.lines = ["# tracer: nop", "#"]
        if begin:
            self.mark(0, 0, "begin")

    def comm(self, pid: int, cpu: int) -> str:
        return f"swapper/{cpu}" if pid == 0 else self.names.get(pid, f"task{pid}")

    def _emit(self, t: int, cpu: int, text: str) -> Trace:
        pid = self.cur.get(cpu, 0)
        who = "<idle>" if pid == 0 else self.comm(pid, cpu)
        self.lines.append(f"{who:>16}-{pid:<7d} [{cpu:03d}] d..2. "
                          f"{t // 1_000_000:5d}.{t % 1_000_000:06d}: {text}")
        return self

    def switch(self, t: int, cpu: int, state: str, nxt: int) -> Trace:
        """cpu switches from its current task (prev_state `state`) to nxt."""
        prev = self.cur.get(cpu, 0)
        self._emit(t, cpu, f"sched_switch: prev_comm={self.comm(prev, cpu)} prev_pid={prev} "
                           f"prev_prio=120 prev_state={state} ==> next_comm={self.comm(nxt, cpu)} "
                           f"next_pid={nxt} next_prio=120")
        self.cur[cpu] = nxt
        return self

    def wakeup(self, t: int, cpu: int, pid: int, target: int, event: str = "sched_wakeup") -> Trace:
        return self._emit(t, cpu, f"{event}: comm={self.comm(pid, 0)} pid={pid} prio=120 "
                                  f"target_cpu={target:03d}")

    def migrate(self, t: int, cpu: int, pid: int, orig: int, dest: int) -> Trace:
        return self._emit(t, cpu, f"sched_migrate_task: comm={self.comm(pid, 0)} pid={pid} "
                                  f"prio=120 orig_cpu={orig} dest_cpu={dest}")

    def exit(self, t: int, cpu: int, pid: int) -> Trace:
        return self._emit(t, cpu, f"sched_process_exit: comm={self.comm(pid, 0)} pid={pid} "
                                  "prio=120")

    def mark(self, t: int, cpu: int, text: str) -> Trace:
        return self._emit(t, cpu, f"tracing_mark_write: {text}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def analyse(self, topo: Topology = T222, **kw) -> waste.Waste:
        return waste.analyse(self.text().splitlines(), topo, **kw)


def us(x: float) -> float:
    """Seconds, for comparing with hand-computed microseconds."""
    return pytest.approx(x * US, abs=1e-12)


def same_llc() -> Trace:
    """A runs on CPU 0 from 0; B is woken onto busy CPU 0 at 100 and runs
    there at 400; the trace ends at 1000 with CPU 0 going idle."""
    return (Trace({0: A}).wakeup(0, 0, E, 4).switch(0, 4, "R", E)     # CPU 4 runs E all along
            .wakeup(100, 0, B, 0).switch(400, 0, "S", B).switch(1000, 0, "S", 0))


# ------------------------------------------------------------------ the cases

def test_idle_while_a_task_waits_in_the_same_llc():
    w = same_llc().analyse()
    # B waits on CPU 0 (busy) 100..400 = 300 us.  Idle CPUs of LLC 0: 1, 2,
    # 3 -> 3 x 300 = 900 us LLC-wasted.  Node = machine (one node): also 5,
    # 6, 7 (CPU 4 runs E) -> 6 x 300 = 1800 us.
    assert w.wasted["llc"] == us(900)
    assert w.wasted["node"] == us(1800)
    assert w.wasted["machine"] == us(1800)
    assert w.wasted_cpu == {0: us(0), 1: us(300), 2: us(300), 3: us(300),
                            4: us(0), 5: us(0), 6: us(0), 7: us(0)}
    # window 0..1000 on 8 CPUs = 8000 us; CPU 0 and 4 busy all along (E's
    # wakeup and switch are at 0), the other six idle: 6000 us.
    assert w.window == us(1000) and w.cpu_time == us(8000)
    assert w.idle_total == us(6000)
    assert w.idle[0] == us(0) and w.busy[4] == us(1000) and w.idle[5] == us(1000)
    # fractions: 900 / 8000; per LLC 900 / (4 x 1000), 0
    assert w.fraction("llc") == pytest.approx(0.1125)
    assert w.llc_fraction() == {0: pytest.approx(0.225), 1: pytest.approx(0.0)}
    # run delay: B 300 us; E waited 0 (woken and switched in at 0); waits: E, B
    assert w.run_delay == us(300) and w.waits == 2
    # three episodes (CPUs 1-3) of 300 us, begun by B's arrival
    assert w.episodes == 3 and w.histogram["0.1-1ms"] == 3
    assert w.began == {"arrival": us(900), "idle_entry": us(0)}
    assert w.began_episodes == {"arrival": 3, "idle_entry": 0}
    assert w.inconsistencies == 0 and w.unknown_start_tasks == 0
    assert w.assumed_idle_cpus == [1, 2, 3, 5, 6, 7]


def test_waiting_in_another_llc_is_node_and_machine_waste_only():
    # T4: A runs on CPU 0, C on CPU 1 (the marker recorded on CPU 1 says
    # so): LLC {0,1} has no idle CPU.  B waits on CPU 0 100..400.  LLC: 0.
    # Node 0's idle CPUs 2, 3: 2 x 300 = 600.  Machine: 2-7: 6 x 300 = 1800.
    t = Trace({0: A, 1: C}).mark(0, 1, "CPU 1 runs C").wakeup(100, 0, B, 0)
    t.switch(400, 0, "S", B).switch(1000, 0, "S", 0)
    w = t.analyse(T4)
    assert w.wasted == {"llc": us(0), "node": us(600), "machine": us(1800)}
    assert w.episodes == 0 and w.run_delay == us(300)
    assert w.idle[1] == us(0)


def test_pinned_waiters_waste_nothing():
    # B pinned to CPU 0 by the affinity map, ksoftirqd/0 by its name: both
    # wait on busy CPU 0 and may not run on CPUs 1-7: no waste at all.
    # A sleeps at 400, ksoftirqd/0 runs 400..450, then B.
    t = (Trace({0: A}, names={60: "ksoftirqd/0"}).wakeup(100, 0, B, 0).wakeup(100, 0, 60, 0)
         .switch(400, 0, "S", 60).switch(450, 0, "S", B).switch(1000, 0, "S", 0))
    w = t.analyse(affinity=waste.parse_affinity(f"{B} hack-bench two 0\n"))
    assert w.wasted == {"llc": us(0), "node": us(0), "machine": us(0)}
    assert w.episodes == 0
    # run delay: B 100..450 = 350, ksoftirqd 100..400 = 300 -> 650
    assert w.run_delay == us(650)
    # without the map B counts (ksoftirqd/0 stays pinned by its name):
    # CPUs 1-3 wasted 100..450 -> 3 x 350 = 1050
    assert t.analyse().wasted["llc"] == us(1050)


def test_pinned_waiter_alone():
    t = Trace({0: A}).wakeup(100, 0, B, 0).switch(400, 0, "S", B).switch(1000, 0, "S", 0)
    w = t.analyse(affinity=waste.parse_affinity(f"{B} hack-bench two 0\n"))
    assert w.wasted == {"llc": us(0), "node": us(0), "machine": us(0)}
    assert w.run_delay == us(300)


def test_a_waiter_allowed_on_some_cpus_wastes_only_those():
    # B may run on CPUs 0-1 (by comm): it waits on CPU 0 100..400, so only
    # CPU 1 is wasted, at every level: 300.
    t = Trace({0: A}).wakeup(100, 0, B, 0).switch(400, 0, "S", B).switch(1000, 0, "S", 0)
    w = t.analyse(affinity=waste.parse_affinity("* hack-bench two 0-1\n"))
    assert w.wasted == {"llc": us(300), "node": us(300), "machine": us(300)}
    assert w.wasted_cpu[1] == us(300) and w.wasted_cpu[2] == us(0)


def test_affinity_markers_change_a_mask_mid_trace():
    # B pinned to CPU 0 (map) waits on busy CPU 0 from 100 to 900.  At 300
    # a marker widens it to 0-1 (CPU 1 wasted 300..600), at 600 one narrows
    # it back to 0 (nothing wasted), at 700 one gives it every CPU (1-3
    # wasted 700..900: 3 x 200).  LLC: 300 + 600 = 900.
    t = (Trace({0: A}).wakeup(100, 0, B, 0)
         .mark(300, 5, f"idlesteal affinity {B} 0,1")
         .mark(600, 5, f"idlesteal affinity {B} 0")
         .mark(700, 5, f"idlesteal affinity {B} 0-7")
         .switch(900, 0, "S", B).switch(1000, 0, "S", 0))
    aff = waste.parse_affinity(f"{B} hack-bench two 0\n")
    w = t.analyse(affinity=aff)
    assert w.wasted["llc"] == us(900)
    assert w.wasted_cpu[1] == us(300 + 200) and w.wasted_cpu[2] == us(200)
    assert w.run_delay == us(800)
    # the caller's map is not changed by the markers
    assert aff.by_pid == {B: frozenset({0})}
    # a marker before the task's first event sets its mask when it appears:
    # B allowed on 0-1 from 50, waits 100..900: CPU 1 wasted 800
    t2 = (Trace({0: A}).mark(50, 5, f"idlesteal affinity {B} 0-1").wakeup(100, 0, B, 0)
          .switch(900, 0, "S", B).switch(1000, 0, "S", 0))
    assert t2.analyse(affinity=aff).wasted["llc"] == us(800)


@pytest.mark.parametrize("text", ["idlesteal affinity", "idlesteal affinity 12",
                                  "idlesteal affinity x 0-1", "idlesteal affinity 12 0-z",
                                  "idlesteal affinity 12 0-1 extra"])
def test_a_malformed_affinity_marker_is_an_error(text):
    t = Trace({0: A}).wakeup(100, 0, B, 0).mark(200, 5, text).switch(900, 0, "S", B)
    with pytest.raises(waste.ParseError, match="affinity marker"):
        t.analyse()


def test_a_task_that_migrates_while_waiting_takes_its_waiting_along():
    # A runs on CPU 0, D on CPU 4, all along.  B is woken onto CPU 0 at 100,
    # moved to CPU 4 at 300 (still waiting), runs there at 500.
    t = Trace({0: A, 4: D}).wakeup(100, 0, B, 0).migrate(300, 4, B, 0, 4)
    t.switch(500, 4, "S", B).switch(1000, 0, "S", 0)
    w = t.analyse()
    # LLC: CPUs 1-3 100..300 (3 x 200) + CPUs 5-7 300..500 (3 x 200) = 1200
    assert w.wasted["llc"] == us(1200)
    assert w.wasted_cpu[1] == us(200) and w.wasted_cpu[6] == us(200)
    # machine: CPUs 1-3, 5-7 during 100..500: 6 x 400 = 2400
    assert w.wasted["machine"] == us(2400)
    assert w.run_delay == us(400)
    # six episodes of 200 us, all begun by an arrival (CPUs 5-7: the migration)
    assert w.episodes == 6 and w.began_episodes["arrival"] == 6
    assert w.percentiles_us["p50"] == pytest.approx(200.0)
    # CPU 4's first event (the migration, recorded while D ran) says it ran D
    assert w.idle[4] == us(0) and w.inconsistencies == 0


@pytest.mark.parametrize("state", ["R+", "R"])
def test_preemption_makes_the_preempted_task_wait(state):
    # A on CPU 0; B woken onto CPU 0 at 100; B preempts A at 200 (A waits,
    # prev_state R+; R is a yield); A runs again at 500.
    t = Trace({0: A}).wakeup(100, 0, B, 0).switch(200, 0, state, B).switch(500, 0, "S", A)
    t.switch(1000, 0, "S", 0)
    w = t.analyse()
    # someone waits on busy CPU 0 from 100 to 500 without a gap: CPUs 1-3
    # are wasted 400 each = 1200, in one episode each (not split at 200)
    assert w.wasted["llc"] == us(1200)
    assert w.episodes == 3 and w.percentiles_us["max"] == pytest.approx(400.0)
    # run delay: B 100..200 + A 200..500 = 400
    assert w.run_delay == us(400) and w.waits == 2


def test_arrival_versus_idle_entry():
    # A on CPU 0, C on CPU 1.  B is woken onto busy CPU 0 at 100: CPUs 2, 3
    # were idle -> arrival episodes.  CPU 1 goes idle at 300 while B still
    # waits -> an idle_entry episode.  B runs at 600: all end.
    t = Trace({0: A, 1: C}).wakeup(100, 0, B, 0).switch(300, 1, "S", 0)
    t.switch(600, 0, "S", B).switch(1000, 0, "S", 0)
    w, tl = waste.timeline(t.text().splitlines(), T222)
    # arrival: CPUs 2, 3: 100..600 = 2 x 500 = 1000; idle entry: CPU 1
    # 300..600 = 300
    assert w.began == {"idle_entry": us(300), "arrival": us(1000)}
    assert w.began_episodes == {"idle_entry": 1, "arrival": 2}
    assert w.wasted["llc"] == us(1300)
    # machine: + CPUs 4-7 100..600 = 4 x 500 -> 3300
    assert w.wasted["machine"] == us(3300)
    # idle: CPU 1 300..1000 = 700; CPUs 2-7 1000 each; CPU 0 none
    assert w.idle[1] == us(700) and w.idle_total == us(6700)

    def seg(a, b, s):
        return (pytest.approx(a * US), pytest.approx(b * US), s)
    assert tl[0] == [seg(0, 1000, "run")]
    assert tl[1] == [seg(0, 300, "run"), seg(300, 600, "wasted"), seg(600, 1000, "idle")]
    assert tl[2] == [seg(0, 100, "idle"), seg(100, 600, "wasted"), seg(600, 1000, "idle")]
    assert tl[5] == [seg(0, 1000, "idle")]      # other LLC: never LLC-wasted


def test_a_run_that_starts_mid_state():
    # When the trace begins CPU 0 runs A (never switched in inside the
    # trace) and B has long been waiting on CPU 0; CPU 1 is idle.
    t = Trace({0: A})
    t.wakeup(0, 0, C, 0)                  # C waits on busy CPU 0 from 0
    t.switch(200, 0, "R+", B)             # B, first seen being switched in; A waits
    t.migrate(300, 1, C, 0, 1).switch(300, 1, "R", C)   # idle CPU 1 pulls C
    t.switch(600, 0, "S", A).switch(1000, 0, "S", 0)    # A runs again at 600
    w = t.analyse()
    # CPU 0 ran A from the first event (the prefix of its first line):
    # not idle.  CPU 1 idle 0..300, wasted 0..300 (C, then A, waits on
    # CPU 0).  CPUs 2, 3 wasted 0..600.  LLC: 300 + 2 x 600 = 1500.
    assert w.idle[0] == us(0) and w.idle[1] == us(300)
    assert w.wasted["llc"] == us(1500)
    assert w.wasted_cpu[1] == us(300)
    # B's first event is its switch-in: no wakeup of it in the trace and no
    # CPU ran it, so it waited on CPU 0 from the first event (0..200, CPU 0
    # busy: nothing more wasted).  Run delay C 0..300 + A 200..600 + B
    # 0..200 = 900
    assert w.run_delay == us(900)
    assert w.unknown_start_tasks == 0 and w.inconsistencies == 0
    # Beyond the lookahead (1 event here) that is not known: B's waiting
    # before 200 is not counted (run delay 700) and B is an unknown start
    w = waste.Analyser(T222, lookahead=1).feed_lines(t.text().splitlines()).finish()
    assert w.run_delay == us(700) and w.wasted["llc"] == us(1500)
    assert w.unknown_start_tasks == 1 and w.inconsistencies == 0
    # the same trace measured from 200 us (the events before set the state):
    # CPU 1 200..300 + CPUs 2, 3 200..600 = 100 + 800 = 900; run delay C
    # 200..300 + A 200..600 = 500; window 800 us, CPU time 6400 us
    w = t.analyse(start=200 * US)
    assert w.wasted["llc"] == us(900)
    assert w.run_delay == us(500)
    assert w.cpu_time == us(6400)
    assert w.fraction("llc") == pytest.approx(900 / 6400)


def test_window_from_markers():
    t = (Trace({0: A}).wakeup(0, 0, E, 4).switch(0, 4, "R", E).mark(50, 2, "go")
         .wakeup(100, 0, B, 0).switch(400, 0, "S", B).mark(500, 2, "stop")
         .switch(1000, 0, "S", 0))
    # window 50..500: B's 300 us still inside: 900 us over 8 x 450
    w = t.analyse(start="go", end="stop")
    assert w.start == pytest.approx(50 * US) and w.window == us(450)
    assert w.wasted["llc"] == us(900) and w.cpu_time == us(3600)
    # window 200..300 by seconds: 3 CPUs x 100
    w = t.analyse(start=200 * US, end=300 * US)
    assert w.wasted["llc"] == us(300) and w.run_delay == us(100)
    assert w.percentiles_us["p50"] == pytest.approx(100.0)
    with pytest.raises(WasteError, match="not in the trace"):
        t.analyse(start="go", end="nope")
    with pytest.raises(WasteError, match="before the first event"):
        Trace(begin=False).mark(50, 0, "x").analyse(start=10 * US)


def test_waiters_on_idle_cpus_literal():
    # E runs on CPU 4 and wakes B onto idle CPU 0 at 100; CPU 0 switches to
    # B at 150 (the wakeup IPI's latency).
    t = Trace({4: E}).wakeup(100, 4, B, 0).switch(150, 0, "R", B).switch(1000, 0, "S", 0)
    # default: B waits on an idle CPU, about to run there: no waste
    assert t.analyse().wasted["llc"] == us(0)
    w = t.analyse(waiters_on_idle_cpus=True)
    # literal: CPUs 1-3 wasted 100..150 = 3 x 50; CPU 0 itself not (its own
    # waiter); machine: also 5-7 = 6 x 50 = 300
    assert w.wasted["llc"] == us(150) and w.wasted_cpu[0] == us(0)
    assert w.wasted["machine"] == us(300)
    assert w.run_delay == us(50)


def test_episode_histogram_and_percentiles():
    # two CPUs, one LLC.  CPU 0 runs A all along; B is woken onto CPU 0 and
    # idle CPU 1 pulls it L us later (migration + switch), B sleeps 100 us
    # after.  L = 5, 10, 50, 500, 5000, 50000: one episode each on CPU 1.
    topo = Topology.from_groups([[0, 1]])
    t = Trace({0: A})
    now = 0
    for length in (5, 10, 50, 500, 5000, 50000):
        t.wakeup(now, 0, B, 0)
        t.migrate(now + length, 1, B, 0, 1).switch(now + length, 1, "R", B)
        t.switch(now + length + 100, 1, "S", 0)
        now += length + 1000
    w = t.analyse(topo)
    assert w.episodes == 6
    # bucket bounds are exclusive above: 10 us is "10-100us"
    assert w.histogram == {"<10us": 1, "10-100us": 2, "0.1-1ms": 1, "1-10ms": 1, ">=10ms": 1}
    # sorted 5 10 50 500 5000 50000; p50: rank 2.5 -> 50 + 0.5 x 450 = 275;
    # p90: rank 4.5 -> 5000 + 0.5 x 45000 = 27500; p99: rank 4.95 ->
    # 5000 + 0.95 x 45000 = 47750
    assert w.percentiles_us == {"p50": pytest.approx(275), "p90": pytest.approx(27500),
                                "p99": pytest.approx(47750), "max": pytest.approx(50000)}
    assert w.wasted["llc"] == us(55565)
    assert w.began["arrival"] == us(55565)


# ------------------------------------------------------------------ lost events

@pytest.mark.parametrize("line,cpu,count", [
    ("CPU:2 [LOST 1234 EVENTS]", 2, 1234),
    ("CPU:1 [LOST EVENTS]", 1, None),
    ("##### CPU 3 buffer started ####", 3, None),
    ("# entries-in-buffer/entries-written: 90/100   #P:8", None, 10),
])
def test_lost_events_fail_the_analysis(line, cpu, count):
    t = same_llc()
    t.lines.insert(4, line)
    with pytest.raises(LostEvents) as e:
        t.analyse()
    assert (e.value.cpu, e.value.count, e.value.lineno) == (cpu, count, 5)
    assert "failed measurement" in str(e.value)


def test_lost_events_after_the_window_still_fail():
    t = same_llc()
    t.lines.append("CPU:0 [LOST 1 EVENTS]")
    with pytest.raises(LostEvents):
        t.analyse(end=500 * US)


def test_header_checks():
    t = same_llc()
    t.lines.insert(1, "# entries-in-buffer/entries-written: 100/100   #P:8")
    assert t.analyse().wasted["llc"] == us(900)
    t.lines[1] = "# entries-in-buffer/entries-written: 100/100   #P:4"
    with pytest.raises(WasteError, match="#P:4"):
        t.analyse()


# ------------------------------------------------------------------ parsing, inputs

def test_parse_line_comm_with_spaces_dashes_tgid_and_no_flags():
    line = ("     Web Content-1234    (   1200) [002] d..2.    17.101234: sched_switch: "
            "prev_comm=Web Content prev_pid=1234 prev_prio=120 prev_state=R+ ==> "
            "next_comm=my-task-9 next_pid=99 next_prio=120")
    ev = waste.parse_line(line)
    assert ev is not None
    assert (ev.ts, ev.cpu, ev.cur, ev.name) == (17_101_234_000, 2, 1234, "sched_switch")
    assert (ev.pid, ev.comm, ev.state, ev.next_pid, ev.next_comm) == \
        (1234, "Web Content", "R+", 99, "my-task-9")
    ev = waste.parse_line("  kworker/u16:3-e-77  [011]   5.000001: sched_wakeup: comm=a-b c "
                          "pid=5 prio=120 target_cpu=010")
    assert ev is not None and (ev.cpu, ev.cur, ev.comm, ev.pid, ev.cpu_arg) == (11, 77, "a-b c", 5, 10)
    ev = waste.parse_line("  <idle>-0 [001] ..s1. 1.5: sched_migrate_task: comm=x pid=7 prio=120 "
                          "orig_cpu=3 dest_cpu=1")
    assert ev is not None and (ev.ts, ev.orig_cpu, ev.cpu_arg) == (1_500_000_000, 3, 1)
    for skip in ("# tracer: nop", "", " => __schedule", "  x-1 [000] d..1. 1.0: <stack trace>",
                 "  x-1 [000] d..1. 1.0: sched_stat_runtime: comm=x pid=1 runtime=5"):
        assert waste.parse_line(skip) is None
    with pytest.raises(waste.ParseError):
        waste.parse_line("  x-1 [000] d..1. 1.0: sched_switch: garbage")


def test_affinity_file_and_kthreads():
    aff = waste.parse_affinity("# tid comm list\n339 hackbench 0-7\n12 Web Content 2,4-5\n"
                               "* hog 0-1\n\n")
    assert aff.by_pid == {339: frozenset(range(8)), 12: frozenset({2, 4, 5})}
    assert aff.by_comm == {"hog": frozenset({0, 1})}
    assert aff.mask(12, "hog") == frozenset({2, 4, 5})          # pid first
    assert aff.mask(99, "hog") == frozenset({0, 1})
    assert aff.mask(99, "kworker/3:1H-kb") == frozenset({3})
    assert aff.mask(99, "kworker/u16:3") is None
    for comm, cpu in (("ksoftirqd/12", 12), ("migration/0", 0), ("cpuhp/7", 7),
                      ("idle_inject/2", 2), ("rcuc/5", 5), ("kworker/R-rcu_g", None),
                      ("rcu_preempt", None)):
        assert waste.kthread_cpu(comm) == cpu
    with pytest.raises(waste.ParseError):
        waste.parse_affinity("339 0-7\n")


def test_topology_from_presets():
    assert T222.llc == {0: 0, 1: 0, 2: 0, 3: 0, 4: 1, 5: 1, 6: 1, 7: 1}
    assert set(T222.node.values()) == {0}
    t = waste.from_preset(topology.get("2node"))
    assert [t.node[c] for c in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    t = waste.from_preset(topology.get("8llc"))     # 2 sockets x 4 dies x 4 cores x 2 threads
    assert len(t.cpus) == 64 and t.llc[7] == 0 and t.llc[8] == 1 and t.llc[63] == 7
    assert t.node[31] == 0 and t.node[32] == 1
    with pytest.raises(WasteError, match="spans"):
        Topology.from_groups([[0, 1]], [[0], [1]])


def test_bad_traces():
    with pytest.raises(WasteError, match="no scheduler events"):
        waste.analyse(["# nothing"], T222)
    back = Trace().wakeup(100, 0, B, 0).wakeup(50, 0, C, 0)
    with pytest.raises(WasteError, match="backwards"):
        back.analyse()
    with pytest.raises(WasteError, match="online"):
        Trace().wakeup(100, 9, B, 0).analyse()
    with pytest.raises(WasteError, match="online"):
        same_llc().analyse(online=range(4))


def test_exit_frees_the_pid():
    # B exits on CPU 0 at 200 (switch-out X), its pid comes back as a new
    # task woken onto busy CPU 0 at 300 and run at 400: waits 100 -> CPUs
    # 1-3 wasted 3 x 100.
    t = Trace({0: A}).wakeup(100, 0, B, 1).switch(100, 1, "R", B).exit(200, 1, B)
    t.switch(200, 1, "X", 0).wakeup(300, 0, B, 0, "sched_wakeup_new")
    t.switch(400, 0, "S", B).switch(1000, 0, "S", 0)
    w = t.analyse()
    assert w.wasted["llc"] == us(300) and w.inconsistencies == 0


def test_inconsistencies_are_counted():
    # a switch on CPU 0 from a task the trace never put there
    t = Trace({0: A}).wakeup(100, 0, B, 0)
    t.cur[0] = C
    t.switch(200, 0, "S", B)
    assert t.analyse().inconsistencies >= 1


# ------------------------------------------------------------------ output

def test_as_dict_is_json_and_format_says_the_numbers():
    w = same_llc().analyse()
    d = json.loads(json.dumps(w.as_dict()))
    assert d["wasted"]["llc"] == pytest.approx(900e-6)
    assert d["fraction"]["llc"] == pytest.approx(0.1125)
    assert d["llc_fraction"] == {"0": pytest.approx(0.225), "1": pytest.approx(0.0)}
    assert d["histogram"]["0.1-1ms"] == 3 and d["began_episodes"]["arrival"] == 3
    text = w.format()
    assert "llc 0.000900 s (11.25%)" in text and "0 22.50%" in text
    assert "3 episodes" in text and "taken as idle" in text


def test_plot_timeline_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    t = Trace({0: A, 1: C}).wakeup(100, 0, B, 0).switch(300, 1, "S", 0)
    t.switch(600, 0, "S", B).switch(1000, 0, "S", 0)
    _, tl = waste.timeline(t.text().splitlines(), T222)
    path = tmp_path / "timeline.png"
    assert waste.plot_timeline(tl, path, "2x2x2 test")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------ cost

def synthetic(n: int, ncpus: int = 16, seed: int = 1) -> list[str]:
    """A consistent stream of about n events: tasks wake onto CPUs, run,
    get preempted, migrate while waiting and sleep."""
    rnd = random.Random(seed)
    t = Trace()
    queue: dict[int, list[int]] = {c: [] for c in range(ncpus)}
    asleep = list(range(1000, 1000 + 4 * ncpus))
    now = 0
    while len(t.lines) < n:
        now += rnd.randint(1, 20)
        c = rnd.randrange(ncpus)
        r = rnd.random()
        if asleep and r < 0.35:
            pid = asleep.pop(rnd.randrange(len(asleep)))
            t.wakeup(now, c, pid, c)
            queue[c].append(pid)
        elif r < 0.45 and queue[c]:
            d = rnd.randrange(ncpus)
            pid = queue[c].pop()
            t.migrate(now, d, pid, c, d)
            queue[d].append(pid)
        elif queue[c]:
            nxt = queue[c].pop(0)
            prev = t.cur.get(c, 0)
            preempt = prev and rnd.random() < 0.3
            t.switch(now, c, "R+" if preempt else "S", nxt)
            if preempt:
                queue[c].append(prev)
            elif prev:
                asleep.append(prev)
        elif t.cur.get(c, 0):
            asleep.append(t.cur[c])
            t.switch(now, c, "S", 0)
    return t.lines


def test_200k_events_in_a_few_seconds():
    lines = synthetic(200_000)
    topo = waste.from_preset(topology.get("2x4x2"))
    began = time.perf_counter()
    an = waste.Analyser(topo)
    w = an.feed_lines(lines).finish()
    took = time.perf_counter() - began
    assert w.events >= 199_000
    assert w.inconsistencies == 0
    assert 0 < w.wasted["llc"] <= w.wasted["node"] <= w.wasted["machine"] <= w.idle_total
    assert took < 20, f"{took:.1f} s for {w.events} events"


def test_reads_an_open_file_and_parse_numbers_lines():
    import io
    w = waste.analyse(io.StringIO(same_llc().text()), T222)    # lines keep their "\n"
    assert w.wasted["llc"] == us(900)
    events = list(waste.parse(same_llc().text().splitlines()))
    assert [e.name for e in events[:3]] == ["tracing_mark_write", "sched_wakeup", "sched_switch"]
    with pytest.raises(LostEvents) as e:
        list(waste.parse(["# x", "CPU:0 [LOST 3 EVENTS]"]))
    assert e.value.lineno == 2 and e.value.count == 3


def test_a_cpu_not_seen_within_the_lookahead_is_taken_as_idle():
    # CPU 5 runs D all along but records its first line (a marker) at 500.
    t = Trace({0: A, 5: D}).wakeup(100, 0, B, 0).mark(500, 5, "late")
    t.switch(600, 0, "S", B).switch(1000, 0, "S", 0)
    # looking ahead far enough: CPU 5 busy from 0, so only CPUs 4, 6, 7 are
    # machine-wasted beside 1-3: 6 x 500 (B waits 100..600) = 3000
    w = t.analyse()
    assert w.wasted["machine"] == us(3000) and w.idle[5] == us(0)
    assert 5 not in w.assumed_idle_cpus and w.inconsistencies == 0
    # with a 2-event lookahead CPU 5 is assumed idle (and wasted 100..600);
    # its marker then contradicts that: 1 inconsistency
    w = waste.Analyser(T222, lookahead=2).feed_lines(t.text().splitlines()).finish()
    assert 5 in w.assumed_idle_cpus and w.inconsistencies == 1
    assert w.wasted["machine"] == us(3500)


def test_per_cpu_stats_with_overruns_or_drops_fail():
    good = ("==> /sys/kernel/tracing/per_cpu/cpu0/stats <==\nentries: 10\noverrun: 0\n"
            "commit overrun: 0\nbytes: 640\noldest event ts:    12.000001\nnow ts:    13.5\n"
            "dropped events: 0\nread events: 0\n")
    waste.check_stats(good + good.replace("cpu0", "cpu1"))
    with pytest.raises(LostEvents) as e:
        waste.check_stats(good + good.replace("cpu0", "cpu1").replace("dropped events: 0",
                                                                     "dropped events: 7"))
    assert (e.value.cpu, e.value.count) == (1, 7)
    with pytest.raises(LostEvents):
        waste.check_stats("overrun: 3\n")
