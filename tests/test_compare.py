"""idlesteal compare: reproduction of one suite run by another."""
from __future__ import annotations

import json
import subprocess

import pytest

from idlesteal.report import compare
from idlesteal.util import HarnessError


def row(workload: str, level: int, speedup: float, low: float, high: float,
        significant: bool = False, preset: str = "2x2x2") -> dict:
    return {"preset": preset, "workload": workload, "level": level, "speedup": speedup,
            "low": low, "high": high, "significant": significant}


def summary(*rows: dict) -> str:
    return json.dumps({"rows": list(rows), "missing": []})


OLD = summary(row("hackbench", 1, 10.0, 2.0, 18.0, True),
              row("hackbench", 2, 0.0, -10.0, 10.0),
              row("wakelat", 1, -5.0, -9.0, -1.0, True),
              row("perf-messaging", 4, 1.0, -1.0, 3.0))
NEW = summary(row("hackbench", 1, 12.0, 6.0, 18.0, True),    # inside, consistent, same
              row("hackbench", 2, 14.0, 4.0, 24.0, True),    # outside; diff 14 <= hypot(10,10)
              row("wakelat", 1, 6.0, 2.0, 10.0, True),       # flipped sign: inconsistent
              row("sysbench-mutex", 1, 0.0, -1.0, 1.0))


def cells() -> tuple[list[compare.Cell], list, list]:
    return compare.compare(compare.rows_by_key(OLD), compare.rows_by_key(NEW))


def test_cells_in_common_and_the_rest():
    c, only_old, only_new = cells()
    assert [x.key for x in c] == [("2x2x2", "hackbench", 1), ("2x2x2", "hackbench", 2),
                                  ("2x2x2", "wakelat", 1)]
    assert only_old == [("2x2x2", "perf-messaging", 4)]
    assert only_new == [("2x2x2", "sysbench-mutex", 1)]


def test_inside_consistent_same_call():
    c, _, _ = cells()
    assert [(x.inside, x.consistent, x.same_call) for x in c] == [
        (True, True, True), (False, True, False), (False, False, False)]
    assert c[1].diff == pytest.approx(14.0)
    assert c[1].diff_half_width == pytest.approx(14.142, abs=1e-3)


def test_table_counts():
    text = compare.table(*cells(), old_name="readme", new_name="fresh")
    assert ("3 cells: new estimate inside the readme 95% interval in 1, consistent "
            "(difference within its 95% interval) in 2, same call in 1; significant in "
            "readme: 2, of which significant the same way in fresh: 1; significant only "
            "in fresh: 1") in text
    assert "only in readme: 2x2x2/perf-messaging/4" in text
    assert "only in fresh: 2x2x2/sysbench-mutex/1" in text


def test_read_text_from_file_dir_and_git(tmp_path):
    (tmp_path / "summary.json").write_text(OLD)
    assert compare.read_text(str(tmp_path)) == OLD
    assert compare.read_text(str(tmp_path / "summary.json")) == OLD
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "summary.json"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "x"], check=True)
    assert compare.read_text("HEAD:summary.json", cwd=tmp_path) == OLD
    with pytest.raises(HarnessError, match="git show HEAD:nope.json"):
        compare.read_text("HEAD:nope.json", cwd=tmp_path)
    with pytest.raises(HarnessError, match="no such file"):
        compare.read_text(str(tmp_path / "missing"))


def test_not_a_summary_is_a_clear_error():
    with pytest.raises(HarnessError, match="x.json: not a suite summary.json"):
        compare.rows_by_key('{"summary": []}', "x.json")
