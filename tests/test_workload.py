import json
from pathlib import Path

import pytest

from idlesteal.measure import workload
from idlesteal.util import HarnessError

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("name,sample", [
    ("perf-messaging", "perf-messaging.txt"), ("sysbench-threads", "sysbench-threads.txt"),
    ("sysbench-mutex", "sysbench-mutex.txt"), ("hackbench", "hackbench-g1-l2000.txt"),
    ("wakelat", "wakelat.txt"), ("schbench", "schbench-host.txt"),
    ("schbench-storm", "schbench-storm-host.txt")])
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


def test_schbench_reads_the_last_report():
    """Both captures are schbench at vendor/'s commit on the 2-core host:
    `-m 1 -t 2 -r 3 -w 1 -i 100` and the storm's flags with -t 4."""
    text = (DATA / "schbench-host.txt").read_text()
    m = workload.parse_schbench(text)
    assert (m["wake_p50_us"], m["wake_p99_us"], m["wake_max_us"]) == (19, 4520, 6403)
    assert (m["req_p99_us"], m["rps"]) == (14096, 292.0)
    # An interval report before the final one: the final one counts.
    early = text.replace("* 99.0th: 4520", "* 99.0th: 1").replace("average rps: 292.00", "")
    assert workload.parse_schbench(early + text)["wake_p99_us"] == 4520
    with pytest.raises(workload.WorkloadParseError, match="average rps"):
        workload.parse_schbench(text.replace("average rps", "avg"))
    with pytest.raises(workload.WorkloadParseError, match="Wakeup latencies lack"):
        workload.parse_schbench(text.replace("* 99.0th: 4520", "* 98.0th: 4520", 1))


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
        workload.get("fio")


def tiny() -> workload.Workload:
    return workload.custom("tiny", "tiny -n {level} --size={size} 'a b'",
                           r"latency p99:\s*(?P<p99>[0-9.]+) us", False, "us", default_size=3,
                           level_name="workers", size_name="seconds")


def test_custom_workload_command_and_parse():
    w = tiny()
    assert w.argv(4, 10) == ["tiny", "-n", "4", "--size=10", "a b"]
    assert w.argv(1, 2, ["-v"])[-1] == "-v"
    assert (w.binary, w.metric, w.unit, w.higher_better) == ("tiny", "p99", "us", False)
    assert (w.level, w.size_name, w.default_size) == ("workers", "seconds", 3)
    assert w.parse("start\nlatency p99: 123.4 us\n") == {"p99": 123.4}
    assert w.is_custom and not workload.get("hackbench").is_custom
    # an unnamed group is "value"; braces other than {level}/{size} stay
    v = workload.custom("x", "sh -c 'echo {level} | awk {print}'", r"(\d+)", True)
    assert v.argv(2, 1) == ["sh", "-c", "echo 2 | awk {print}"] and v.parse("7\n") == {"value": 7.0}


def test_custom_workload_parse_errors():
    w = tiny()
    with pytest.raises(workload.WorkloadParseError, match="no match for the metric regex"):
        w.parse("Segmentation fault\n")
    with pytest.raises(HarnessError, match="not a number"):
        workload.custom("x", "x {level}", r"p99: (\S+)", False).parse("p99: 1,5\n")
    with pytest.raises(workload.WorkloadParseError, match="finite"):
        workload.custom("x", "x {level}", r"p99: (\S+)", False).parse("p99: nan\n")


def test_custom_workload_json_round_trip():
    w = tiny()
    d = w.to_json()
    assert d["command"] == "tiny -n {level} --size={size} 'a b'" and set(d) == set(workload.CUSTOM_KEYS)
    back = workload.from_json(json.loads(json.dumps(d)))
    assert back.to_json() == d and back.argv(4, 10) == w.argv(4, 10)
    assert back.parse("latency p99: 5 us") == {"p99": 5.0}
    assert workload.get("wakelat").to_json() == {"name": "wakelat"}
    assert workload.from_json({"name": "wakelat"}) is workload.get("wakelat")
    assert workload.from_json("hackbench") is workload.get("hackbench")


@pytest.mark.parametrize("kw,msg", [
    (dict(command="tiny -n 4"), r"does not use \{level\}"),
    (dict(command=""), "empty"),
    (dict(command="tiny 'unclosed {level}"), "cannot split"),
    (dict(command="'ti;ny' {level}"), "plain name or path"),
    (dict(metric="p99: ([0-9.]+"), "does not compile"),
    (dict(metric="p99: [0-9.]+"), "has no group"),
    (dict(name="hackbench"), "builtin"),
    (dict(name="my bench"), "letters, digits"),
    (dict(higher_better="yes"), "true or false"),
    (dict(default_size=0), ">= 1"),
    (dict(unit="us per op"), "one word"),
    (dict(level_name="command"), "level name"),
    (dict(level_name="n", size_name="n"), "both"),
])
def test_custom_workload_bad_definitions(kw, msg):
    args = dict(name="tiny", command="tiny -n {level}", metric=r"p99: ([0-9.]+)",
                higher_better=False)
    args.update(kw)
    with pytest.raises(HarnessError, match=msg):
        workload.custom(**args)


def test_from_json_rejects_bad_definitions():
    with pytest.raises(HarnessError, match="unknown key"):
        workload.from_json({**tiny().to_json(), "regex": "x"})
    with pytest.raises(HarnessError, match="lacks metric"):
        workload.from_json({"name": "x", "command": "x {level}", "higher_better": True})
    with pytest.raises(HarnessError, match="known: hackbench"):
        workload.from_json({"name": "fio"})
    with pytest.raises(HarnessError, match="not a workload definition"):
        workload.from_json({"command": "x"})


def test_perf_pipe_reads_every_pair():
    one = workload.parse_perf_pipe((DATA / "perf-pipe-2x2x2-1pair.txt").read_text())
    assert one == {"usecs_op": 1044.636, "usecs_op_max": 1044.636, "pairs": 1.0}
    three = workload.parse_perf_pipe((DATA / "perf-pipe-2x2x2-3pairs.txt").read_text())
    assert three["pairs"] == 3.0
    assert three["usecs_op"] == pytest.approx((1712.33 + 2181.3565 + 2277.123) / 3)
    assert three["usecs_op_max"] == 2277.123


def test_perf_pipe_a_pair_that_died_is_an_error():
    text = (DATA / "perf-pipe-2x2x2-3pairs.txt").read_text()
    cut = text[:text.rindex("# Executed")]      # the third pair's report lost
    with pytest.raises(workload.WorkloadParseError, match="3 pair.*2 reported"):
        workload.parse_perf_pipe(cut + "# Executed 2000 pipe operations between two processes\n")
    with pytest.raises(workload.WorkloadParseError, match="usecs/op"):
        workload.parse_perf_pipe("perf: 'bench' is not a perf-command\n")


def test_perf_pipe_command_runs_pairs_at_once():
    w = workload.get("perf-pipe")
    assert w.argv(1, 500) == ["perf", "bench", "sched", "pipe", "-l", "500"]
    argv = w.argv(3, 500, ["-T"])
    assert argv[:2] == ["sh", "-c"] and argv[3:] == ["sh", "-T"]
    assert "seq 3" in argv[2] and "pipe -l 500 \"$@\" &" in argv[2] and "wait" in argv[2]
