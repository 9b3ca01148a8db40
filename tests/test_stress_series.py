"""Stress suite: a kernel without the series (a %base variant), and the
known mainline warning (docs/stress.md) -- no guest."""
from __future__ import annotations

from pathlib import Path

import pytest

from idlesteal.runs import stress
from idlesteal.guest import topology, vm

from .test_args import refused, sandbox  # noqa: F401  (sandbox is a fixture)
from .test_stress import P, good_sections, schedstat_text

DATA = Path(__file__).parent / "data"
NO_SERIES = stress.Params(seconds=120, ncpus=8, series=False)


def schedstat_without_steal(ts: int = 1000) -> str:
    """schedstat_text() as a kernel without the series prints it: the
    sched/debug cpu headers, no steal fields."""
    return "\n".join(l for l in schedstat_text(0, ts=ts).splitlines()
                     if not l.lstrip().startswith(".steal")) + "\n"


def mainline_sections(**over: str) -> dict[str, str]:
    s = good_sections(
        series="series=0 overload_cpus=0 steal_feature=0\n",
        schedstat_before=schedstat_without_steal(),
        schedstat_after=schedstat_without_steal(ts=121000),
        overload_before="", overload_after="",
        features_after="GENTLE_FAIR_SLEEPERS DELAY_DEQUEUE\n")
    s["counters"] = s["counters"].replace("steal_changes=40", "steal_changes=0") \
        .replace("monitor overload_reads=110", "monitor overload_reads=0")
    s.update(over)
    return s


# ---------------------------------------------------------------- no series

def test_the_variant_decides_whether_the_kernel_has_the_series():
    assert stress.series_kernel("debug") and stress.series_kernel("steal")
    assert not stress.series_kernel("mainline-debug")
    assert not stress.series_kernel("mainline")


def test_the_guest_is_told_explicitly():
    assert "\nSERIES=1\n" in stress.script(P)
    assert "\nSERIES=0\n" in stress.script(NO_SERIES)
    assert P.checks_off() == {}
    assert set(NO_SERIES.checks_off()) == {"overload_cpus", "steal_toggles", "steal_counters"}


def test_without_the_series_the_steal_minimum_goes():
    assert "steals" not in stress.thresholds(300, series=False)
    assert "steals" in stress.thresholds(300)
    assert stress.thresholds(300, series=False)["hotplug_ops"] == \
        stress.thresholds(300)["hotplug_ops"]
    # DELAY_DEQUEUE alone changes about 4/7 as often as STEAL and DELAY_DEQUEUE
    assert stress.thresholds(300, series=False)["feature_toggles"] == 20
    assert stress.thresholds(300)["feature_toggles"] == 30
    assert stress.threshold_table(series=False)["feature_toggles"].about.startswith(
        "DELAY_DEQUEUE changes")


def test_steal_off_or_scx_need_the_series():
    preset = topology.get("2x2x2")
    with pytest.raises(Exception, match="need a kernel with the series"):
        stress.params_for(preset, 60, steal="off", series=False)
    with pytest.raises(Exception, match="need a kernel with the series"):
        stress.params_for(preset, 60, scx_loader=("scx_idlesteal",), series=False)
    assert stress.params_for(preset, 60, series=False).series is False


def test_a_mainline_run_passes_with_its_checks_off():
    v = stress.evaluate(mainline_sections(), NO_SERIES)
    assert v.passed, v.failures
    assert "steals" not in v.counts and "steals" not in v.minimums
    assert v.details["checks_off"] == stress.CHECKS_OFF_WITHOUT_SERIES
    assert v.details["series_probe"] == {"overload_cpus": False, "steal_feature": False}


@pytest.mark.parametrize("over, needle", [
    ({"schedstat_after": schedstat_text(500, ts=121000)}, "steal counters on 8 CPU(s)"),
    ({"series": "series=0 overload_cpus=1 steal_feature=0\n"}, "has overload_cpus"),
    ({"features_after": "STEAL DELAY_DEQUEUE\n"}, "not restored to DELAY_DEQUEUE"),
    ({"features_after": "NO_DELAY_DEQUEUE\n"}, "not restored to DELAY_DEQUEUE"),
])
def test_a_mainline_run_fails_on_what_only_the_series_has(over, needle):
    v = stress.evaluate(mainline_sections(**over), NO_SERIES)
    assert any(needle in f for f in v.failures), v.failures


@pytest.mark.parametrize("over, needle", [
    # the three things a series kernel must have
    ({"schedstat_after": schedstat_without_steal(ts=121000)}, "steal counters (steal_tasks"),
    ({"series": "series=1 overload_cpus=0 steal_feature=1\n"}, "lacks overload_cpus"),
    ({"series": "series=1 overload_cpus=1 steal_feature=0\n"}, "lacks steal_feature"),
    ({"overload_before": "", "overload_after": ""}, "overload_cpus is empty"),
    ({"features_after": "DELAY_DEQUEUE\n"}, "not restored to STEAL DELAY_DEQUEUE"),
])
def test_a_series_run_still_fails_without_the_series_files(over, needle):
    v = stress.evaluate(good_sections(**over), P)
    assert not v.passed
    assert any(needle in f for f in v.failures), v.failures


def test_the_guest_script_checks_the_series_both_ways():
    text = stress.script(P)
    assert 'fail "no $OVERLOAD on a kernel said to have the series"' in text
    assert "on a kernel said to be without the series" in text
    # without the series nothing writes STEAL/NO_STEAL or reads overload_cpus
    assert "[ $SERIES = 0 ] || echo STEAL > $FEAT" in text
    assert "[ $SERIES = 0 ] || overload_settled" in text


def test_summary_and_report_say_which_checks_were_off_and_why():
    v = stress.evaluate(mainline_sections(), NO_SERIES)
    s = stress.summary(topology.get("2x2x2"), NO_SERIES, v, variant="mainline-debug",
                       uname="7.2.13+", guest={})
    assert s["series"] is False and s["checks_off"] == stress.CHECKS_OFF_WITHOUT_SERIES
    text = stress.report(s)
    assert "WITHOUT the series" in text and "variant mainline-debug" in text
    for name, why in stress.CHECKS_OFF_WITHOUT_SERIES.items():
        assert f"check off: {name}: {why}" in text
    assert "on a kernel without the series, checks off: overload_cpus" in stress.tally([s])


def test_cli_refuses_steal_off_on_a_kernel_without_the_series(sandbox, capsys):  # noqa: F811
    line = refused(["stress", "--variant", "mainline-debug", "--steal", "off"], capsys)
    assert "--steal" in line and "'off'" in line and "without it" in line


# ---------------------------------------------------------------- the known warning

def console() -> str:
    """The debug kernel's console around the warning (run 7 of the ten of
    2026-11-25, results/stress/20261125-053553-2x2x2-300s.json)."""
    return (DATA / "stress-cpuset-warning-console.txt").read_text()


def with_partition(text: str, after: str, line: str) -> str:
    """`line` inserted after the first console line containing `after`."""
    out = []
    for l in text.splitlines():
        out.append(l)
        if after in l and line:
            out.append(line)
            line = ""
    return "\n".join(out) + "\n"


def test_the_warning_is_not_a_kernel_error_only_through_its_exact_line():
    errs = vm.kernel_errors(console())
    assert len(errs) == 1 and "cpuset.c:888" in errs[0]
    assert vm.kernel_errors(console(), stress.tolerated(False)) == []
    # the other WARN of rebuild_sched_domains_locked(), another line, another CPU's
    # thread or another file stay errors
    for other in ("WARNING: ../linux/kernel/cgroup/cpuset.c:1028 at "
                  "rebuild_sched_domains_locked+0x2a3/0x920, CPU#6: cpuhp/6/29",
                  "WARNING: ../linux/kernel/cgroup/cpuset.c:888 at "
                  "rebuild_sched_domains_locked+0x2a3/0x920, CPU#6: sh/412",
                  "WARNING: ../linux/kernel/cgroup/cpuset.c:888 at "
                  "rebuild_sched_domains_locked+0x2a3/0x920, CPU#6: cpuhp/5/29",
                  "WARNING: ../linux/kernel/sched/fair.c:888 at "
                  "rebuild_sched_domains_locked+0x2a3/0x920, CPU#6: cpuhp/6/29"):
        assert vm.kernel_errors(f"[ 1.0] {other}\n", stress.tolerated(False)), other
    assert stress.tolerated(True).search("[ 1.0] BUG: KCSAN: data-race in foo / bar")
    assert not stress.tolerated(False).search("[ 1.0] BUG: KCSAN: data-race in foo / bar")


def test_the_real_warning_is_recognised_by_its_call_path():
    known, failures = stress.known_warnings(console())
    assert failures == []
    assert len(known) == 1
    k = known[0]
    assert k["name"] == "cpuset-partition-hotplug-overlap" and k["cpu"] == 6
    assert k["call_path"][:4] == ["cpuset_handle_hotplug", "cpuset_update_active_cpus",
                                  "sched_cpu_activate", "cpuhp_invoke_callback"]
    assert k["sequence"] == {"markers": False}
    assert (Path(__file__).parent.parent / k["anchor"].split("#")[0]).exists()


@pytest.mark.parametrize("frame", ["sched_cpu_deactivate", "cpuset_write_resmask"])
def test_the_same_line_with_another_call_path_fails(frame):
    text = console().replace("sched_cpu_activate+0x336/0x4d0", f"{frame}+0x336/0x4d0")
    known, failures = stress.known_warnings(text)
    assert known == [] and len(failures) == 1
    assert "not its call path" in failures[0]


def test_no_call_trace_fails():
    text = "\n".join(l for l in console().splitlines() if "Call Trace" not in l)
    known, failures = stress.known_warnings(text)
    assert known == [] and failures


MARK = "[   12.173400] stress: partition 9 cpus {cpus} root: root, online 0-4,6-7"


def test_the_documented_sequence_on_the_console():
    # partition 5-6 made while CPU 5 was offline; 6 goes offline (none left),
    # 5 comes back, then 6: the warning on CPU 6 (the sequence of run 7)
    text = with_partition(console(), "root domain span: 6", MARK.format(cpus="5-6"))
    known, failures = stress.known_warnings(text)
    assert failures == [] and len(known) == 1
    seq = known[0]["sequence"]
    assert seq["markers"] and seq["matches"] and seq["partition"] == "5-6"
    assert [s.split(" ", 1)[1] for s in seq["steps"]] == [
        "partition 9 cpus 5-6 root: root, online 0-4,6-7", "CPU 6 offline", "CPU 5 online",
        "CPU 6 online"]
    assert "after (console):" in stress.report(summary_with(known))


@pytest.mark.parametrize("cpus", ["6-7", "6", "4,6"])
def test_another_sequence_before_the_same_warning_fails(cpus):
    # 6-7 and 4,6: not all of their CPUs went offline; 6: one CPU only
    text = with_partition(console(), "root domain span: 6", MARK.format(cpus=cpus))
    known, failures = stress.known_warnings(text)
    assert known == [] and len(failures) == 1
    assert "without the documented partition/hotplug sequence" in failures[0]


def test_a_removed_partition_does_not_count():
    text = with_partition(console(), "root domain span: 6", MARK.format(cpus="5-6"))
    text = with_partition(text, "Booting Node 0 Processor 5",
                          "[   15.000000] stress: partition 9 cpus 5-6 remove")
    known, failures = stress.known_warnings(text)
    assert known == [] and failures


def summary_with(known: list[dict]) -> dict:
    v = stress.evaluate(good_sections(), P)
    v.details["known_warnings"] = known
    return stress.summary(topology.get("2x2x2"), P, v, variant="debug", uname="7.2.13+",
                          guest={})


def test_a_known_warning_passes_loudly():
    known, _ = stress.known_warnings(console())
    s = summary_with(known)
    assert s["passed"] and s["known_mainline_warnings"] == known
    text = stress.report(s)
    first = text.splitlines()[0]
    assert "PASS with 1 KNOWN MAINLINE WARNING(S)" in first
    assert ("KNOWN MAINLINE WARNING (not a failure of the series; docs/stress.md#a-mainline-"
            "cpuset-warning-overlapping-partitions-after-hotplug): [   15.864999] WARNING: "
            "../linux/kernel/cgroup/cpuset.c:888") in text
    assert "call path: cpuset_handle_hotplug <- cpuset_update_active_cpus <- " \
           "sched_cpu_activate" in text
    plain = summary_with([])
    line = stress.tally([plain, s, plain])
    assert line.startswith("stress: 3 passed, 0 failed; 1 run(s) with a KNOWN MAINLINE "
                           "WARNING, not counted against the series: "
                           "cpuset-partition-hotplug-overlap (docs/stress.md#")
    assert stress.tally([plain]) == "stress: 1 passed, 0 failed"


def test_errors_before_smp_ignore_the_known_warning():
    early = "[    0.5] BUG: KASAN: wild-memory-access in do_raw_spin_lock\n" \
            "[    0.9] smp: Bringing up secondary CPUs ...\n"
    assert stress.errors_before_smp(early + console()) != []
