"""sidebyside: the plan, the guest script, collecting a real capture, the
statistics and the call; peers: cargo's version and install records."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from idlesteal.guest import image
from idlesteal.scx import peers, own as scx
from idlesteal.measure import schedstat
from idlesteal.runs import sidebyside as sbs, suite
from idlesteal import util
from idlesteal.util import HarnessError

DATA = Path(__file__).parent / "data"
# The contenders of the kept capture (sidebyside-2x2x2.txt), in its order:
# the default of when it was made.
CAPTURED = ("eevdf", "eevdf+steal", "scx_idlesteal", "scx_p2dq", "scx_bpfland", "scx_cosmos")


def spec(names=CAPTURED, reps: int = 2, text: str = "2x2x2 hackbench 2 50",
         waste: bool = False) -> sbs.Spec:
    """Untraced by default: the kept capture predates the wasted-CPU measure."""
    return sbs.Spec("2x2x2", suite.parse(text), sbs.contenders(list(names)), reps,
                    waste=waste)


def test_contenders_checks_names():
    assert [c.name for c in sbs.contenders("eevdf,scx_p2dq")] == ["eevdf", "scx_p2dq"]
    with pytest.raises(HarnessError, match="unknown scheduler"):
        sbs.contenders("eevdf,cfs")
    with pytest.raises(HarnessError, match="named twice"):
        sbs.contenders("eevdf,eevdf")
    with pytest.raises(HarnessError, match="at least two"):
        sbs.contenders("eevdf")


def test_every_peer_and_own_scheduler_is_a_contender():
    for name in [*peers.PEERS, "scx_idlesteal", "scx_simple"]:
        assert sbs.CONTENDERS[name].loader[0] == name
    assert sbs.CONTENDERS["eevdf"].features == ("NO_STEAL",)
    assert sbs.CONTENDERS["eevdf+steal"].features == ("STEAL",)


def test_spec_wants_two_reps_and_one_preset():
    with pytest.raises(HarnessError, match="2 repetitions"):
        spec(reps=1)
    with pytest.raises(HarnessError, match="entries"):
        sbs.Spec("1x1x2", suite.parse("2x2x2 hackbench 2"), sbs.contenders("eevdf,eevdf+steal"), 2)


def test_plan_rotates_the_order_and_warms_up_after_each_switch():
    s = spec(("eevdf", "eevdf+steal", "scx_idlesteal"), reps=4,
             text="2x2x2 hackbench 1,4 50\n2x2x2 wakelat 2 5")
    loads = sbs.plan(s)
    order = [ld.contender.name for ld in loads]
    assert order[:3] == ["eevdf", "eevdf+steal", "scx_idlesteal"]
    assert order[3:6] == ["eevdf+steal", "scx_idlesteal", "eevdf"]
    assert order[9:12] == order[:3]
    for ld in loads:
        assert ld.runs[0].warmup and not any(r.warmup for r in ld.runs[1:])
        assert [(r.entry, r.level) for r in ld.runs[1:]] == [(0, 1), (0, 4), (1, 2)]
    tags = [r.tag for ld in loads for r in ld.runs]
    assert len(set(tags)) == len(tags) == 12 * 4


def test_script_switches_checks_and_stops_each_loader():
    s = spec(("eevdf", "scx_idlesteal"))
    text = sbs.script(s, sbs.plan(s))
    assert text.count("scx_start /tmp/L") == 2 and text.count("scx_stop ||") == 2
    assert "set_features NO_STEAL" in text
    assert "command -v scx_idlesteal" in text and "command -v hackbench" in text
    # 2 schedulers x 2 reps x (warm-up + 1 run); each prints sched_ext's state after it
    # stat.before, output, stat.after, state; the 4 measured runs also the
    # scheduler counters before and after
    assert text.count("section r") == 8 * 4 + 4 * 2
    assert len(re.findall(r"^section r\d+\.sched\.after$", text, re.M)) == 4
    assert len(re.findall(r"^section r\d+\.state$", text, re.M)) == 8


def test_script_is_valid_ash(tmp_path):
    s = spec()
    f = tmp_path / "run.sh"
    f.write_text(image.HELPERS + sbs.script(s, sbs.plan(s)))
    proc = subprocess.run(["busybox", "ash", "-n", str(f)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def capture() -> dict[str, str]:
    out = image.parse_output((DATA / "sidebyside-2x2x2.txt").read_text())
    assert out is not None
    return out.sections


def test_collect_reads_a_real_capture():
    # build/runs/20261123-230925-sidebyside-2x2x2: the six defaults, 2 reps,
    # hackbench -g 2 -l 50 on 2x2x2
    s = spec()
    loads = sbs.plan(s)
    ms = sbs.collect(s, loads, capture())
    assert len(ms) == 6 * 2
    assert {m.contender for m in ms} == set(CAPTURED)
    assert all(0 < m.value < 10 and 0 < m.busy <= 100 for m in ms)
    steals = sbs.idlesteal_steals(loads, capture())
    assert steals == {"scx_idlesteal": [516, 481]}
    rows = sbs.summarize(s, ms)
    assert len(rows) == 1 and set(rows[0]["contenders"]) == set(CAPTURED)
    assert rows[0]["contenders"]["eevdf"]["ratio"] == 1.0
    assert "hackbench groups 2" in sbs.table(s, rows, steals)


def test_collect_fails_when_the_scheduler_was_not_in_charge():
    s = spec()
    sections = capture()
    loads = sbs.plan(s)
    victim = next(ld for ld in loads if ld.contender.name == "scx_p2dq").runs[1].tag
    sections[f"{victim}.state"] = "disabled \n"
    with pytest.raises(sbs.SideBySideError, match="ejected"):
        sbs.collect(s, loads, sections)


def test_ops_names_of_rust_and_c_schedulers():
    assert sbs.ops_matches("p2dq_1.1.4_x86_64_unknown_linux_gnu", "p2dq")
    assert sbs.ops_matches("idlesteal", "idlesteal")
    assert not sbs.ops_matches("p2dqx", "p2dq")


def fake(values: dict[str, list[float]], higher_better: bool = False) -> tuple[sbs.Spec, list]:
    wl = "wakelat" if higher_better else "hackbench"
    s = sbs.Spec("2x2x2", suite.parse(f"2x2x2 {wl} 2"), sbs.contenders(list(values)), 4)
    ms = [sbs.Measurement(f"r{i}", i, name, wl, 2, v, {}, 50.0)
          for name, vs in values.items() for i, v in enumerate(vs)]
    return s, ms


def test_call_best_only_when_separated_from_every_other():
    s, ms = fake({"eevdf": [2.0, 2.1, 1.9, 2.0], "eevdf+steal": [1.0, 1.1, 0.9, 1.0],
                  "scx_p2dq": [3.0, 3.1, 2.9, 3.0]})
    (row,) = sbs.summarize(s, ms)
    assert row["call"] == "eevdf+steal" and row["ties"] == []
    f = row["contenders"]["eevdf+steal"]
    assert f["ratio"] == pytest.approx(0.5) and f["ratio_high"] < 1 and f["p_vs_base"] < 0.05
    t = sbs.tally([row])
    assert t["eevdf+steal"] == {"best": 1, "tied_best": 0, "better": 1, "worse": 0, "cells": 1,
                                "front": 0, "front_cells": 0}     # untraced: no front
    assert row["beaten_by"] is None and "front" not in sbs.table(s, [row])
    assert t["scx_p2dq"]["worse"] == 1 and t["eevdf"]["better"] == t["eevdf"]["worse"] == 0


def test_no_call_when_the_best_cannot_be_told_apart():
    s, ms = fake({"eevdf": [1.0, 1.5, 0.7, 1.2], "eevdf+steal": [0.9, 1.4, 0.8, 1.1],
                  "scx_p2dq": [3.0, 3.1, 2.9, 3.0]})
    (row,) = sbs.summarize(s, ms)
    assert row["call"] is None and row["best"] == "eevdf+steal" and row["ties"] == ["eevdf"]
    t = sbs.tally([row])
    assert t["eevdf"]["tied_best"] == t["eevdf+steal"]["tied_best"] == 1
    assert t["scx_p2dq"]["tied_best"] == 0


def traced(ms: list, wasted: dict[str, list[float]]) -> None:
    """Give each fake run a waste record whose wasted LLC % is wasted's."""
    for m in ms:
        pct = wasted[m.contender][m.rep]
        m.waste = {"fraction": {"llc": pct / 100}, "began_fraction": {"arrival": 0.0},
                   "migrations_waiting": 0, "bounces": 0, "migrations": 0, "cpu_time": 1.0}


def test_front_of_wasted_time_and_the_metric():
    # eevdf fastest and wasteful, p2dq slower and frugal: both on the front;
    # bpfland slower and more wasteful than p2dq (both separated): off it,
    # beaten by p2dq only (eevdf wastes more than bpfland); cosmos as fast as
    # eevdf and as frugal as p2dq but too noisy to be told apart: on it
    s, ms = fake({"eevdf": [1.0, 1.1, 0.9, 1.0], "scx_p2dq": [2.0, 2.1, 1.9, 2.0],
                  "scx_bpfland": [3.0, 3.1, 2.9, 3.0], "scx_cosmos": [0.2, 3.0, 0.5, 2.5]})
    traced(ms, {"eevdf": [9.0, 9.5, 8.5, 9.0], "scx_p2dq": [1.0, 1.1, 0.9, 1.0],
                "scx_bpfland": [5.0, 5.2, 4.8, 5.0], "scx_cosmos": [0.1, 9.0, 0.2, 8.0]})
    (row,) = sbs.summarize(s, ms)
    assert row["beaten_by"] == {"eevdf": [], "scx_p2dq": [], "scx_bpfland": ["scx_p2dq"],
                                "scx_cosmos": []}
    t = sbs.tally([row])
    assert (t["scx_bpfland"]["front"], t["scx_bpfland"]["front_cells"]) == (0, 1)
    assert t["eevdf"]["front"] == t["scx_p2dq"]["front"] == t["scx_cosmos"]["front"] == 1
    text = sbs.table(s, [row])
    assert ("front (wasted x metric): eevdf, scx_p2dq, scx_cosmos\n"
            "  off the front: scx_bpfland (by scx_p2dq)\n") in text
    lines = text.splitlines()
    head = next(i for i, x in enumerate(lines) if x.startswith("scheduler "))
    assert lines[head].endswith("on the front")
    assert lines[head + 3].startswith("scx_bpfland") and lines[head + 3].endswith("  0/1")


def test_front_where_higher_is_better():
    # rps: scx_idlesteal serves more and wastes less than eevdf, both separated
    s, ms = fake({"eevdf": [100, 101, 99, 100], "scx_idlesteal": [150, 151, 149, 150]},
                 higher_better=True)
    traced(ms, {"eevdf": [5.0, 5.1, 4.9, 5.0], "scx_idlesteal": [1.0, 1.1, 0.9, 1.0]})
    (row,) = sbs.summarize(s, ms)
    assert row["beaten_by"] == {"eevdf": ["scx_idlesteal"], "scx_idlesteal": []}
    # the same rps with the waste reversed: neither beats the other
    traced(ms, {"scx_idlesteal": [5.0, 5.1, 4.9, 5.0], "eevdf": [1.0, 1.1, 0.9, 1.0]})
    (row,) = sbs.summarize(s, ms)
    assert row["beaten_by"] == {"eevdf": [], "scx_idlesteal": []}


def test_higher_is_better_picks_the_largest():
    s, ms = fake({"eevdf": [100, 101, 99, 100], "scx_idlesteal": [150, 151, 149, 150]},
                 higher_better=True)
    (row,) = sbs.summarize(s, ms)
    assert row["call"] == "scx_idlesteal"
    assert sbs.tally([row])["scx_idlesteal"]["better"] == 1


def test_other_metrics_are_medians_under_the_cell():
    s, ms = fake({"eevdf": [100, 101, 99, 100], "scx_idlesteal": [150, 151, 149, 150]},
                 higher_better=True)
    for m in ms:
        m.metrics = {"rps": m.value, "p99_us": 10.0 * m.rep + (5 if m.contender == "eevdf" else 0)}
    ms[0].metrics["max_us"] = 7.0           # one repetition only: left out
    (row,) = sbs.summarize(s, ms)
    assert row["contenders"]["eevdf"]["other"] == {"p99_us": 20.0}
    assert row["contenders"]["scx_idlesteal"]["other"] == {"p99_us": 15.0}
    text = sbs.table(s, [row])
    lines = text.splitlines()
    i = next(i for i, ln in enumerate(lines) if "other metrics, medians" in ln)
    assert lines[i].split()[-1] == "p99_us" and "max_us" not in text
    assert lines[i + 1].split() == ["eevdf", "20"]
    assert lines[i + 2].split() == ["scx_idlesteal", "15"]


def test_a_workload_with_one_metric_has_no_other_block():
    s, ms = fake({"eevdf": [2.0, 2.1, 1.9, 2.0], "scx_p2dq": [3.0, 3.1, 2.9, 3.0]})
    for m in ms:
        m.metrics = {"time": m.value}
    (row,) = sbs.summarize(s, ms)
    assert "other" not in row["contenders"]["eevdf"]
    assert "other metrics" not in sbs.table(s, [row])


def test_too_few_measurements_is_an_error():
    s, ms = fake({"eevdf": [1.0, 1.1, 1.2, 1.0], "scx_p2dq": [1.0]})
    with pytest.raises(sbs.SideBySideError, match="fewer than 2"):
        sbs.summarize(s, ms)


def test_rust_version():
    assert peers.parse_rust_version("cargo 1.95.0 (f2d3ce0bd 2026-03-21)") == (1, 95)
    with pytest.raises(HarnessError):
        peers.parse_rust_version("cargo nightly")


def test_installed_versions_from_crates2():
    text = ('{"installs": {"scx_p2dq 1.1.4 (registry+https://github.com/rust-lang/'
            'crates.io-index)": {"bins": ["scx_p2dq"]}}}')
    assert peers.installed(text) == {"scx_p2dq": "1.1.4"}
    with pytest.raises(HarnessError):
        peers.installed("[]")


def test_peers_have_ops_names_and_pins():
    assert set(peers.OPS_NAMES) == set(peers.PEERS)
    assert all(v.count(".") == 2 for v in peers.PEERS.values())
    with pytest.raises(HarnessError, match="unknown peer"):
        peers.check_names(("scx_rusty",))


def test_estimate_from_the_last_result_else_a_guess(tmp_path):
    import json
    s = spec(("eevdf", "scx_idlesteal"))          # 8 runs, 4 loads
    assert sbs.estimate_seconds(s, tmp_path) == 8 * 3.0 + 4 * 6.0
    (tmp_path / "2x2x2.json").write_text(json.dumps(
        {"meta": {"guest": {"total_seconds": 100.0, "runs": 50}}}))
    assert sbs.estimate_seconds(s, tmp_path) == pytest.approx(16.0)


# ---------------------------------------------------------------- the picture

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_plot_draws_every_cell_relative_to_the_baseline(tmp_path):
    s = sbs.Spec("2x2x2", suite.parse("2x2x2 hackbench 1,2 50\n2x2x2 wakelat 2 1"),
                 sbs.contenders("eevdf,eevdf+steal,scx_idlesteal"), 4)
    vals = {"eevdf": 2.0, "eevdf+steal": 1.9, "scx_idlesteal": 1.5}
    ms = [sbs.Measurement(f"r{i}", i, name, e.workload, lv, v * (1 + 0.05 * i), {}, 50.0)
          for e in s.entries for lv in e.levels for name, v in vals.items() for i in range(4)]
    rows = sbs.summarize(s, ms)
    assert len(rows) == 3
    png = tmp_path / "2x2x2.png"
    assert sbs.plot(s, rows, png)
    assert png.read_bytes().startswith(PNG_MAGIC) and png.stat().st_size > 10_000


def test_run_writes_the_png_next_to_the_table(tmp_path, monkeypatch):
    """sidebyside.run() on the real capture with the boot faked: txt, json
    and png of the preset side by side (what make bench-scx writes)."""
    from idlesteal.kernel import build
    from idlesteal.guest import vm
    s = spec()
    out = image.parse_output((DATA / "sidebyside-2x2x2.txt").read_text())
    console = tmp_path / "console.log"
    console.write_text("")
    from idlesteal.runs.sidebyside import runner
    monkeypatch.setattr(runner, "binaries", lambda cs: {})     # where run() looks it up
    monkeypatch.setattr(image, "build_base", lambda **kw: tmp_path / "initrd")
    monkeypatch.setattr(build, "read_meta", lambda variant: {"variant": variant})
    monkeypatch.setattr(vm, "run_script", lambda *a, **kw: vm.RunResult(
        tmp_path, console, out, 4.0, 100.0))
    res = sbs.run(s, tmp_path / "bzImage", "scx", tmp_path / "scx")
    assert res["png"] == tmp_path / "scx" / "2x2x2.png" and res["txt"].exists()
    assert res["png"].read_bytes().startswith(PNG_MAGIC)


def test_without_matplotlib_the_png_is_said_to_be_skipped(tmp_path, monkeypatch, capsys):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *a, **kw):
        if name.startswith("matplotlib"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *a, **kw)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    monkeypatch.setattr(util, "_said", set())
    s, ms = fake({"eevdf": [2.0, 2.1, 1.9, 2.0], "eevdf+steal": [1.0, 1.1, 0.9, 1.0]})
    rows = sbs.summarize(s, ms)
    assert not sbs.plot(s, rows, tmp_path / "a.png")
    assert not sbs.plot(s, rows, tmp_path / "b.png")
    assert util.pyplot() is None
    err = capsys.readouterr().err
    assert err.count("no PNG plots") == 1                 # said once
    assert "python3-matplotlib" in err and "/usr/bin/python3 -m idlesteal" in err
    assert not list(tmp_path.iterdir())


def test_traced_script_brackets_only_measured_runs():
    s = spec(("eevdf", "scx_idlesteal"), waste=True)
    loads = sbs.plan(s)
    text = sbs.script(s, loads)
    measured = [r for ld in loads for r in ld.runs if not r.warmup]
    assert text.count("trace_on\n") == text.count("trace_off\n") == len(measured) == 4
    assert [f"trace_dump {r.tag}" in text for ld in loads for r in ld.runs] == \
        [not r.warmup for ld in loads for r in ld.runs]
    assert text.count("trace_setup ") == 1
    assert "trace_on" not in sbs.script(spec(("eevdf", "scx_idlesteal")), loads)


def test_collect_and_table_with_the_wasted_time_column():
    from tests.test_tracerun import sections_for, waiting_trace
    s = spec(waste=True)          # the capture's six schedulers
    loads = sbs.plan(s)
    sections = capture()
    for ld in loads:     # eevdf: a task waits 400 us, the others 100 us (75% removed)
        for r in ld.runs:
            sections.update(sections_for(r.tag, waiting_trace(
                400 if ld.contender.name == "eevdf" else 100)))
    ms = sbs.collect(s, loads, sections)
    assert all(m.waste is not None for m in ms)
    rows = sbs.summarize(s, ms)
    f = rows[0]["contenders"]
    assert f["eevdf"]["wasted_llc_pct"]["mean"] == pytest.approx(100 * 3 * 400 / 16000)
    assert f["scx_idlesteal"]["wasted_removed_pct"]["value"] == pytest.approx(75.0)
    text = sbs.table(s, rows)
    assert "wasted LLC %" in text and "75.0 [" in text
    del sections[f"{loads[0].runs[1].tag}.trace"]
    with pytest.raises(sbs.SideBySideError, match="lacks the trace sections"):
        sbs.collect(s, loads, sections)


# ---------------------------------------------------------------- contenders of your own

FOUR = ["eevdf-base=NO_STEAL,NO_NI_STEAL", "eevdf-noni_random=NO_STEAL,NO_NI_STEAL,NO_NI_RANDOM",
        "eevdf+ni_steal=NO_STEAL,NI_STEAL", "eevdf+steal-only=STEAL,NO_NI_STEAL"]


def four_way(waste: bool = False) -> sbs.Spec:
    defined = [sbs.parse_contender(t) for t in FOUR]
    return sbs.Spec("2x2x2", suite.parse("2x2x2 hackbench 2 50"),
                    sbs.contenders([c.name for c in defined], defined), 2, waste=waste)


def test_parse_contender_and_contenders_with_definitions():
    c = sbs.parse_contender("eevdf+ni_steal=NO_STEAL,NI_STEAL")
    assert c == sbs.Contender("eevdf+ni_steal", ("NO_STEAL", "NI_STEAL")) and not c.loader
    for bad in ["eevdf=STEAL", "x", "x=", "X=STEAL", "x=steal", "x=STEAL,NO_STEAL", "x=NO_",
                "x=STEAL, NI_STEAL", "x/y=STEAL", ".x=STEAL"]:
        with pytest.raises(Exception, match="invalid value"):
            sbs.parse_contender(bad)
    cs = sbs.contenders("eevdf,mine", [sbs.parse_contender("mine=NI_STEAL")])
    assert [x.name for x in cs] == ["eevdf", "mine"] and cs[1].features == ("NI_STEAL",)
    with pytest.raises(HarnessError, match="unknown scheduler"):
        sbs.contenders("eevdf,mine")
    with pytest.raises(HarnessError, match="defined twice"):
        sbs.contenders("eevdf,mine", [sbs.parse_contender("mine=STEAL")] * 2)
    assert sbs.needs_sched_ext(cs) == [] and sbs.needs_sched_ext(
        sbs.contenders("eevdf,scx_p2dq")) == ["scx_p2dq"]


def test_four_way_script_checks_every_feature_and_resets_the_others():
    s = four_way()
    text = sbs.script(s, sbs.plan(s))
    # no sched_ext needed: its absence is no failure, and each run's state may read "absent"
    assert "no sched_ext in this kernel" not in text and "echo absent" in text
    assert "sbs_need eevdf-base NI_STEAL STEAL\n" in text
    assert "sbs_need eevdf-noni_random NI_RANDOM NI_STEAL STEAL\n" in text
    # every switch puts back what another contender changed and it does not set
    assert "set_features $(sbs_boot NI_RANDOM) NO_STEAL NI_STEAL\n" in text
    assert "set_features NO_STEAL NO_NI_STEAL NO_NI_RANDOM\n" in text
    assert "set_features $(sbs_boot NI_RANDOM) STEAL NO_NI_STEAL\n" in text
    assert text.index("sbs_need") < text.index("section L000.start")
    # the built-in ones keep their words; with the four-way's features beside them
    # they get NI_STEAL / NI_RANDOM back to their boot values
    assert sbs.switch_features(sbs.CONTENDERS["eevdf"], s.contenders) == \
        ["$(sbs_boot NI_RANDOM NI_STEAL)", "NO_STEAL"]
    assert sbs.switch_features(sbs.CONTENDERS["eevdf"], sbs.contenders("eevdf,eevdf+steal")) \
        == ["NO_STEAL"]
    # a plan with a sched_ext scheduler still requires sched_ext at boot
    t = sbs.script(spec(("eevdf", "scx_idlesteal")), sbs.plan(spec(("eevdf", "scx_idlesteal"))))
    assert "fail 'no sched_ext in this kernel'" in t


def test_four_way_script_is_valid_ash(tmp_path):
    s = four_way(waste=True)
    f = tmp_path / "run.sh"
    f.write_text(image.HELPERS + sbs.script(s, sbs.plan(s)))
    proc = subprocess.run(["busybox", "ash", "-n", str(f)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def ash(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["busybox", "ash", "-c", image.HELPERS + script],
                          capture_output=True, text=True)


def test_a_missing_feature_fails_the_boot_naming_it(tmp_path):
    """sbs_need and sbs_boot run by busybox ash against a features file
    without NI_STEAL (a kernel before the new features)."""
    feats = tmp_path / "features"
    feats.write_text("PLACE_LAG NO_NEXT_BUDDY STEAL NI_RANDOM\n")
    funcs = sbs._FEATURE_FUNCS.replace(sbs.BOOT_FEATURES, str(feats))
    ok = ash(funcs + "\nsbs_need eevdf NEXT_BUDDY STEAL && echo fine")
    assert ok.returncode == 0 and ok.stdout.strip() == "fine"
    bad = ash(funcs + "\nsbs_need eevdf+ni_steal NI_STEAL STEAL\necho not reached")
    assert bad.returncode != 0 and "not reached" not in bad.stdout
    assert "FAIL: sched feature NI_STEAL is not in this kernel" in bad.stdout
    assert "scheduler eevdf+ni_steal needs it" in bad.stdout
    words = ash(funcs + "\necho $(sbs_boot NI_RANDOM NEXT_BUDDY STEAL)")
    assert words.stdout.strip() == "NI_RANDOM NO_NEXT_BUDDY STEAL"


def test_a_refused_feature_write_is_detected():
    """helpers.sh's set_features writes each word with the ash builtin echo,
    `|| fail`: a write the kernel refuses (EINVAL for an unknown feature;
    here /dev/full's ENOSPC) makes echo fail, so the boot fails naming the
    word; a write that is taken but does not show is caught by the check
    after it."""
    helpers = image.HELPERS.replace("/sys/kernel/debug/sched/features", "/dev/full")
    proc = subprocess.run(["busybox", "ash", "-c", helpers + "\nset_features NI_STEAL\n"
                           "echo not reached"], capture_output=True, text=True)
    assert proc.returncode != 0 and "not reached" not in proc.stdout
    assert "FAIL: cannot set sched feature NI_STEAL" in proc.stdout


def test_state_absent_is_fine_for_eevdf_only():
    s = four_way()
    ld = sbs.plan(s)[0]
    sbs.check_state(ld.runs[0], ld.contender, "absent\n")
    sbs.check_state(ld.runs[0], ld.contender, "disabled \n")
    with pytest.raises(sbs.SideBySideError, match="ejected"):
        sbs.check_state(ld.runs[0], sbs.CONTENDERS["scx_simple"], "absent\n")


def test_the_table_has_migrations_and_bounces_per_scheduler():
    from tests.test_tracerun import bouncing_trace, sections_for
    s = four_way(waste=True)
    loads = sbs.plan(s)
    sections: dict[str, str] = {}
    for ld in loads:     # eevdf-base: one bounce in 3 waiting moves; the others: 1 move
        for r in ld.runs:
            sections.update({f"{r.tag}.output": "Time: 1.5\n", f"{r.tag}.state": "absent\n",
                             f"{r.tag}.stat.before": STAT, f"{r.tag}.stat.after": STAT2})
            if not r.warmup:
                sections.update(sections_for(r.tag, bouncing_trace(
                    1 if ld.contender.name == "eevdf-base" else 0)))
    ms = sbs.collect(s, loads, sections)
    rows = sbs.summarize(s, ms)
    f = rows[0]["contenders"]
    assert f["eevdf-base"]["migrations_waiting_per_cpu_s"]["mean"] == pytest.approx(3 / 0.016)
    assert f["eevdf-base"]["bounces_per_cpu_s"]["mean"] == pytest.approx(1 / 0.016)
    assert f["eevdf+ni_steal"]["bounces_per_cpu_s"] == {"mean": 0.0, "ci95": 0.0}
    text = sbs.table(s, rows)
    assert "wait-mig/CPU-s" in text and "bounce/CPU-s" in text
    line = next(x for x in text.splitlines() if x.strip().startswith("eevdf-base"))
    assert line.split()[-2:] == [f"{3 / 0.016:.1f}", f"{1 / 0.016:.2f}"]


STAT = "cpu  100 0 100 800 0 0 0 0 0 0\n"
STAT2 = "cpu  200 0 200 1600 0 0 0 0 0 0\n"


# ---------------------------------------------------------------- the kernel's counters per run

DATA = Path(__file__).parent / "data"


def test_run_counters_and_the_kick_columns():
    before = (DATA / "schedsnap-2x2x2-before.txt").read_text()
    after = (DATA / "schedsnap-2x2x2-after.txt").read_text()
    # cpu#1 sent 5 kicks; cpu#0 ran 4 of them, 3 of which pulled a task
    after = after.replace("  .steal_search_ns               : 531818\n",
                          "  .steal_search_ns               : 531818\n"
                          "  .steal_kicks_sent              : 0\n"
                          "  .steal_kicks                   : 4\n"
                          "  .steal_kick_tasks              : 3\n", 1)
    after = after.replace("  .steal_search_ns               : 4374899\n",
                          "  .steal_search_ns               : 4374899\n"
                          "  .steal_kicks_sent              : 5\n", 1)
    secs = {"r1.sched.before": before, "r1.sched.after": after}
    c = sbs.run_counters(secs, "r1")
    assert c is not None
    assert (c["steal_kicks_sent"], c["steal_kicks"], c["steal_kick_tasks"]) == (5, 4, 3)
    d = schedstat.delta(schedstat.parse(before), schedstat.parse(after))
    assert c["steal_tasks"] == d.totals["steal_tasks"] > 0
    assert sbs.run_counters({"r1.sched.before": before}, "r1") is None
    with pytest.raises(sbs.SideBySideError, match="r1: scheduler counters"):
        sbs.run_counters({"r1.sched.before": "garbage", "r1.sched.after": after}, "r1")
    # the table shows the columns where a contender has counters
    s = spec(("eevdf", "scx_idlesteal"))
    ms = [sbs.Measurement(f"r{i}", i, name, e.workload, lv, 1.0 + 0.01 * i, {}, 50.0,
                          counters=dict(c))
          for name in ("eevdf", "scx_idlesteal") for e in s.entries for lv in e.levels
          for i in range(3)]
    text = sbs.table(s, sbs.summarize(s, ms))
    assert "kicks" in text and "pulled" in text and "STEAL_KICK IPIs sent" in text


# ---------------------------------------------------------------- a scheduler ejected

STALL = ('[  411.219090] sched_ext: BPF scheduler "p2dq_1.1.4_x86_64_unknown_linux_gnu" '
         'disabled (runnable task stall)\n')


def test_an_ejected_scheduler_is_left_out_and_the_others_kept(tmp_path):
    """The 2x4x2 boots of 2026-11-26 lost every scheduler's results to one
    peer's stall; now that peer alone is left out, and said to be."""
    s = spec()
    loads = sbs.plan(s)
    sections = capture()
    victim = [ld for ld in loads if ld.contender.name == "scx_p2dq"][1]
    sections[f"{victim.runs[-1].tag}.state"] = "disabled \n"   # its measured run
    res = sbs.finish(s, loads, sections, {"preset": "2x2x2"}, tmp_path, console=STALL)
    why = res["dropped"]["scx_p2dq"]
    assert set(res["dropped"]) == {"scx_p2dq"}
    assert why.startswith("the kernel ejected it (runnable task stall): ")
    assert f"load {victim.index}, repetition 1" in why
    data = json.loads(res["json"].read_text())
    kept = [c for c in CAPTURED if c != "scx_p2dq"]
    assert [c["name"] for c in data["spec"]["contenders"]] == kept
    assert set(data["rows"][0]["contenders"]) == set(kept)
    assert {m["contender"] for m in data["measurements"]} == set(kept)
    assert data["meta"]["dropped"] == res["dropped"]
    assert "5 schedulers" in res["table"]
    assert "scx_p2dq: left out of this boot's results: the kernel ejected it" in res["table"]


def test_an_ejection_the_state_did_not_see_still_leaves_it_out(tmp_path):
    # a loader that restarts itself is in charge again by the next state read
    s = spec()
    res = sbs.finish(s, sbs.plan(s), capture(), {}, tmp_path, console=STALL)
    assert res["dropped"] == {"scx_p2dq": "the kernel ejected it (runnable task stall)"}
    # nothing ejected: nothing left out, the plan as it was
    res = sbs.finish(s, sbs.plan(s), capture(), {}, tmp_path / "b", console="")
    assert res["dropped"] == {} and "left out" not in res["table"]


def shared_ops() -> tuple[sbs.Spec, list[sbs.Load], dict[str, str]]:
    """eevdf and two scx_idlesteal variants (both register as "idlesteal"),
    each run's state as a good run leaves it."""
    s = spec(("eevdf", "scx_idlesteal", "scx_idlesteal-nokick"))
    loads = sbs.plan(s)
    sections = {f"{r.tag}.state": ("enabled idlesteal\n" if ld.contender.loader
                                   else "disabled \n")
                for ld in loads for r in ld.runs}
    return s, loads, sections


def test_a_shared_ops_name_is_put_on_the_load_that_saw_it():
    s, loads, sections = shared_ops()
    stall = STALL.replace("p2dq_1.1.4_x86_64_unknown_linux_gnu", "idlesteal")
    # no run saw it: both variants register as "idlesteal", both are left out
    assert set(sbs.ejected(s, loads, sections, stall)) == {"scx_idlesteal",
                                                          "scx_idlesteal-nokick"}
    nokick = next(ld for ld in loads if ld.contender.name == "scx_idlesteal-nokick")
    sections[f"{nokick.runs[-1].tag}.state"] = "disabled \n"
    got = sbs.ejected(s, loads, sections, stall)
    assert list(got) == ["scx_idlesteal-nokick"]
    assert "reads 'disabled' after the run" in got["scx_idlesteal-nokick"]
    # the state alone, no console (host mode)
    assert list(sbs.ejected(s, loads, sections)) == ["scx_idlesteal-nokick"]


def test_an_ejection_naming_no_scheduler_of_the_plan_raises():
    s, loads, sections = shared_ops()
    with pytest.raises(sbs.SideBySideError, match="none of the schedulers registers as "
                                                  "'p2dq_1.1.4"):
        sbs.ejected(s, loads, sections, STALL)
    # an EEVDF run with a BPF scheduler in charge is not an ejection: nothing
    # is left out, and collect()'s check_state() fails the boot
    eevdf = next(ld for ld in loads if ld.contender.name == "eevdf")
    sections[f"{eevdf.runs[1].tag}.state"] = "enabled idlesteal\n"
    assert sbs.ejected(s, loads, sections) == {}
    with pytest.raises(sbs.SideBySideError, match="want 'disabled'"):
        sbs.check_state(eevdf.runs[1], eevdf.contender, "enabled idlesteal\n")


def test_the_baseline_and_one_other_must_stay():
    s, loads, _ = shared_ops()
    assert sbs.without(s, loads, []) == (s, loads)
    s2, l2 = sbs.without(s, loads, ["scx_idlesteal"])
    assert [c.name for c in s2.contenders] == ["eevdf", "scx_idlesteal-nokick"]
    assert {ld.contender.name for ld in l2} == {"eevdf", "scx_idlesteal-nokick"}
    with pytest.raises(sbs.SideBySideError, match="only eevdf is left"):
        sbs.without(s, loads, ["scx_idlesteal", "scx_idlesteal-nokick"])
    with pytest.raises(sbs.SideBySideError, match="baseline eevdf"):
        sbs.without(s, loads, ["eevdf"])


def test_spec_reads_back_from_its_json():
    s = spec(waste=True, text="2x2x2 hackbench 2,4 50\n2x2x2 sysbench-mutex 4 1000")
    back = sbs.Spec.from_json(json.loads(json.dumps(s.to_json())))
    assert back.to_json() == s.to_json()
    assert [ld.runs for ld in sbs.plan(back)] == [ld.runs for ld in sbs.plan(s)]
    d = s.to_json()
    d["entries"][0]["command"] = ["hackbench", "-g", "3"]
    with pytest.raises(sbs.SideBySideError, match="the run's command was hackbench -g 3"):
        sbs.Spec.from_json(d)
    del d["contenders"]
    with pytest.raises(sbs.SideBySideError, match="does not read back .KeyError"):
        sbs.Spec.from_json(d)


# ---------------------------------------------------------------- another build of scx_idlesteal

def test_idlesteal_build_is_a_sched_ext_contender_with_its_own_binary(tmp_path):
    """--idlesteal-build NAME=PATH: the file goes into the guest as
    /usr/bin/NAME, is started as NAME, is checked in charge as "idlesteal",
    its steals are counted, and the result says which file it was."""
    exe = tmp_path / "scx_idlesteal.vaff2"
    exe.write_bytes(b"#!/bin/sh\n")
    exe.chmod(0o755)
    c = sbs.parse_idlesteal_build(f"scx_idlesteal.v2={exe}")
    assert (c.name, c.loader, c.ops, c.build) == ("scx_idlesteal.v2", ("scx_idlesteal.v2",),
                                                  "idlesteal", str(exe))
    cs = sbs.contenders("eevdf,scx_idlesteal,scx_idlesteal.v2", [c])
    assert sbs.binaries(cs[2:]) == {"scx_idlesteal.v2": exe}
    assert f"{exe}:/usr/bin/scx_idlesteal.v2" in \
        scx.image_files(sbs.binaries(cs[2:]))
    s = sbs.Spec("2x2x2", suite.parse("2x2x2 hackbench 2 50"), cs, 2, waste=False)
    loads = sbs.plan(s)
    text = sbs.script(s, loads)
    assert "command -v scx_idlesteal.v2 >/dev/null ||" in text
    mine = [ld for ld in loads if ld.contender.name == "scx_idlesteal.v2"]
    assert f"scx_start /tmp/L{mine[0].index:03d}.log scx_idlesteal.v2 ||" in text
    # in charge under the name every build of scx_idlesteal registers
    sbs.check_state(mine[0].runs[0], c, "enabled idlesteal")
    with pytest.raises(sbs.SideBySideError):
        sbs.check_state(mine[0].runs[0], c, "enabled simple")
    final = "final steals=7 kicks=1 steal=on\n"
    sections = {f"L{ld.index:03d}.stop": final for ld in loads}
    steals = sbs.idlesteal_steals(loads, sections)
    assert steals == {"scx_idlesteal": [7, 7], "scx_idlesteal.v2": [7, 7]}
    # the spec reads back with the file; the result records the file's digest
    back = sbs.Spec.from_json(json.loads(json.dumps(s.to_json())))
    assert back.contenders[2] == c
    assert sbs.builds(cs) == {"scx_idlesteal.v2": {"path": str(exe),
                                                   "sha256": util.sha256_file(exe)}}
    exe.unlink()
    with pytest.raises(HarnessError, match="given by --idlesteal-build"):
        sbs.binaries(cs)


def test_an_older_run_sets_timelines_are_removed(tmp_path):
    """A scheduler left out of this run set (ejected, or not in --sched)
    keeps no picture of an older one beside the new table."""
    stale = [tmp_path / "2x2x2-timeline-scx_cosmos.png", tmp_path / "2x2x2-timeline-eevdf.png"]
    other = tmp_path / "1x1x2-timeline-scx_cosmos.png"
    for p in [*stale, other]:
        p.write_bytes(b"old")
    assert sbs.timelines(spec(names=["eevdf", "scx_idlesteal"]), [], {}, tmp_path) == []
    assert not any(p.exists() for p in stale) and other.exists()
