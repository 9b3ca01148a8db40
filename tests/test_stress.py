"""Stress suite: guest-script generation, output parsers, verdict (no guest)."""
from __future__ import annotations

import json

import pytest

from idlesteal import guest
from idlesteal.measure import overload
from idlesteal.runs import stress
from idlesteal.guest import topology, vm

P = stress.Params(seconds=120, ncpus=8)


def schedstat_text(steal_per_cpu: int, ncpus: int = 8, ts: int = 1000) -> str:
    lb = " ".join(["0"] * 33)
    dom = " ".join(["0"] * 12)
    lines = ["version 17", f"timestamp {ts}"]
    for c in range(ncpus):
        lines.append(f"cpu{c} 0 0 100 10 50 20 1000 2000 30")
        for k, name in enumerate(("SMT", "MC", "PKG")):
            lines.append(f"domain{k} {name} ff {lb} {dom}")
    for c in range(ncpus):       # what `schedsnap` adds from sched/debug
        lines += [f"cpu#{c}, 2600.000 MHz", f"  .steal_tasks                   : {steal_per_cpu}",
                  "  .steal_failed                  : 5",
                  f"  .steal_search_ns               : {steal_per_cpu * 100}"]
    return "\n".join(lines) + "\n"


def msg(worker: str, rc: int = 0, sent: int = 960, received: int = 960, **kw) -> str:
    r = {"sent": sent, "received": received, "errors": 0, "seq_gaps": 0, "seq_backwards": 0,
         "malformed": 0, "payload_errors": 0, "timeout": False, "system_error": False}
    r.update(kw)
    return f"MSGCOUNT {worker} rc={rc} expect=960 RESULT {json.dumps(r)}"


def good_sections(**over: str) -> dict[str, str]:
    counters = "\n".join([
        "hackbench0 runs=20 fails=0", "hackbench1 runs=20 fails=0",
        "msgcount0 runs=10 fails=0", "msgcount1 runs=10 fails=0", "wakelat runs=5 fails=0",
        "thr_msgcount runs=0 fails=0", "thr_hackbench runs=5 fails=0", "thr_busy loops=40",
        "hotplug offline=30 online=28 fail=1",
        "partition created=30 root=28 invalid=2 member=29 removed=30 errors=1 hackbench=30 hackbench_fails=0",
        "affinity runs=8 fails=0", "taskset ok=300 fail=20",
        "features sets=110 fail=0 steal_changes=40 dd_changes=50",
        "monitor overload_reads=110", "dmesg attach=900 detach=100 errors=0",
    ])
    aff = {"threads": 8, "checks": 5000, "violations": 0, "mask_changes": 300,
           "affinity_resets": 3}
    s = {
        "counters": counters,
        "msgcount": "\n".join([msg("msgcount0")] * 10 + [msg("msgcount1")] * 10) + "\n",
        "affinity": "\n".join([f"AFFINITY rc=0 RESULT {json.dumps(aff)}"] * 8) + "\n",
        "wakelat": "\n".join(['WAKELAT rc=0 RESULT {"requests": 1000}'] * 5) + "\n",
        "schedstat_before": schedstat_text(0),
        "schedstat_after": schedstat_text(500, ts=121000),
        "throttle": "usage_usec 1\nnr_periods 1000\nnr_throttled 400\nthrottled_usec 99\n",
        "overload_before": "llc 0-3 overloaded \nllc 4-7 overloaded 5\n",
        "overload_after": "llc 0-3 overloaded \nllc 4-7 overloaded \n",
        "online_after": "0-7\n",
        "features_after": "GENTLE_FAIR_SLEEPERS STEAL DELAY_DEQUEUE\n",
        "cleanup": "online 0-7\n",
    }
    s.update(over)
    return s


def test_script_is_fully_substituted_and_valid_ash():
    text = stress.script(P)
    assert "@" not in text.replace('"$@"', "")
    assert "hotplug" in text and "cpuset.cpus.partition" in text and "cpu.max" in text
    assert "NO_STEAL" in text and "NO_DELAY_DEQUEUE" in text
    # partitions stay off the CPUs affinity_check runs on, and off cpu0
    for choice in P.partition_choices():
        assert all(int(x) >= 4 for x in choice.replace("-", ",").split(","))
    assert P.low_cpus == "0-3"
    # busybox ash -n of the whole script: tests/test_guest_scripts.py


def test_script_preamble_sets_what_stress_sh_checks():
    import re
    checked = re.findall(r'"\$\{(\w+):?\?\}"', guest.read("stress.sh"))
    assert sorted(checked) == sorted(stress.script_params(P))
    text = stress.script(P)
    assert "\nPART_CHOICES='4-7 4-5 6-7 5-7 4,6 5-6 4-6'\n" in text
    assert text.index("guest_topology() {") < text.index("\nguest_topology\n")


def test_parse_counters():
    c = stress.parse_counters("hotplug offline=3 online=2 fail=0\nmonitor missing\n\n")
    assert c == {"hotplug": {"offline": 3, "online": 2, "fail": 0}, "monitor": {"missing": 1}}


def test_parse_runs_and_problems():
    runs = stress.parse_runs("\n".join([
        msg("msgcount0"),
        msg("msgcount1", rc=2, received=959, seq_gaps=1),
        "MSGCOUNT thr_msgcount rc=137 expect=180 ",
        'AFFINITY rc=0 RESULT {"checks": 10, "violations": 0}',
        'AFFINITY rc=2 RESULT {"checks": 10, "violations": 3}',
        "noise",
    ]))
    assert [(r.kind, r.worker, r.rc) for r in runs] == [
        ("MSGCOUNT", "msgcount0", 0), ("MSGCOUNT", "msgcount1", 2),
        ("MSGCOUNT", "thr_msgcount", 137), ("AFFINITY", "", 0), ("AFFINITY", "", 2)]
    assert runs[0].problems() == []
    probs = runs[1].problems()
    assert any("received 959" in p for p in probs) and any("seq_gaps=1" in p for p in probs)
    assert "no RESULT" in runs[2].problems()[0]
    assert runs[3].problems() == []
    assert any("3 affinity violation" in p for p in runs[4].problems())


def test_msgcount_short_of_expected_is_a_problem():
    r = stress.parse_runs(msg("m", sent=900, received=900))[0]
    assert r.problems() and "expected 960" in r.problems()[0]


def test_parse_overload_and_cpustat():
    assert overload.parse_overload("llc 0-3 overloaded 1,2\nllc 4-7 overloaded \n") == [
        ("0-3", "1,2"), ("4-7", "")]
    with pytest.raises(ValueError):
        overload.parse_overload("garbage\n")
    # The kernel's own consistency check (sched/debug) names a CPU: a failure.
    with pytest.raises(ValueError, match="disagrees with its LLC's mask"):
        overload.parse_overload("llc 0-3 overloaded 1 inconsistent 2\nllc 4-7 overloaded \n")
    assert stress.parse_cpustat("nr_periods 10\nnr_throttled 4\n") == {
        "nr_periods": 10, "nr_throttled": 4}


def test_thresholds_scale_with_duration():
    short, long = stress.thresholds(60), stress.thresholds(600)
    assert long["steals"] >= 1000, "the long run must need steals in the thousands"
    assert all(long[k] >= short[k] for k in short)
    assert all(v >= 1 for v in short.values())
    assert stress.thresholds(1)["steals"] == stress.THRESHOLDS["steals"].floor


def test_evaluate_good_run_passes():
    v = stress.evaluate(good_sections(), P)
    assert v.passed, v.failures
    assert v.counts["steals"] == 4000 and v.counts["hotplug_ops"] == 58
    assert v.counts["partition_changes"] == 57 and v.counts["nr_throttled"] == 400
    assert v.counts["msgcount_runs"] == 20 and v.counts["messages"] == 20 * 960
    assert v.counts["domain_attach"] == 900 and v.counts["affinity_checks"] == 40000


@pytest.mark.parametrize("over, needle", [
    ({"overload_after": "llc 0-3 overloaded 2\nllc 4-7 overloaded \n"}, "still marked overloaded"),
    ({"online_after": "0-6\n"}, "CPUs online after"),
    ({"schedstat_after": schedstat_text(1, ts=2000)}, "steals = 8 < minimum"),
    ({"throttle": "nr_throttled 0\n"}, "nr_throttled = 0 < minimum"),
    ({"msgcount": msg("msgcount0", rc=2, received=1) + "\n"}, "workload problem"),
    ({"cleanup": "leftover cgroup /sys/fs/cgroup/part3\n"}, "leftover cgroup"),
    ({"features_after": "NO_STEAL DELAY_DEQUEUE\n"}, "features not restored"),
    ({"wakelat": 'WAKELAT rc=2 RESULT {"requests": 0}\n'}, "wakelat: exit code 2"),
])
def test_evaluate_failures(over, needle):
    v = stress.evaluate(good_sections(**over), P)
    assert not v.passed
    assert any(needle in f for f in v.failures), v.failures


def test_evaluate_missing_worker_and_domain_errors():
    s = good_sections()
    s["counters"] = s["counters"].replace("monitor overload_reads=110", "monitor missing")
    s["counters"] = s["counters"].replace("errors=0", "errors=2")
    v = stress.evaluate(s, P)
    assert any("did not finish: monitor" in f for f in v.failures)
    assert any("ERROR line" in f for f in v.failures)


def test_evaluate_counts_mismatch_between_workers_and_results():
    s = good_sections(msgcount=msg("msgcount0") + "\n")
    v = stress.evaluate(s, P)
    assert any("results logged" in f for f in v.failures)


def test_summary_fields(tmp_path):
    from idlesteal.guest import topology
    v = stress.evaluate(good_sections(), P)
    s = stress.summary(topology.get("2x2x2"), P, v, variant="debug", uname="7.2.13-idlesteal",
                       guest={"boot_seconds": 1.0})
    for k in ("passed", "counts", "minimums", "preset", "seconds", "date", "host", "kernel"):
        assert k in s
    assert s["kernel"]["uname_r"] == "7.2.13-idlesteal" and "series_commit" in s["kernel"]
    assert s["host"]["cores"] >= 1
    path = stress.write_summary(s, tmp_path)
    assert json.loads(path.read_text())["passed"] is True
    assert "PASS" in stress.report(s)


WAKELAT_STALL = ('WAKELAT rc=2 RESULT {"seconds": 15.2, "requests": 900, "samples": 901,'
                 ' "lat_max_us": 2400000, "stalled": true}\n'
                 "STALL worker 5 tid 812: woken 30.4 s ago, state R, cpu 3,"
                 " schedstat [1000 30000000000 12]\n")


def test_wakelat_stall_is_explained_in_the_report(tmp_path):
    """A stalled wakelat run says so (not just "exit code 2"), and the
    report carries what the unanswered worker was doing."""
    from idlesteal.guest import topology
    v = stress.evaluate(good_sections(wakelat=WAKELAT_STALL), P)
    assert not v.passed
    assert any("stalled" in f and "2.4 s" in f for f in v.failures), v.failures
    assert v.details["wakelat_stalls"] == [WAKELAT_STALL.splitlines()[1]]
    assert v.counts["wakelat_max_ms"] == 2400
    s = stress.summary(topology.get("2x2x2"), P, v, variant="debug", uname="7.2.13",
                       guest={"boot_seconds": 1.0})
    text = stress.report(s)
    assert "state R, cpu 3" in text and "wakelat_max_ms" in text


def test_wakelat_without_sample_is_named():
    v = stress.evaluate(good_sections(
        wakelat='WAKELAT rc=2 RESULT {"seconds": 12.0, "requests": 0, "samples": 0,'
                ' "stalled": false}\n'), P)
    assert any("no request completed in 12.0 s" in f for f in v.failures), v.failures
    assert "wakelat_stalls" not in v.details


def test_stress_wakelat_grace_reaches_the_guest():
    assert "-g 30" in P.wakelat
    assert "-g 30" in stress.script(P)


@pytest.mark.parametrize("line", [
    "[  40.1] watchdog: BUG: soft lockup - CPU#3 stuck for 62s! [hackbench:123]",
    "[ 100.0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
    "[ 100.0] rcu: INFO: rcu_preempt self-detected stall on CPU",
    "[ 200.0] INFO: task kworker/0:1:12 blocked for more than 120 seconds.",
    "[   5.0] WARNING: possible recursive locking detected",
    "[   5.0] WARNING: possible circular locking dependency detected",
    "[   5.0] BUG: KASAN: slab-use-after-free in try_steal+0x1/0x2",
    "[   5.0] ODEBUG: free active (active state 1) object: 0000 object type: rcu_head",
    "[   5.0] UBSAN: array-index-out-of-bounds in kernel/sched/fair.c:12:3",
    "[   5.0] watchdog: Watchdog detected hard LOCKUP on cpu 1",
    "[   5.0] INFO: lockdep is turned off.",
])
def test_debug_kernel_reports_are_kernel_errors(line):
    assert vm.kernel_errors(line) == [line.strip()]


@pytest.mark.parametrize("line", [
    "[   0.0] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar",
    "[   0.0] ... MAX_LOCKDEP_SUBCLASSES:  8",
    "[   0.0] kasan: KernelAddressSanitizer initialized",
    "[   0.0] rcu: \tRCU CPU stall warnings timeout set to 60 (rcu_cpu_stall_timeout).",
])
def test_debug_kernel_boot_messages_are_not_errors(line):
    assert vm.kernel_errors(line) == []


EARLY = """[    0.825379] BUG: KASAN: wild-memory-access in do_raw_spin_lock+0x113/0x240
[    0.825379] Write of size 4 at addr ff110000001a9118 by task swapper/0/0
[    1.124659] smp: Bringing up secondary CPUs ...
[    2.000000] sched_sparsemask: pass:18 fail:0
"""


def test_errors_before_smp_only_when_all_are_early():
    assert stress.errors_before_smp(EARLY) == [
        "[    0.825379] BUG: KASAN: wild-memory-access in do_raw_spin_lock+0x113/0x240"]
    late = EARLY + "[   58.000000] WARNING: CPU: 3 PID: 1 at kernel/sched/fair.c:100 x\n"
    assert stress.errors_before_smp(late) == []          # one late report: no excuse
    assert stress.errors_before_smp(EARLY.replace("smp: Bringing up", "smp: x")) == []
    assert stress.errors_before_smp("[    1.0] smp: Bringing up secondary CPUs ...\n") == []


SCX_STOP = """rc 0
state disabled
final steals=300 failed=20 search_ns=5000 gated=0 kicks=9 local=1 queued=2 remote_llc=0 steal=on
scx_idlesteal: restarting (topology changed)
final steals=900 failed=30 search_ns=7000 gated=0 kicks=9 local=1 queued=2 remote_llc=0 steal=on
EXIT: unregistered from user space
"""
P_SCX = stress.Params(seconds=120, ncpus=8, scx=("scx_idlesteal",))


def test_evaluate_under_scx_counts_the_loaders_steals_over_restarts():
    # fair-class steals are 0 under sched_ext; no CFS bandwidth throttling
    s = good_sections(schedstat_after=schedstat_text(0, ts=121000), scx_stop=SCX_STOP,
                      throttle="nr_throttled 0\n")
    v = stress.evaluate(s, P_SCX)
    assert v.passed, v.failures
    assert v.counts["steals"] == 1200 and v.counts["scx_loads"] == 2
    assert v.counts["scx_restarts"] == 1 and "nr_throttled" not in v.minimums
    assert stress.script_params(P_SCX)["SCX"] == "scx_idlesteal"
    assert stress.script_params(P)["SCX"] == ""


@pytest.mark.parametrize("text, needle", [
    (SCX_STOP.replace("rc 0", "rc 1"), "did not unload cleanly"),
    ("loader 412 still running 60 s after SIGINT, sched_ext enabled\n"
     "  thread 412 state D cpu 3 wchan kthread_flush_work\n    [<0>] kthread_flush_work+0x8/0x10\n",
     "did not exit after SIGINT:\nloader 412 still running 60 s after SIGINT, sched_ext enabled\n"
     "  thread 412 state D cpu 3 wchan kthread_flush_work\n    [<0>] kthread_flush_work"),
    ("rc 0\nstate disabled\n", "no final counter line"),
    (SCX_STOP.replace("steals=300", "steals=1").replace("steals=900", "steals=2"),
     "steals = 3 < minimum 200 (the sched_ext scheduler's steals"),
])
def test_evaluate_under_scx_failures(text, needle):
    v = stress.evaluate(good_sections(scx_stop=text), P_SCX)
    assert any(needle in f for f in v.failures), v.failures


def test_scx_params_keep_the_suites_hotplug_and_minimums():
    from idlesteal.guest import topology
    p = stress.params_for(topology.get("2x2x2"), 60, ("scx_idlesteal",))
    assert p.scx == ("scx_idlesteal",) and p.hotplug_sleep == stress.SCX_HOTPLUG_SLEEP
    assert stress.params_for(topology.get("2x2x2"), 60).hotplug_sleep == "0.5" == p.hotplug_sleep
    for name in ("steals", "hotplug_ops"):
        assert stress.thresholds(60, scx=True)[name] == stress.thresholds(60)[name]


# A trimmed excerpt in the format guest/stress.sh keeps (ftrace text, the
# stacktrace trigger's lines after the event they belong to).
EXCERPT = """\
 affinity_check-339   [003] d..2.    17.101: tracing_mark_write: affinity_check: tid 339 setaffinity 0-1,3
      <idle>-0       [002] d..2.    17.203: sched_migrate_task: comm=affinity_check pid=339 prio=120 orig_cpu=3 dest_cpu=2
      <idle>-0       [002] d..2.    17.203: <stack trace>
 => __detach_task
 => steal_from
 => try_steal
 => __schedule
 kworker/0:1-40      [000] .....    17.300: cpuhp_enter: cpu: 0001 target: 148 step: 147 (sched_cpu_deactivate)
 affinity_check-339   [002] .....    17.310: tracing_mark_write: affinity_check: VIOLATION tid 339 rseq_cpu 2 getcpu 2 stat_cpu 2 mask 0-1,3 kernel_mask 0,3
"""


def test_trace_moves_reads_each_move_with_its_stack():
    lines = stress.affinity_excerpt(EXCERPT)
    moves = stress.trace_moves(lines)
    assert moves == [{"time": 17.203, "pid": 339, "orig_cpu": 3, "dest_cpu": 2,
                      "stack": ["__detach_task", "steal_from", "try_steal", "__schedule"]}]
    assert stress.affinity_excerpt("no violation in the trace\n") == []
    assert stress.affinity_excerpt("") == []


def test_evaluate_keeps_the_trace_of_a_violation():
    aff = {"threads": 6, "checks": 5000, "violations": 2, "mask_changes": 300}
    v = stress.evaluate(good_sections(
        affinity=f"AFFINITY rc=2 RESULT {json.dumps(aff)}\n",
        counters=good_sections()["counters"].replace("affinity runs=8 fails=0",
                                                     "affinity runs=1 fails=1"),
        affinity_trace=EXCERPT), P)
    assert not v.passed
    assert v.details["affinity_moves"][0]["stack"][1] == "steal_from"
    assert any("VIOLATION" in l for l in v.details["affinity_trace"])


def test_steal_off_drops_the_steal_minimum_and_reaches_the_script():
    assert "steals" not in stress.thresholds(600, steal="off")
    assert "steals" in stress.thresholds(600)
    p = stress.Params(seconds=60, ncpus=8, steal="off")
    assert "\nSTEAL_MODE=off\n" in stress.script(p)
    with pytest.raises(Exception):
        stress.params_for(topology.get("2x2x2"), 60, steal="sometimes")


def real_excerpt() -> list[str]:
    """The excerpt of a failing 2x2x2 run on the debug kernel before the
    __migrate_task() fix (2026-11-25, 300 s, tid 10280)."""
    from pathlib import Path
    text = (Path(__file__).parent / "data" / "stress-affinity-trace.txt").read_text()
    return stress.affinity_excerpt(text)


def test_stopper_race_found_in_the_real_trace():
    race = stress.stopper_race(real_excerpt())
    assert race == {"tid": 10280, "cpu": 0, "mask": "1-3", "deactivated_cpu": 1,
                    "deactivate_time": 249.626028, "stopper_time": 249.626195,
                    "setaffinity_time": 249.626462, "violation_time": 249.890391}
    # its last move put it on cpu 0 (mask {0}); nothing moved it after it set 1-3
    moves = stress.trace_moves(real_excerpt())
    assert (moves[-1]["time"], moves[-1]["dest_cpu"]) == (249.543415, 0)
    assert "migration_cpu_stop" in moves[-1]["stack"]
    assert not any("steal_from" in m["stack"] for m in moves)


@pytest.mark.parametrize("drop", ["(sched_cpu_deactivate)", "next_comm=migration/0"])
def test_stopper_race_needs_every_piece_of_evidence(drop):
    lines = [l for l in real_excerpt() if drop not in l]
    assert stress.stopper_race(lines) is None


def test_stopper_race_not_claimed_when_the_thread_was_moved():
    lines = real_excerpt()
    at = next(i for i, l in enumerate(lines) if "tid 10280 setaffinity 1-3" in l
              and "249.626462" in l)
    moved = ("     migration/0-17      [000] d..3.   249.626300: sched_migrate_task: "
             "comm=affinity_check pid=10280 prio=120 orig_cpu=0 dest_cpu=2")
    assert stress.stopper_race(lines[:at] + [moved] + lines[at:]) is None
