"""/proc/lock_stat parser (idlesteal/measure/lockstat.py) on real captures from the
lockstat kernel (configs/lockstat.config), and bench --lock-stat's script,
per-run record and report."""
import json
from pathlib import Path

import pytest

from idlesteal.runs import bench
from idlesteal.measure import lockstat
from idlesteal.report import ab as report

DATA = Path(__file__).parent / "data"
# `cat /proc/lock_stat` on 2x2x2 after hackbench -g 4 -l 50 with STEAL, the
# counters cleared before it (the whole file: every class with an acquisition)
FULL = "lockstat-2x2x2-full.txt"
# `lockstat_snap '&rq->__lock'` (idlesteal/guest/helpers.sh) after the same
# kind of run: the header and the run queue lock's classes only
SNAP = "lockstat-2x2x2-rq.txt"


def real(name: str) -> str:
    return (DATA / name).read_text()


def test_real_full_capture_parses():
    s = lockstat.parse(real(FULL))
    assert s.version == "0.4" and not s.debug_locks_off
    assert len(s.classes) > 50
    rq = s.get(lockstat.RQ_LOCK)
    assert set(rq.stats) == {""}
    t = rq.total
    assert t.acquisitions > 0 and t.holdtime_total > 0 and t.contentions > 0
    assert t.waittime_total > 0 and t.holdtime_max >= t.holdtime_avg > 0
    assert 1 <= len(rq.contention_points) <= 4 and 1 <= len(rq.contending_points) <= 4
    # points count waiters as they start to wait, contentions as they get the
    # lock after a nonzero measured wait: here the holder points add up to more
    assert sum(p.count for p in rq.contention_points) == 135
    assert sum(p.count for p in rq.contending_points) == 181
    # the sites as %pS prints them: the lock's caller, with its offset
    assert {p.function for p in rq.contention_points} == \
        {"__schedule", "___task_rq_lock", "sched_tick", "raw_spin_rq_lock_nested"}
    assert rq.contending_points[2] == lockstat.Point(111, "00000000dd3538ca",
                                                     "__schedule+0xca/0xfe0")
    assert (t.contentions, t.acquisitions, t.holdtime_max) == (162, 19934, 76206.19)
    # rw locks come as NAME-W / NAME-R lines of one class
    rw = [c for c in s.classes.values() if set(c.stats) == {"W", "R"}]
    assert rw and all(c.total.acquisitions == c.stats["W"].acquisitions +
                      c.stats["R"].acquisitions for c in rw)
    # a class nobody waited for has no points
    quiet = [c for c in s.classes.values() if c.total.contentions == 0]
    assert quiet and all(not c.contention_points and not c.contending_points for c in quiet)


def test_real_snap_is_the_rq_lock_part_of_the_file():
    s = lockstat.parse(real(SNAP))
    assert set(s.classes) <= {lockstat.RQ_LOCK, lockstat.RQ_LOCK + "/1"}
    assert [c.name for c in s.family(lockstat.RQ_LOCK)][0] == lockstat.RQ_LOCK
    r = lockstat.record(s)
    assert r["class"] == lockstat.RQ_LOCK and r["contentions"] > 0
    assert r["series_holder"]["recorded"] == 181 and r["series_holder"]["share_pct"] == 0.0
    assert r["series_holder"]["count"] <= r["series_holder"]["recorded"]
    assert r["contending_points"] and all("function" in p for p in r["contending_points"])
    json.dumps(r)


def test_warning_line_and_errors():
    text = real(SNAP)
    off = text.replace("lock_stat version 0.4\n", "lock_stat version 0.4\n"
                       "*WARNING* lock debugging disabled!! - possibly due to a lockdep "
                       "warning\n")
    assert lockstat.parse(off).debug_locks_off
    with pytest.raises(lockstat.LockStatError, match="no 'lock_stat version'"):
        lockstat.parse("nothing\n")
    with pytest.raises(lockstat.LockStatError, match="version 0.3"):
        lockstat.parse(text.replace("version 0.4", "version 0.3"))
    with pytest.raises(lockstat.LockStatError, match="no class"):
        lockstat.parse(text).get("&nope")
    with pytest.raises(lockstat.LockStatError, match="line"):
        lockstat.parse(text + "garbage here\n")


def test_window_seconds():
    assert lockstat.window_seconds("12.50 20.75\n") == pytest.approx(8.25)
    for bad in ("", "12.5", "x y", "20.0 12.5", "1 2 3"):
        with pytest.raises(lockstat.LockStatError):
            lockstat.window_seconds(bad)


def test_site_share():
    pts = [lockstat.Point(6, "0", "raw_spin_rq_lock_nested+0x2c/0x80"),
           lockstat.Point(2, "0", "steal_from+0x10/0x200")]
    assert pts[1].function == "steal_from"
    sh = lockstat.site_share(pts, lockstat.SERIES_SITES, 10)
    assert sh == {"count": 2, "recorded": 8, "share_pct": 25.0, "recorded_pct": 80.0}
    assert lockstat.site_share([], lockstat.SERIES_SITES, 0)["share_pct"] is None


# ---------------------------------------------------------------- bench --lock-stat

def spec(**kw) -> bench.BenchSpec:
    base = dict(a=bench.Side("A", ("NO_STEAL",)), b=bench.Side("B", ("STEAL",)),
                levels=[1, 4], size=10, reps=2, waste="off", lock_stat=True)
    base.update(kw)
    return bench.BenchSpec(**base)


def test_script_clears_before_and_reads_after_each_run():
    s = spec()
    runs = bench.plan(s)
    text = bench.script(s, runs)
    for r in runs:
        clear = text.index("lockstat_reset", text.index(f"section {r.tag}.stat.before"))
        out = text.index(f"section {r.tag}.output")
        window = text.index(f"section {r.tag}.lockstat.window\nlockstat_window\n")
        snap = text.index(f"section {r.tag}.lockstat\nlockstat_snap '&rq->__lock'")
        assert clear < out < window < snap < text.index(f"section {r.tag}.stat.after")
    assert "lockstat" not in bench.script(spec(lock_stat=False), runs)
    assert bench.BenchSpec.from_json(s.to_json()).lock_stat
    assert not bench.BenchSpec.from_json({**s.to_json(), "lock_stat": None}).lock_stat


def sections(s: bench.BenchSpec, runs) -> dict:
    from tests.test_bench import fake_sections
    out = fake_sections(s, runs, lambda r: 1.0 + 0.1 * r.index)
    snap = real(SNAP)
    n = lockstat.parse(snap).get(lockstat.RQ_LOCK).total.contentions
    for r in runs:       # side B: twice the contentions (the count field only)
        out[f"{r.tag}.lockstat"] = snap if r.side == "A" else \
            snap.replace(f" {n:>14} ", f" {2 * n:>14} ", 1)
        out[f"{r.tag}.lockstat.window"] = "100.25 102.25\n"
    return out


def test_collect_and_report_the_lock(tmp_path: Path):
    s = spec()
    runs = bench.plan(s)
    ms = bench.collect(s, runs, sections(s, runs))
    assert all(m.lock_stat is not None for m in ms)
    rows = report.summarize(s, ms)
    a, b = rows[0]["A"]["lock_stat"], rows[0]["B"]["lock_stat"]
    assert b["contentions"]["mean"] == pytest.approx(2 * a["contentions"]["mean"])
    assert a["contentions_per_s"]["mean"] == pytest.approx(a["contentions"]["mean"] / 2.0)
    assert ms[0].lock_stat["seconds"] == pytest.approx(2.0)
    assert rows[0]["lock_ratio"]["contentions"]["value"] == pytest.approx(2.0)
    assert a["series_holder"]["contentions"] == 2 * ms[0].lock_stat["contentions"]
    text = report.table(s, rows)
    assert "lock side" in text and "B/A contentions: 2.00" in text and "holders from:" in text
    meta = report.metadata(s, "2x2x2", {"source": {"version": "7.2.13-1"}}, "7.2.22", {})
    out = report.write("t", tmp_path, s, ms, meta)
    data = json.loads(out["json"].read_text())
    assert data["runs"][0]["lock_stat"]["class"] == lockstat.RQ_LOCK


def test_a_run_without_the_section_or_with_lockdep_off_is_an_error():
    s = spec()
    runs = bench.plan(s)
    for part in (".lockstat", ".lockstat.window"):
        secs = sections(s, runs)
        del secs[runs[1].tag + part]
        with pytest.raises(bench.BenchParseError, match="lacks section"):
            bench.collect(s, runs, secs)
    secs = sections(s, runs)
    secs[runs[2].tag + ".lockstat"] = secs[runs[2].tag + ".lockstat"].replace(
        "version 0.4\n", "version 0.4\n*WARNING* lock debugging disabled!! - x\n")
    with pytest.raises(bench.BenchParseError, match="lock debugging was off"):
        bench.collect(s, runs, secs)
