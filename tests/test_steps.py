"""The build-step log CI prints at its end (util.step, util.step_table)."""
from __future__ import annotations

import pytest

from idlesteal import util


def test_step_appends_name_seconds_and_outcome(tmp_path, monkeypatch):
    log = tmp_path / "steps.tsv"
    monkeypatch.setenv(util.STEP_LOG_ENV, str(log))
    with util.step("kernel 7.2 scx"):
        pass
    with pytest.raises(RuntimeError):
        with util.step("peer scx_p2dq"):
            raise RuntimeError("cargo failed")
    assert log.read_text().splitlines() == ["kernel 7.2 scx\t0\tok", "peer scx_p2dq\t0\tfailed"]


def test_step_without_the_log_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(util.STEP_LOG_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with util.step("kernel 7.2 scx"):
        pass
    assert list(tmp_path.iterdir()) == []


def test_table_sums_calls_seconds_and_failures_per_step_in_order():
    table = util.step_table("kernel 7.2 scx\t600\tok\npeer scx_p2dq\t128\tfailed\n"
                            "kernel 7.2 scx\t15\tok\n").splitlines()
    assert table[0].split() == ["step", "calls", "seconds", "failed"]
    assert table[1].split() == ["kernel", "7.2", "scx", "2", "615", "0"]
    assert table[2].split() == ["peer", "scx_p2dq", "1", "128", "1"]
    assert table[3].split() == ["all", "steps", "3", "743", "1"]


def test_a_line_that_is_not_a_step_is_an_error():
    with pytest.raises(util.ParseError, match="not name<TAB>seconds<TAB>outcome"):
        util.step_table("kernel 7.2 scx 600 ok\n")
