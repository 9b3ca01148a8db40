"""The wasted-CPU measure on a constructed scenario whose answer is known
(docs/waste.md): real guest traces, hand-computed expectations.

On 2x2x2 (LLC 0 = CPUs 0-3, LLC 1 = CPUs 4-7), two busy loops run for a
traced window of W = 2 s of guest time:

* stacked: both pinned to CPU 1.  One of the two always waits, so the run
  delay is W (the kernel's own count, /proc/PID/schedstat's run_delay read
  at the window's edges, says the same); neither may run anywhere else, so no CPU's idle time is
  wasted: LLC-wasted ~ 0.  Measured again as if nothing were pinned (no
  affinity map), the waiting loop makes the three other CPUs of LLC 0 (0,
  2, 3) wasted while they are idle: ~3 W at the LLC level, ~7 W for the
  machine (CPUs 4-7 too).  That contrast is the affinity-awareness.
* spread: one pinned to CPU 0, one to CPU 1: nothing waits: run delay ~ 0,
  LLC-wasted ~ 0.

* restacked (workloads/restack.c): two loops pinned to CPU 1, then both
  allowed on {1, 2}, every 50 ms, 30 rounds; the program writes each mask
  change as a trace marker, so the measure follows it.  The answer by
  hand: the loops' waiting in all (the kernel's run_delay) less the stacked
  phases' length (one loop waits all along there, pinned: no waste) is the
  time CPU 2 sat idle while a loop it could run waited.  With CPU 2
  otherwise empty the measure must say about that (less where CPU 2 ran
  the stopper thread that moved a loop, or had a loop moved to it and not
  yet switched in: not idle, and under TCG stretched by the host).  With
  CPU 2 blinking (a pinned task runs 100 us, sleeps 1 ms: idle entries)
  STEAL pulls a loop at CPU 2's next idle entry, where newidle balancing
  is mostly gated off by its cost: the waste that began at an idle entry
  drops (by 75-99% in fifteen boots on 2026-11-26, by 59% in one with two
  other guests loading the host; asserted: by at least 50%, over two
  runs a side after a first blinking run has settled CPU 2: RESTACK).
  The whole waste drops less (by 50-95%; asserted: it drops): what began
  when the mask widened with CPU 2 already idle waits for the next idle
  entry on both sides.

The tolerances allow for the guest's own housekeeping (the shell, kworkers,
the timer tick): a few percent of W.  The loops start before the trace: the
one waiting when it starts is known to wait from its first event (its
switch-in, with no wakeup before it: waste/), so nothing is lost when a
starved vCPU delays the first switch by hundreds of ms.
"""
from __future__ import annotations

import json

import pytest

from idlesteal.measure import schedstat, tracerun, waste
from idlesteal.guest import topology, tracepins, vm

pytestmark = pytest.mark.guest

W = 2
# What the guest's own tasks (the shell, kworkers) may waste or wait in a
# window, as a share of it: an unpinned one woken onto the loops' CPU waits
# there up to a tick while CPUs of its LLC are idle.  .ci/run of e5956f0
# (2026-11-27) saw 0.061 s in W = 2.1 s (2.9%: 9 episodes, three of 20 ms);
# 2% had held before.
HOUSEKEEPING = 0.05
SCENARIOS = {"stacked": (1, 1), "spread": (0, 1)}
T222 = waste.from_preset(topology.get("2x2x2"))


def script() -> str:
    lines = [*tracerun.setup(8, 1024),
             "loop() { taskset -c $1 sh -c 'while :; do :; done' & }"]
    for name, (c1, c2) in SCENARIOS.items():
        lines += [f"loop {c1}; h1=$!", f"loop {c2}; h2=$!", "sleep 0.3",
                  f"section {name}.affinity", waste.AFFINITY_SNIPPET,
                  f"section {name}.pids", "echo $h1 $h2",
                  # the kernel's own run_delay, read inside the window
                  "trace_on",
                  f"section {name}.rd_before", "cat /proc/$h1/schedstat /proc/$h2/schedstat",
                  f"sleep {W}",
                  f"section {name}.rd_after", "cat /proc/$h1/schedstat /proc/$h2/schedstat",
                  "trace_off",
                  "kill $h1 $h2; wait $h1 $h2 2>/dev/null",
                  f"trace_dump {name}"]
    # the tracepoints pinned at boot (guest/tracepins.py): each instance,
    # its tracing_on, the events it has on and the lines it recorded
    lines += ["section tracepins",
              "for i in $TRACEFS/instances/*; do",
              "  echo \"$(basename $i) $(cat $i/tracing_on) $(grep -vc '^#' $i/trace)"
              " $(cd $i/events/sched && grep -l '^1' */enable | sed 's,/enable,,' | tr '\\n' ' ')\"",
              "done"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def run(guest) -> vm.RunResult:
    return vm.run_script(script(), topology.get("2x2x2"), guest.kernel, guest.initrd,
                         timeout=300, name="waste-scenario")


def measure(run: vm.RunResult, name: str, pinned: bool = True) -> waste.Waste:
    aff = waste.parse_affinity(run.sections[f"{name}.affinity"]) if pinned else None
    return tracerun.measure(run.sections, name, T222, affinity=aff)


def kernel_run_delay(run: vm.RunResult, name: str) -> float:
    """Seconds the two loops waited, by the kernel's own schedstat count."""
    def total(text: str) -> int:
        return sum(int(l.split()[1]) for l in text.splitlines() if l.strip())
    return (total(run.sections[f"{name}.rd_after"])
            - total(run.sections[f"{name}.rd_before"])) / 1e9


def test_the_loops_were_pinned_as_planned(run):
    for name, (c1, c2) in SCENARIOS.items():
        aff = waste.parse_affinity(run.sections[f"{name}.affinity"])
        h1, h2 = map(int, run.sections[f"{name}.pids"].split())
        assert aff.by_pid[h1] == {c1} and aff.by_pid[h2] == {c2}


def test_the_boot_pinned_the_measures_tracepoints(run):
    """Two instances made at boot, tracing off, recording nothing, each
    with every event of the measure on: enabling the measure's events
    then patches no code (docs/tcg.md, "Tracepoints pinned at boot")."""
    rows = {}
    for line in run.sections["tracepins"].splitlines():
        name, on, recorded, *events = line.split()
        rows[name] = (on, recorded, sorted(events))
    assert sorted(rows) == sorted(tracepins.INSTANCES), run.sections["tracepins"]
    for on, recorded, events in rows.values():
        assert (on, recorded, events) == ("0", "0", sorted(tracepins.EVENTS))


def test_stacked_loops_wait_but_waste_nothing(run):
    w = measure(run, "stacked")
    assert W <= w.window < 1.5 * W      # sleep never returns early; late under load
    assert w.inconsistencies == 0
    # one of the two always waits
    assert 0.9 * w.window <= w.run_delay <= 1.1 * w.window, w.format()
    # the kernel's count agrees: its reads bracket `sleep W` inside the
    # window, so it covers at least W and at most the window
    k = kernel_run_delay(run, "stacked")
    assert w.run_delay - (w.window - W) - 0.02 * W <= k <= w.run_delay + 0.02 * W, w.format()
    # pinned: no other CPU could have run it (the guest's own tasks aside)
    assert w.wasted["llc"] < HOUSEKEEPING * w.window, w.format()


def test_the_same_trace_without_affinity_wastes_three_cpus(run):
    w = measure(run, "stacked", pinned=False)
    assert 2.8 * w.window <= w.wasted["llc"] <= (3.0 + HOUSEKEEPING) * w.window, w.format()
    assert 6.5 * w.window <= w.wasted["machine"] <= (7.0 + HOUSEKEEPING) * w.window, w.format()
    # CPU 1 itself is never idle, the other three of LLC 0 carry the waste
    assert w.wasted_cpu[1] < 0.01 * w.window
    assert all(w.wasted_cpu[c] > 0.9 * w.window for c in (0, 2, 3))


def test_spread_loops_neither_wait_nor_waste(run):
    w = measure(run, "spread")
    assert w.inconsistencies == 0
    # what waits is the guest's housekeeping on CPUs 0 and 1 (the shell,
    # kworkers): 5.7% of the window once with the host loaded (2026-11-26)
    assert w.run_delay < 0.1 * w.window, w.format()
    assert w.wasted["llc"] < HOUSEKEEPING * w.window, w.format()
    assert kernel_run_delay(run, "spread") < 0.1 * W


# (features, -b argument or None): the restacked scenario's runs, in
# order.  NO_STEAL's waste while CPU 2 blinks varies from run to run and
# with what ran before (experiments/2026-11-27-waste-restack/, 2026-11-27): the first
# blinking run of a boot wasted 0.04-0.48 s, the next 0.40-0.84 s, one
# right after two STEAL runs 0.62-1.33 s; a CI run of 823db30 failed the
# cut with a first run of 0.048 s (STEAL 0.027 s).  So a first blinking
# run settles CPU 2 (its waste is bounded, not compared), then two runs a
# side, NO_STEAL before STEAL so that no pull's cost, charged to the LLC's
# newidle cost estimate, gates NO_STEAL's passes.
RESTACK = {"NO_STEAL.quiet": ("NO_STEAL", None), "NO_STEAL.settle": ("NO_STEAL", 100),
           "NO_STEAL.blink": ("NO_STEAL", 100), "NO_STEAL.blink2": ("NO_STEAL", 100),
           "STEAL.blink": ("STEAL", 100), "STEAL.blink2": ("STEAL", 100)}
BLINK = {"NO_STEAL": ("NO_STEAL.blink", "NO_STEAL.blink2"),
         "STEAL": ("STEAL.blink", "STEAL.blink2")}
ROUNDS, PHASE_MS = 30, 50


def restack_script() -> str:
    lines = [*tracerun.setup(8, 1024)]
    for tag, (feature, blink) in RESTACK.items():
        opt = f" -b {blink}" if blink is not None else ""
        lines += [f"set_features {feature}", f"section {tag}.s0", "schedsnap", "trace_on",
                  f"section {tag}.out",
                  f"restack -s 1 -y 2 -r {ROUNDS} -p {PHASE_MS}{opt} || fail restack",
                  "trace_off", f"section {tag}.s1", "schedsnap", f"trace_dump {tag}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def restacked(guest) -> vm.RunResult:
    return vm.run_script(restack_script(), topology.get("2x2x2"), guest.kernel, guest.initrd,
                         timeout=600, name="waste-restack")


def restack_result(run: vm.RunResult, tag: str) -> dict:
    line = next(l for l in run.sections[f"{tag}.out"].splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def by_hand(r: dict) -> float:
    """Seconds CPU 2 sat idle while a loop it could run waited, by hand."""
    return (r["run_delay_ms"] - r["stacked_ms"]) / 1e3


def test_restacked_loops_waste_what_the_hand_count_says(restacked):
    r = restack_result(restacked, "NO_STEAL.quiet")
    assert r["traced"] and r["rounds"] == ROUNDS
    # one loop waits through every stacked phase: at least their length
    assert r["stacked_ms"] >= ROUNDS * PHASE_MS and r["run_delay_ms"] >= r["stacked_ms"]
    w = tracerun.measure(restacked.sections, "NO_STEAL.quiet", T222)
    assert w.inconsistencies == 0, w.format()
    hand = by_hand(r)
    # the markers, not a snapshot, give the masks: the stacked phases add
    # nothing, the widened ones what the kernel's count leaves for them
    assert 0.5 * hand <= w.wasted["llc"] <= 1.05 * hand + 0.01, (hand, w.format())
    # CPU 2 carries it; only CPU 2 was ever allowed besides the loops' own.
    # The rest is the guest's housekeeping waiting a moment (restack's own
    # thread, kworkers): 16 ms of 3.4 s on CPUs 1 and 3 once (2026-11-26)
    assert w.wasted["llc"] - w.wasted_cpu[2] <= 0.02 * w.window, w.format()
    # without the markers the loops count as movable anywhere in LLC 0: the
    # stacked phases waste CPUs 0, 2 and 3 too
    lines = [l for l in tracerun.lines(restacked.sections, "NO_STEAL.quiet")
             if waste.AFFINITY_MARK not in l]
    plain = waste.analyse(lines, T222, start=tracerun.START, end=tracerun.END)
    assert plain.wasted["llc"] >= w.wasted["llc"] + 2 * r["stacked_ms"] / 1e3, plain.format()


def test_steal_at_idle_entry_cuts_the_restacked_waste(restacked):
    measured = {tag: tracerun.measure(restacked.sections, tag, T222)
                for tag, (_, blink) in RESTACK.items() if blink is not None}
    for tag, w in measured.items():
        assert w.inconsistencies == 0, (tag, w.format())
        d = schedstat.delta(schedstat.parse(restacked.sections[f"{tag}.s0"]),
                            schedstat.parse(restacked.sections[f"{tag}.s1"]))
        stole = d.totals["steal_tasks"]
        assert stole > 0 if tag.startswith("STEAL.") else stole == 0, (tag, stole)
        # the waste is bounded by the hand count in every run
        hand = by_hand(restack_result(restacked, tag))
        assert w.wasted["llc"] <= 1.05 * hand + 0.01, (tag, hand, w.format())

    def idle_entry(feature: str) -> float:
        return sum(measured[t].began["idle_entry"] for t in BLINK[feature])

    def llc(feature: str) -> float:
        return sum(measured[t].wasted["llc"] for t in BLINK[feature])

    def shown(feature: str) -> str:
        return "\n".join(f"{t}: {measured[t].format()}" for t in BLINK[feature])
    # STEAL acts where CPU 2 goes idle: the waste that began at an idle
    # entry.  NO_STEAL leaves a loop waiting for a periodic or nohz balance
    # while CPU 2 blinks: 0.25-1.28 s a run of 30 rounds once settled,
    # STEAL 0.009-0.044 s (eight boots, experiments/2026-11-27-waste-restack/probe.txt).  What
    # began at the mask's widening, CPU 2 already idle, no pull path sees
    # until the next idle entry or balance on both sides (the case of the
    # separate arrival kick, off here).
    idle_off, idle_on = idle_entry("NO_STEAL"), idle_entry("STEAL")
    runs = len(BLINK["NO_STEAL"])
    assert idle_off > 0.02 * runs * ROUNDS * PHASE_MS / 1e3, shown("NO_STEAL")
    assert idle_on < 0.5 * idle_off, (idle_on, idle_off, shown("STEAL"), shown("NO_STEAL"))
    assert llc("STEAL") < llc("NO_STEAL"), (shown("STEAL"), shown("NO_STEAL"))
