import json
from pathlib import Path

import pytest

from idlesteal.runs import bench
from idlesteal.report import ab as report
from idlesteal import util

DATA = Path(__file__).parent / "data"


def spec(**kw) -> bench.BenchSpec:
    """Untraced unless waste= says otherwise (tests/test_tracerun.py traces)."""
    base = dict(a=bench.Side("A", ("NO_NI_RANDOM",)), b=bench.Side("B", ("NI_RANDOM",)),
                levels=[1, 2], size=10, reps=2, waste="off")
    base.update(kw)
    return bench.BenchSpec(**base)


def test_plan_interleaves_and_alternates():
    runs = bench.plan(spec())
    assert runs[0].warmup
    order = [(r.rep, r.level, r.side) for r in runs if not r.warmup]
    assert order == [(0, 1, "A"), (0, 1, "B"), (0, 2, "A"), (0, 2, "B"),
                     (1, 1, "B"), (1, 1, "A"), (1, 2, "B"), (1, 2, "A")]
    fixed = bench.plan(spec(alternate=False, warmup=0))
    assert [r.side for r in fixed] == ["A", "B"] * 4


def test_script_sets_features_and_snapshots():
    s = spec(extra_args=["-f", "5"])
    runs = bench.plan(s)
    text = bench.script(s, runs)
    assert text.count("set_features NO_NI_RANDOM") == 4 + 1   # + warm-up (side A)
    assert text.count("set_features NI_RANDOM") == 4
    assert "hackbench -g 2 -l 10 -f 5 2>&1 || fail" in text
    for r in runs:
        for part in ("schedstat.before", "stat.before", "output", "stat.after", "schedstat.after",
                     "newidle_cost"):
            assert f"section {r.tag}.{part}\n" in text
    assert "section topology" in text


def fake_sections(s: bench.BenchSpec, runs, times) -> dict:
    sb = (DATA / "schedstat-2x2x2-before.txt").read_text()
    sa = (DATA / "schedstat-2x2x2-after.txt").read_text()
    pb = (DATA / "stat-2x2x2-before.txt").read_text()
    pa = (DATA / "stat-2x2x2-after.txt").read_text()
    hb = (DATA / "hackbench-g1-l2000.txt").read_text()
    out = {}
    for r in runs:
        feats = "PLACE_LAG " + " ".join(s.side(r.side).features) + " WA_IDLE\n"
        out[f"{r.tag}.features"] = feats
        out[f"{r.tag}.schedstat.before"] = sb
        out[f"{r.tag}.schedstat.after"] = sa
        out[f"{r.tag}.stat.before"] = pb
        out[f"{r.tag}.stat.after"] = pa
        out[f"{r.tag}.output"] = hb.replace("Time: 131.669", f"Time: {times(r)}")
        out[f"{r.tag}.newidle_cost"] = (
            "/sys/kernel/debug/sched/domains/cpu0/domain0/max_newidle_lb_cost 3000\n"
            "/sys/kernel/debug/sched/domains/cpu0/domain1/max_newidle_lb_cost 5000\n"
            "/sys/kernel/debug/sched/domains/cpu1/domain0/max_newidle_lb_cost 2000\n")
    return out


def test_collect_and_report(tmp_path: Path):
    s = spec()
    runs = bench.plan(s)
    secs = fake_sections(s, runs, lambda r: (2.0 if r.side == "A" else 1.6) + 0.01 * r.rep)
    ms = bench.collect(s, runs, secs)
    assert len(ms) == 8
    m = ms[0]
    assert m.value == pytest.approx(2.0) and m.side == "A" and m.metrics == {"time": m.value}
    assert 0 < m.busy <= 100 and m.sched > 0 and m.wake > 0 and m.steal == 0
    assert m.newidle_cost_ns == pytest.approx((8000 + 2000) / 2) and m.cpu_ns > 0
    rows = report.summarize(s, ms)
    assert [r["level"] for r in rows] == [1, 2]
    assert rows[0]["speedup_pct"]["value"] == pytest.approx((2.005 / 1.605 - 1) * 100)
    text = report.table(s, rows)
    assert "grps" in text and "%speedup" in text and "A: NO_NI_RANDOM" in text
    meta = report.metadata(s, "2x2x2", {"source": {"version": "7.2.13-1"}}, "7.2.22", {})
    out = report.write("t", tmp_path, s, ms, meta)
    data = json.loads(out["json"].read_text())
    assert data["meta"]["debian_version"] == "7.2.13-1"
    assert len(data["runs"]) == 8
    assert out["txt"].read_text().startswith("# t: preset 2x2x2")


def test_missing_feature_is_an_error():
    s = spec()
    runs = bench.plan(s)
    secs = fake_sections(s, runs, lambda r: 1.0)
    secs[runs[1].tag + ".features"] = "PLACE_LAG\n"
    with pytest.raises(bench.BenchParseError, match="not active"):
        bench.collect(s, runs, secs)


def test_missing_time_is_an_error():
    s = spec()
    runs = bench.plan(s)
    secs = fake_sections(s, runs, lambda r: 1.0)
    secs[runs[1].tag + ".output"] = "Segmentation fault\n"
    with pytest.raises(bench.BenchParseError, match="no 'Time:'"):
        bench.collect(s, runs, secs)


def test_throughput_speedup_is_b_over_a():
    s = spec(workload="wakelat")
    runs = bench.plan(s)
    secs = fake_sections(s, runs, lambda r: 1.0)
    for r in runs:
        rps = 100.0 if r.side == "A" else 125.0 + r.rep
        secs[f"{r.tag}.output"] = (
            'RESULT {"messengers": 1, "workers": 4, "work_us": 100, "seconds": 5.0, '
            f'"requests": 500, "rps": {rps}, "lat_p50_us": 80, "lat_p99_us": 900, '
            '"lat_p999_us": 2000, "lat_max_us": 3000, "samples": 500, "stalled": false}\n')
    ms = bench.collect(s, runs, secs)
    assert ms[0].value == 100.0 and ms[0].metrics["p99_us"] == 900
    rows = report.summarize(s, ms)
    assert rows[0]["speedup_pct"]["value"] == pytest.approx(25.5)
    text = report.table(s, rows)
    assert "rps (req/s)" in text and "p99_us" in text and "higher is better" in text


def test_cost_columns_from_steal_counters():
    ms = [bench.Measurement(i, i, 1, "B", ["STEAL"], 1.0, {"time": 1.0}, 50.0, 1, 1, 1,
                            steal=2.0, steal_fail=6.0, steal_ns=8000.0, newidle_lb=1,
                            newidle_gained=0, newidle_cost_ns=4000.0, cpu_ns=1e9)
          for i in range(2)]
    c = report._cost(ms)
    assert c["attempts_per_cpu"] == 8.0
    assert c["ns_per_attempt"] == 1000.0 and c["ns_per_steal"] == 4000.0
    assert c["newidle_cost_ns"] == 4000.0
    assert c["search_share_pct"] == pytest.approx(100 * 16000 / 2e9)
    none = report._cost([bench.Measurement(0, 0, 1, "A", [], 1.0, {}, 50.0, 1, 1, 1, 0.0, 0.0,
                                           0.0, 1, 0, 0.0, 1e9)])
    assert none["ns_per_attempt"] is None and none["newidle_cost_ns"] is None



TINY = {"name": "tinybench", "command": "tinybench -n {level} -d {size}",
        "metric": r"latency p99:\s*([0-9.]+) us", "higher_better": False, "unit": "us",
        "default_size": 2, "level_name": "workers", "size_name": "seconds", "tasks": 1}


def test_spec_json_round_trip_builtin_and_custom():
    for s in (spec(workload="wakelat", extra_args=["-w", "2"]),
              spec(custom=dict(TINY), files=["/tmp/tinybench:/usr/local/bin/tinybench"])):
        d = json.loads(json.dumps(s.to_json()))
        back = bench.BenchSpec.from_json(d)
        assert back == s and back.wl.to_json() == s.wl.to_json()
    c = spec(custom=dict(TINY))
    assert c.workload == "tinybench" and c.wl.is_custom and c.command(3) == \
        ["tinybench", "-n", "3", "-d", "10"]
    old = spec().to_json()
    del old["custom"], old["files"]          # a run.json from before custom workloads
    assert bench.BenchSpec.from_json(old) == spec()
    with pytest.raises(bench.BenchParseError, match="not a bench spec"):
        bench.BenchSpec.from_json({**spec(custom=dict(TINY)).to_json(),
                                   "custom": {**TINY, "metric": "no group"}})


def test_collect_and_report_with_a_custom_workload(tmp_path: Path):
    s = spec(custom=dict(TINY), files=["/x/tinybench:/usr/local/bin/tinybench"])
    runs = bench.plan(s)
    text = bench.script(s, runs)
    assert "command -v tinybench >/dev/null" in text
    assert "tinybench -n 2 -d 10 2>&1 || fail 'tinybench failed" in text
    secs = fake_sections(s, runs, lambda r: 1.0)
    for r in runs:
        us = 200.0 if r.side == "A" else 150.0 + r.rep
        secs[f"{r.tag}.output"] = f"tinybench: {r.level} workers\nlatency p99: {us} us\n"
    ms = bench.collect(s, runs, secs)
    assert ms[0].value == 200.0 and ms[0].metrics == {"value": 200.0}
    rows = report.summarize(s, ms)
    assert rows[0]["speedup_pct"]["value"] == pytest.approx((200 / 150.5 - 1) * 100)
    assert "lower is better; tinybench's own" in report.table(s, rows)
    meta = report.metadata(s, "2x2x2", {}, "7.2.22", {})
    assert meta["workload"]["definition"] == TINY and meta["workload"]["workers"] == [1, 2]
    assert meta["workload"]["files"] == s.files
    assert "definition" not in report.metadata(spec(), "2x2x2", {}, "7.2.22", {})["workload"]
    secs[f"{runs[1].tag}.output"] = "tinybench: crashed\n"
    with pytest.raises(bench.BenchParseError, match="tinybench: no match for the metric regex"):
        bench.collect(s, runs, secs)


def test_overload_masks_are_read_after_the_runs_and_must_be_empty():
    spec = bench.BenchSpec(a=bench.Side("A", ("NO_STEAL",)), b=bench.Side("B", ("STEAL",)),
                           levels=[1], size=10, reps=1)
    text = bench.script(spec, bench.plan(spec))
    assert text.index("section overload.after") > text.rindex("hackbench")
    assert bench.overload_left("llc 0-3 overloaded \nllc 4-7 overloaded \n") == []
    assert bench.overload_left("llc 0-3 overloaded \nllc 4-7 overloaded 5,6\n") == [("4-7", "5,6")]
    assert bench.overload_left("") == []          # a kernel without the series
    with pytest.raises(bench.BenchParseError):
        bench.overload_left("garbage\n")


def test_schedstat_snapshots_must_list_every_cpu():
    spec = bench.BenchSpec(a=bench.Side("A", ("NO_STEAL",)), b=bench.Side("B", ("STEAL",)),
                           levels=[1], size=10, reps=1, warmup=0)
    runs = bench.plan(spec)
    before = (DATA / "schedstat-2x2x2-before.txt").read_text()
    after = (DATA / "schedstat-2x2x2-after.txt").read_text()
    sections = {f"{r.tag}.schedstat.{w}": t for r in runs
                for w, t in (("before", before), ("after", after))}
    bench.check_schedstat(sections, runs, 8)
    with pytest.raises(bench.BenchParseError, match="8 CPUs .want 16"):
        bench.check_schedstat(sections, runs, 16)
    with pytest.raises(bench.BenchParseError, match="went backwards"):
        bench.check_schedstat({k.replace("after", "x").replace("before", "after")
                               .replace("x", "before"): v for k, v in sections.items()}, runs, 8)


def test_one_repetition_plots_without_error_bars(tmp_path: Path):
    s = spec(reps=1)
    runs = bench.plan(s)
    ms = bench.collect(s, runs, fake_sections(s, runs, lambda r: 1.0))
    rows = report.summarize(s, ms)
    if util.pyplot() is None:
        pytest.skip("no matplotlib")
    assert report.plot(s, rows, tmp_path / "one.png", "one rep")
    assert (tmp_path / "one.png").stat().st_size > 0


@pytest.mark.parametrize("last, failed", [
    ("Failed to parse /proc/2482/schedstat", False),   # schbench's exit-time race
    ("Segmentation fault", True),
])
def test_a_benign_exit_keeps_the_run_and_any_other_fails_it(tmp_path, last, failed):
    """schbench exits 1 after a whole report when one of its threads is gone
    before its final /proc/<tid>/schedstat read: that run stands (its report
    is parsed as usual); any other non-zero exit still fails the run."""
    import subprocess
    s = spec(workload="schbench", levels=[1], reps=1, warmup=0)
    text = bench.script(s, bench.plan(s))
    start = text.index("section r000.output\n") + len("section r000.output\n")
    lines = text[start:].split("\n")[:2]
    assert "schbench -F 64 -n 1" in lines[0]
    fake = tmp_path / "schbench"
    fake.write_text(f"#!/bin/sh\necho 'average rps: 10.00'\necho '{last}'\nexit 1\n")
    fake.chmod(0o755)
    sh = "fail() { echo FAIL: \"$1\"; exit 3; }\n" + "\n".join(lines) + "\necho done\n"
    r = subprocess.run(["bash", "-c", sh], capture_output=True, text=True,
                       env={"PATH": f"{tmp_path}:/usr/bin:/bin"})
    assert (r.returncode == 3) == failed, r.stdout + r.stderr
    assert "average rps: 10.00" in r.stdout
