"""The guest-run side of the wasted-CPU measure (idlesteal/measure/tracerun.py) and
its place in the A/B runs (bench.script, bench.collect, report).  The
traces are synthetic (tests/test_waste.py's Trace); the numbers are worked
out by hand in the comments."""
from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest

from idlesteal.runs import bench
from idlesteal.report import ab as report
from idlesteal.guest import topology
from idlesteal.measure import tracerun, waste
from idlesteal import util
from tests.test_bench import fake_sections, spec
from tests.test_waste import A, B, Trace

T222 = waste.from_preset(topology.get("2x2x2"))
STATS = ("==> /sys/kernel/tracing/per_cpu/cpu0/stats <==\nentries: 10\noverrun: 0\n"
         "commit overrun: 0\nbytes: 640\ndropped events: {drop}\nread events: 0\n\n"
         "==> /sys/kernel/tracing/per_cpu/cpu1/stats <==\nentries: 3\noverrun: 0\n"
         "commit overrun: 0\nbytes: 100\ndropped events: 0\nread events: 0\n")


def waiting_trace(wait_us: int) -> str:
    """CPU 0 runs A from 0; B is woken onto CPU 0 at 100 us and waits there
    while CPUs 1-3 (same LLC) are idle, until CPU 0 switches to B at
    100 + wait_us; the window is [50, 2050] us.  Hand: LLC-wasted =
    3 CPUs x wait_us (CPUs 4-7 are another LLC: node/machine add 4 x
    wait_us), run delay = wait_us, CPU time = 8 x 2000 us."""
    t = Trace(cur={0: A})
    t.mark(50, 0, tracerun.START)
    t.wakeup(100, 0, B, 0)
    t.switch(100 + wait_us, 0, "S", B)
    t.mark(2050, 0, tracerun.END)
    return t.text()


def encode(text: str) -> str:
    """What trace_dump prints: gzip, then base64 in 76-column lines."""
    return base64.encodebytes(gzip.compress(text.encode())).decode()


def sections_for(tag: str, text: str, drop: int = 0) -> dict[str, str]:
    return {f"{tag}.trace": encode(text), f"{tag}.trace_stats": STATS.format(drop=drop)}


def test_modes():
    assert tracerun.traced("both", "A") and tracerun.traced("both", "B")
    assert tracerun.traced("A", "A") and not tracerun.traced("A", "B")
    assert not tracerun.traced("off", "A")
    with pytest.raises(ValueError, match="waste mode"):
        tracerun.traced("AB", "A")


def test_buffer_is_capped_at_a_quarter_of_guest_memory():
    assert tracerun.buffer_kb(8, 1024) == tracerun.DEFAULT_KB          # 64 MB of 1 GB
    assert tracerun.buffer_kb(64, 1024) == 1024 * 1024 // (4 * 64)     # 4 MB each
    assert tracerun.buffer_kb(2, 1024) == tracerun.TOTAL_KB // 2        # 1x1x2: 32 MB each
    assert tracerun.buffer_kb(16, 2048) == tracerun.DEFAULT_KB          # 2x4x2 unchanged
    assert tracerun.buffer_kb(2, 64) == 64 * 1024 // 8                  # a quarter of 64 MB
    assert tracerun.setup(8, 1024) == [f"trace_setup {tracerun.DEFAULT_KB}"]


def test_lines_decode_what_the_guest_prints():
    text = waiting_trace(400)
    assert tracerun.lines(sections_for("r001", text), "r001") == text.splitlines()


def test_measure_of_a_decoded_run():
    w = tracerun.measure(sections_for("r001", waiting_trace(400)), "r001", T222)
    assert w.window == pytest.approx(2000e-6)
    assert w.wasted["llc"] == pytest.approx(3 * 400e-6)
    assert w.wasted["machine"] == pytest.approx(7 * 400e-6)
    assert w.run_delay == pytest.approx(400e-6)
    assert w.fraction("llc") == pytest.approx(3 * 400 / (8 * 2000))


def test_dropped_events_fail_the_measure():
    with pytest.raises(waste.LostEvents, match="dropped events: 7"):
        tracerun.measure(sections_for("r001", waiting_trace(400), drop=7), "r001", T222)


def test_missing_or_garbled_sections_are_errors():
    with pytest.raises(tracerun.TraceParseError, match="lacks the trace sections"):
        tracerun.lines({"r001.trace": encode("x")}, "r001")
    with pytest.raises(tracerun.TraceParseError, match="does not decode"):
        tracerun.lines({"r001.trace": "not base64 !", "r001.trace_stats": ""}, "r001")
    packed = gzip.compress(bytes(range(256)) * 40)
    truncated = base64.b64encode(packed[:len(packed) // 2]).decode()
    with pytest.raises(tracerun.TraceParseError, match="does not decode"):
        tracerun.lines({"r001.trace": truncated, "r001.trace_stats": ""}, "r001")


def test_a_trace_without_its_markers_is_an_error():
    t = Trace(cur={0: A})
    t.wakeup(100, 0, B, 0).switch(500, 0, "S", B)
    with pytest.raises(waste.WasteError, match="marker"):
        tracerun.measure(sections_for("r001", t.text()), "r001", T222)


def test_script_traces_only_the_measured_runs_of_the_traced_sides():
    for mode, sides in (("both", "AB"), ("A", "A"), ("B", "B"), ("off", "")):
        s = spec(waste=mode)
        runs = bench.plan(s)
        text = bench.script(s, runs, 8, 1024)
        traced = [r for r in runs if not r.warmup and r.side in sides]
        assert text.count("trace_on\n") == len(traced) == text.count("trace_off\n")
        for r in runs:
            assert (f"trace_dump {r.tag}\n" in text) == (r in traced)
        assert ("trace_setup " in text) == bool(traced)
        if traced:   # the trace brackets the workload only, after the before-snapshots
            i = text.index(f"section {traced[0].tag}.output")
            assert text.index("trace_on", i) < text.index("hackbench", i) \
                < text.index("trace_off", i) < text.index(f"section {traced[0].tag}.stat.after")


def test_bad_waste_mode_and_old_run_json():
    with pytest.raises(Exception, match="waste mode"):
        spec(waste="AB")
    d = spec(waste="both").to_json()
    assert d["waste"] == "both"
    del d["waste"]   # a run kept before the measure existed traced nothing
    assert bench.BenchSpec.from_json(d).waste == "off"


def traced_sections(s: bench.BenchSpec, runs: list[bench.Run]) -> dict[str, str]:
    """fake_sections plus a trace per traced run: side A's B waits 400 us,
    side B's 100 us (so B removes 75% of A's LLC-wasted time)."""
    secs = fake_sections(s, runs, lambda r: 1.0)
    for r in runs:
        if bench.traced(s, r):
            secs.update(sections_for(r.tag, waiting_trace(400 if r.side == "A" else 100)))
    return secs


def test_collect_and_report_with_the_waste_columns(tmp_path: Path):
    s = spec(waste="both")
    runs = bench.plan(s)
    secs = traced_sections(s, runs)
    with pytest.raises(bench.BenchParseError, match="no topology"):
        bench.collect(s, runs, secs)
    ms = bench.collect(s, runs, secs, T222)
    assert all(m.waste is not None for m in ms)
    a = next(m for m in ms if m.side == "A")
    assert a.waste is not None and a.waste["wasted"]["llc"] == pytest.approx(3 * 400e-6)
    rows = report.summarize(s, ms)
    e = rows[0]["A"]["waste"]
    assert e["llc_pct"]["mean"] == pytest.approx(100 * 3 * 400 / 16000)
    assert e["run_delay_pct"]["mean"] == pytest.approx(100 * 400 / 16000)
    assert rows[0]["B"]["waste"]["llc_pct"]["mean"] == pytest.approx(100 * 3 * 100 / 16000)
    rm = rows[0]["waste_removed_pct"]
    assert rm["value"] == pytest.approx(75.0)
    text = report.table(s, rows)
    assert "wasted LLC %" in text and "B removes 75.0%" in text
    out = report.write("t", tmp_path, s, ms, report.metadata(s, "2x2x2", {}, "q", {}))
    runs_json = json.loads(out["json"].read_text())["runs"]
    assert runs_json[0]["waste"]["wasted"]["llc"] == pytest.approx(3 * 400e-6)
    pics = bench.timelines(s, runs, secs, T222, tmp_path, "t")
    if util.pyplot() is not None:
        assert set(pics) == {"timeline_A", "timeline_B"}
        assert all(p.stat().st_size > 0 for p in pics.values())


@pytest.mark.parametrize("mode", ["both", "B", "off"])
def test_each_traced_run_is_kept_as_an_ftrace_text_file(tmp_path: Path, mode: str):
    s = spec(waste=mode)
    runs = bench.plan(s)
    secs = traced_sections(s, runs)
    (tmp_path / "t-traces").mkdir()
    (tmp_path / "t-traces" / "A-groups9-rep7.trace.gz").write_bytes(b"")   # an older run set's
    out = bench.traces(s, runs, secs, tmp_path, "t")
    want = [r for r in runs if bench.traced(s, r) and not r.warmup]
    if not want:
        assert out == {}
        return
    files = sorted(out["traces"].glob("*.trace.gz"))
    assert [f.name for f in files] == sorted(
        f"{r.side}-{s.wl.level}{r.level}-rep{r.rep}.trace.gz" for r in want)
    assert {f.name[0] for f in files} == ({"A", "B"} if mode == "both" else {"B"})
    for f, r in zip(files, sorted(want, key=lambda r: (r.side, r.level, r.rep))):
        text = gzip.decompress(f.read_bytes()).decode()
        assert text.splitlines() == tracerun.lines(secs, r.tag)
        assert "sched_switch" in text


def test_an_untraced_side_has_no_waste_column():
    s = spec(waste="B")
    runs = bench.plan(s)
    ms = bench.collect(s, runs, traced_sections(s, runs), T222)
    assert [m.waste is None for m in ms] == [m.side == "A" for m in ms]
    rows = report.summarize(s, ms)
    assert "waste" not in rows[0]["A"] and "waste" in rows[0]["B"]
    assert "waste_removed_pct" not in rows[0]
    assert "B removes" not in report.table(s, rows)


def test_lost_events_in_one_run_fail_the_collection():
    s = spec(waste="both")
    runs = bench.plan(s)
    secs = traced_sections(s, runs)
    tag = next(r.tag for r in runs if bench.traced(s, r))
    secs.update(sections_for(tag, waiting_trace(400), drop=3))
    with pytest.raises(bench.BenchParseError, match="lost trace events"):
        bench.collect(s, runs, secs, T222)


def test_idle_split_from_the_schedstat_captures():
    # tests/data/schedstat-2x2x2-{before,after}.txt: every run of fake_sections
    s = spec(waste="off")
    runs = bench.plan(s)
    ms = bench.collect(s, runs, fake_sections(s, runs, lambda r: 1.0))
    sp = ms[0].split
    assert sp is not None and sp["idle_entries"] == pytest.approx(ms[0].idle)
    assert 0 <= sp["newidle_llc_gained"] <= sp["newidle_gained"]
    assert sp["newidle_llc_balanced"] + sp["newidle_llc_failed"] <= sp["newidle_llc"]
    assert sp["steals"] <= sp["steal_tries"]
    text = report.table(s, report.summarize(s, ms))
    assert "newidle@LLC %" in text and "steal try %" in text


def bouncing_trace(bounces: int) -> str:
    """B woken onto busy CPU 0, pulled 0 -> 1 and back 100 us later
    `bounces` times, then moved 0 -> 2 and run there: 2 x bounces + 1
    waiting moves, `bounces` bounces (each 0 -> 1 undone by the next move;
    1 -> 0 followed by 0 -> 2 is no return); window 2000 us x 8 CPUs =
    0.016 CPU-s."""
    t = Trace(cur={0: A})
    t.mark(50, 0, tracerun.START)
    t.wakeup(100, 0, B, 0)
    at = 110
    for _ in range(bounces):
        t.migrate(at, 1, B, 0, 1)
        t.migrate(at + 100, 0, B, 1, 0)
        at += 200
    t.migrate(at, 2, B, 0, 2)
    t.switch(at + 10, 2, "S", B)
    t.mark(2050, 0, tracerun.END)
    return t.text()


def test_the_waste_block_has_migrations_and_bounces_per_cpu_second():
    s = spec(waste="both")
    runs = bench.plan(s)
    secs = fake_sections(s, runs, lambda r: 1.0)
    # side A: one bounce in 3 waiting moves; side B: one move, no bounce
    for r in runs:
        if bench.traced(s, r):
            secs.update(sections_for(r.tag, bouncing_trace(1 if r.side == "A" else 0)))
    ms = bench.collect(s, runs, secs, T222)
    a = next(m for m in ms if m.side == "A").waste
    assert a is not None and (a["migrations_waiting"], a["bounces"]) == (3, 1)
    rows = report.summarize(s, ms)
    ea, eb = rows[0]["A"]["waste"], rows[0]["B"]["waste"]
    assert ea["migrations_waiting_per_cpu_s"]["mean"] == pytest.approx(3 / 0.016)
    assert ea["bounces_per_cpu_s"]["mean"] == pytest.approx(1 / 0.016)
    assert eb["migrations_waiting_per_cpu_s"]["mean"] == pytest.approx(1 / 0.016)
    assert eb["bounces_per_cpu_s"]["mean"] == 0 and "ci95" in eb["bounces_per_cpu_s"]
    text = report.table(s, rows)
    assert "migrations of waiting tasks /CPU-s" in text and "bounces /CPU-s" in text
    assert f"{3 / 0.016:.2f} ± " in text and f"{1 / 0.016:.2f} ± " in text


def test_why_block_from_the_measurement_counters():
    """With the measurement patch's counters in the snapshots, the split
    carries them per CPU and the table prints the why block, each reason
    per 100 newidle balances; without them (above) it prints none."""
    from tests.test_schedstat import WHY_BEFORE, with_why
    data = Path(__file__).parent / "data"
    before = (data / "schedsnap-2x2x2-before.txt").read_text()
    s = spec(waste="off")
    runs = bench.plan(s)
    secs = fake_sections(s, runs, lambda r: 1.0)
    after = {k: 3 * v for k, v in WHY_BEFORE.items()}
    for r in runs:
        secs[f"{r.tag}.schedstat.before"] = with_why(before, WHY_BEFORE)
        secs[f"{r.tag}.schedstat.after"] = with_why(before, after)
    ms = bench.collect(s, runs, secs)
    sp = ms[0].split
    assert sp is not None
    assert sp["ni_calls"] == pytest.approx(200) and sp["ni_avg_idle"] == pytest.approx(100)
    assert sp["steal_fail_hot"] == pytest.approx(4)
    text = report.table(s, report.summarize(s, ms))
    rows = [l.split() for l in text.splitlines() if l.split()[:2] == ["1", "A"]]
    why = next(r for r in rows if len(r) == 2 + 1 + len(report.WHY_COLUMNS))
    cols = dict(zip([k for k, _ in report.WHY_COLUMNS], map(float, why[3:])))
    assert float(why[2]) == pytest.approx(200)
    assert cols["ni_avg_idle"] == pytest.approx(50.0) and cols["ni_llc_empty"] == 20.0
    assert sum(cols[k] for k in ("ni_rd_idle", "ni_avg_idle", "ni_below", "ni_llc_empty",
                                 "ni_dice", "ni_pass", "ni_other")) == pytest.approx(100.0)
    assert "why: newidle balances per CPU" in text
