from pathlib import Path

import pytest

from idlesteal.measure import procstat

DATA = Path(__file__).parent / "data"


def test_real_sample_busy():
    before = procstat.parse((DATA / "stat-2x2x2-before.txt").read_text())
    after = procstat.parse((DATA / "stat-2x2x2-after.txt").read_text())
    assert sorted(after.cpus) == list(range(8))
    busy = procstat.busy(before, after)
    assert 0.0 < busy <= 100.0
    assert after.ctxt > before.ctxt


def test_busy_arithmetic():
    b = procstat.parse("cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 100 0 100 700 100 0 0 0 0 0\n")
    a = procstat.parse("cpu  250 0 150 900 100 0 0 0 50 0\ncpu0 250 0 150 900 100 0 0 0 50 0\n")
    # deltas: user 150 (includes guest 50), system 50, idle 200 -> 200 busy of 400
    assert procstat.busy(b, a) == pytest.approx(50.0)
    assert procstat.busy_percent(b.cpus[0], a.cpus[0]) == pytest.approx(50.0)


def test_no_time_passed_is_zero_busy():
    s = procstat.parse("cpu 1 2 3 4 5 6 7 8 9 10\n")
    assert procstat.busy(s, s) == 0.0


def test_missing_aggregate_line():
    with pytest.raises(procstat.ProcStatError):
        procstat.parse("cpu0 1 2 3 4\n")
