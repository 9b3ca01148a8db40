from pathlib import Path

import pytest

from idlesteal import workload
from idlesteal.util import HarnessError

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("name,sample", [
    ("perf-messaging", "perf-messaging.txt"), ("sysbench-threads", "sysbench-threads.txt"),
    ("sysbench-mutex", "sysbench-mutex.txt"), ("hackbench", "hackbench-g1-l2000.txt"),
    ("wakelat", "wakelat.txt")])
def test_parsers_read_real_output(name, sample):
    w = workload.get(name)
    metrics = w.parse((DATA / sample).read_text())
    assert metrics[w.metric] > 0


def test_wakelat_metrics_and_stall():
    text = (DATA / "wakelat.txt").read_text()
    m = workload.parse_wakelat(text)
    assert m["p50_us"] <= m["p99_us"] <= m["p999_us"] <= m["max_us"]
    with pytest.raises(workload.WorkloadParseError, match="stalled"):
        workload.parse_wakelat(text.replace('"stalled": false', '"stalled": true'))


def test_garbage_is_an_error_naming_what_is_missing():
    with pytest.raises(workload.WorkloadParseError, match="total time"):
        workload.get("sysbench-mutex").parse("FATAL: unknown option\n")
    with pytest.raises(workload.WorkloadParseError, match="RESULT"):
        workload.get("wakelat").parse("")


def test_commands():
    assert workload.get("hackbench-thread-pipe").argv(4, 100) == \
        ["hackbench", "-T", "-p", "-g", "4", "-l", "100"]
    assert workload.get("sysbench-mutex").argv(8, 50000)[:3] == \
        ["sysbench", "mutex", "--threads=8"]
    assert workload.get("perf-messaging").argv(2, 10, ["-t"])[-1] == "-t"


def test_unknown_workload_lists_known_ones():
    with pytest.raises(HarnessError, match="known: hackbench"):
        workload.get("schbench")
