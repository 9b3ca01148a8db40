import json
from pathlib import Path

import pytest

from idlesteal import bench, report, suite
from idlesteal.util import HarnessError

from .test_bench import fake_sections, spec


def test_checked_in_suite_parses_and_covers_the_presets():
    entries = suite.load()
    assert {e.preset for e in entries} == {"1x1x2", "2x2x2", "2x4x2"}
    assert {"hackbench", "perf-messaging", "sysbench-mutex", "wakelat"} <= \
        {e.workload for e in entries}


@pytest.mark.parametrize("line,msg", [
    ("2x2x2 hackbench", "want"), ("9x9x9 hackbench 1", "known"),
    ("2x2x2 nosuch 1", "known"), ("2x2x2 hackbench 1,x", "integers"),
    ("2x2x2 hackbench 0", ">= 1")])
def test_bad_lines_are_errors_with_the_line(line, msg):
    with pytest.raises(HarnessError, match=msg):
        suite.parse(line + "\n", "f")


def test_select_filters():
    entries = suite.parse("2x2x2 hackbench 1\n1x1x2 wakelat 1 2\n")
    assert [e.name for e in suite.select(entries, presets="1x1x2")] == ["1x1x2-wakelat"]
    assert entries[1].size == 2 and entries[0].size == 0
    with pytest.raises(HarnessError, match="no suite entry"):
        suite.select(entries, presets="2x4x2")


def test_summary_from_result_files(tmp_path: Path):
    s = spec()
    runs = bench.plan(s)
    ms = bench.collect(s, runs, fake_sections(
        s, runs, lambda r: (2.0 if r.side == "A" else 1.6) + 0.01 * r.rep))
    meta = report.metadata(s, "2x2x2", {}, "7.2.22", {})
    report.write("2x2x2-hackbench", tmp_path, s, ms, meta)
    entries = suite.parse("2x2x2 hackbench 1,2\n2x2x2 wakelat 1\n")
    text, txt, js = suite.write_summary(entries, tmp_path)
    rows = json.loads(js.read_text())["rows"]
    assert [r["level"] for r in rows] == [1, 2]
    assert rows[0]["significant"] and rows[0]["speedup"] == pytest.approx(24.9, abs=0.1)
    assert "not run yet: 2x2x2-wakelat" in text


def test_summary_skips_results_of_the_older_format(tmp_path: Path):
    (tmp_path / "2x2x2-hackbench.json").write_text(json.dumps(
        {"meta": {}, "summary": [{"groups": 1, "A": {}, "B": {}}]}))
    rows, missing = suite.summary_rows(suite.parse("2x2x2 hackbench 1\n"), tmp_path)
    assert rows == [] and missing == ["2x2x2-hackbench (older result format)"]
