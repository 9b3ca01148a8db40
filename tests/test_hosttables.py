"""report/hosttables.py: a host suite's folder as the cover letter's tables."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from idlesteal.report import hosttables
from idlesteal.report.tables import TableError


def row(workload: str, level: int, p: float, speedup: float = 5.0, waste: tuple | None =
        (4.0, 1.0, 75.0, 0.001), steal: float = 12.0) -> dict:
    r = {"preset": "host", "workload": workload, "level": level, "metric": "time", "unit": "s",
         "a": 1.0, "a_ci": 0.1, "b": 0.95, "b_ci": 0.1, "speedup": speedup,
         "low": speedup - 3, "high": speedup + 3, "p": p, "significant": p < 0.05,
         "busy_a": 80.0, "busy_b": 82.0, "steal_b": steal, "us_per_try": 2.5,
         "newidle_us": 40.0, "waste_a": None, "waste_b": None, "waste_removed": None,
         "reps": 5, "date": "2026-12-03T10:00:00+0000", "host_cores": 128,
         "series_sha256": None}
    if waste:
        a, b, rm, wp = waste
        r.update(waste_a=a, waste_b=b, waste_removed={"value": rm, "low": rm - 10,
                                                      "high": rm + 10, "welch_p": wp})
    return r


def entry_meta(a: list[str], b: list[str]) -> dict:
    topo = {"online": list(range(8)), "smt": [[i, i + 4] for i in range(4)],
            "llc": [[0, 1, 4, 5], [2, 3, 6, 7]], "nodes": [list(range(8))]}
    load = {"loadavg": [0.12, 0.1, 0.1], "busy_cpus": 0.1, "tasks": 300}
    return {"date": "2026-12-03T10:00:00+0000", "A": a, "B": b, "reps": 5,
            "host": {"cpu_model": "Test CPU", "cores": 8},
            "host_mode": {"offer": {"topology": topo, "hypervisor": False, "load": load},
                          "load_start": load, "forced_under_load": False}}


def folder(tmp_path: Path, rows: list[dict], a=("NO_STEAL",), b=("STEAL",),
           missing: list[str] | None = None) -> Path:
    (tmp_path / "summary.json").write_text(json.dumps({
        "rows": rows, "missing": missing or [],
        "meta": {"mode": "host", "machine": "srv1", "kernel": "6.12.117-idlesteal-v6-abc"}}))
    for w in {r["workload"] for r in rows}:
        (tmp_path / f"host-{w}.json").write_text(json.dumps({"meta": entry_meta(list(a),
                                                                                  list(b))}))
    return tmp_path


def test_the_machine_the_settings_and_every_cell(tmp_path):
    rows = [row("hackbench", 4, 0.001, 10.0), row("hackbench", 8, 0.3, waste=None),
            row("perf-pipe", 2, 0.02, 4.0, waste=(0.5, 0.4, 20.0, 0.4))]
    text = hosttables.build(folder(tmp_path, rows, missing=["host-schbench"]))
    lines = text.splitlines()
    assert all(l == "" or l.startswith("  ") for l in lines)
    assert max(len(l) for l in lines if not l.startswith("  Data:")) <= 104
    assert "  Machine: srv1, Test CPU, 8 CPUs online" in lines
    assert "  Topology: LLCs 2 of 4 CPUs; nodes 1 of 8 CPUs; SMT 2 threads per core" in lines
    assert "  Kernel: 6.12.117-idlesteal-v6-abc" in lines
    assert "  A = NO_STEAL, B = STEAL, 5 repetitions a side, interleaved" in lines
    # three cells: Holm over 3 tests: .001 -> .003 (told apart), .02 -> .04, .3 -> .3
    hb4 = [l for l in lines if l.startswith("  hackbench -g 4 ") and "s " in l][0]
    assert ".001/.003" in hb4 and "*" in hb4
    pp = [l for l in lines if l.startswith("  perf pipe 2 ") and "s " in l][0]
    assert ".020/.040" in pp and "]*" in pp
    assert "  not traced on both sides: hackbench -g 8" in lines
    assert [l for l in lines if l.startswith("  hackbench -g 4 ")][0].split()[3:5] == \
        ["1", "s"]
    # the summary line: 3 cells, 2 traced, 1 where A wastes >= 1%, its removal told apart
    i = lines.index([l for l in lines if l.strip().startswith("cells traced")][0])
    assert lines[i + 1].split()[:5] == ["3", "2", "1", "2.2%", "75%"]
    assert "  2 of 3 cells told apart after Holm (interval half-widths 3-3%)." in lines
    assert "  Not run: host-schbench." in lines
    assert "  Run 2026-12-03." in lines


def test_a_kernel_without_the_series_says_a_a(tmp_path):
    text = hosttables.build(folder(tmp_path, [row("hackbench", 1, 0.6, steal=math.nan)],
                                   a=(), b=()))
    assert ("A = B = the kernel as it is (no STEAL A/B here; each entry's .txt says why): "
            "B vs A is run-to-run noise") in text
    assert "No difference detected in B's change (interval half-widths 3-3%)." in text


def test_a_side_a_without_waste_has_nothing_to_remove(tmp_path):
    text = hosttables.build(folder(tmp_path, [row("hackbench", 1, 0.5,
                                                  waste=(0.0, 0.0, 100.0, 0.5))]))
    line = [l for l in text.splitlines() if l.startswith("  hackbench -g 1 ") and "none" in l]
    assert line and line[0].endswith("- (A wastes none)"), text


def test_nothing_to_tabulate_is_an_error_naming_the_file(tmp_path):
    with pytest.raises(TableError, match="summary.json: no host cell"):
        hosttables.build(folder(tmp_path, []))
    (tmp_path / "summary.json").unlink()
    with pytest.raises(TableError, match="summary.json: missing"):
        hosttables.build(tmp_path)


def test_write_puts_it_beside_the_data(tmp_path):
    path = hosttables.write(folder(tmp_path, [row("hackbench", 1, 0.5)]))
    assert path == tmp_path / "cover-tables.txt" and "Machine: srv1" in path.read_text()
