import json
import platform
import re
from pathlib import Path

import pytest

from idlesteal.runs import bench, levels, suite
from idlesteal.report import ab as report
from idlesteal.measure import workload
from idlesteal.util import HarnessError
from idlesteal import cli

from .test_bench import fake_sections, spec


def test_checked_in_suite_parses_and_covers_the_presets():
    entries = suite.load()
    assert {e.preset for e in entries} == {"1x1x2", "2x2x2", "2x4x2"}
    assert {"hackbench", "perf-messaging", "sysbench-mutex", "wakelat"} <= \
        {e.workload for e in entries}


@pytest.mark.parametrize("line,msg", [
    ("2x2x2 hackbench", "want"), ("9x9x9 hackbench 1", "known"),
    ("2x2x2 nosuch 1", "known"), ("2x2x2 hackbench 1,x", "level .x.: want a number"),
    ("2x2x2 hackbench 1 x", "the size must be an integer"),
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


SUITE = r"""
# my own benchmark beside a builtin one
file bin/tinybench
file data:/srv/data          # a directory, at a path of its own
workload tinybench "tinybench -n {level} -d {size}" 'latency p99:\s*([0-9.]+) us' lower unit=us size=2
workload tput 'sh -c "tput {level}"' "(?P<ops>\d+) ops/s" higher level=clients size-name=secs
2x2x2 tinybench 1,2,4
1x1x2 tput 2 5
2x2x2 hackbench 1 100
"""


def suite_dir(tmp_path: Path) -> Path:
    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "tinybench"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    (tmp_path / "data").mkdir()
    (tmp_path / "my.suite").write_text(SUITE)
    return tmp_path


def test_suite_defines_workloads_and_files(tmp_path: Path):
    d = suite_dir(tmp_path)
    entries = suite.load(d / "my.suite")
    assert [e.name for e in entries] == ["2x2x2-tinybench", "1x1x2-tput", "2x2x2-hackbench"]
    tiny, tput, hb = entries
    files = (f"{d}/bin/tinybench:/usr/local/bin/tinybench", f"{d}/data:/srv/data")
    assert tiny.files == tput.files == hb.files == files
    assert suite.files(entries) == list(files)
    assert tiny.custom == {"name": "tinybench", "command": "tinybench -n {level} -d {size}",
                           "metric": r"latency p99:\s*([0-9.]+) us", "higher_better": False,
                           "unit": "us", "default_size": 2, "level_name": "level",
                           "size_name": "size", "tasks": 1}
    assert tiny.size == 0 and tiny.wl.default_size == 2 and tiny.wl.argv(4, 2)[:3] == \
        ["tinybench", "-n", "4"]
    assert tiny.wl.parse("latency p99: 12.5 us\n") == {"value": 12.5}
    assert tput.wl.higher_better and tput.wl.metric == "ops" and tput.wl.level == "clients"
    assert tput.wl.argv(3, 5) == ["sh", "-c", "tput 3"] and tput.size == 5
    assert hb.custom is None and hb.wl is workload.get("hackbench")
    assert [e.name for e in suite.select(entries, workloads="tput,hackbench")] == \
        ["1x1x2-tput", "2x2x2-hackbench"]
    with pytest.raises(HarnessError, match="known: hackbench.*tinybench, tput"):
        suite.select(entries, workloads="nosuch")
    # what commands.common.spec() makes of an entry
    s = bench.BenchSpec(a=bench.Side("A", ()), b=bench.Side("B", ("STEAL",)), levels=tiny.levels,
                        size=tiny.size or tiny.wl.default_size, reps=1, custom=tiny.custom,
                        files=list(tiny.files))
    assert s.workload == "tinybench" and s.command(1) == ["tinybench", "-n", "1", "-d", "2"]


def test_suite_use_before_definition_and_relative_files(tmp_path: Path):
    (tmp_path / "f.txt").write_text("x")
    entries = suite.parse("2x2x2 w 1\nworkload w 'w {level}' '(\\d+)' higher\nfile f.txt\n",
                          "s", tmp_path)
    assert entries[0].custom["name"] == "w" and entries[0].files == (f"{tmp_path}/f.txt:/opt/f.txt",)


@pytest.mark.parametrize("text,msg", [
    ("workload w 'w {level}' '(\\d+)'\n", r"f:1: want 'workload <name>"),
    ("workload w 'w {level}' '(\\d+)' faster\n", "f:1: want 'lower' or 'higher'"),
    ("workload w 'w {level}' '(\\d+)' lower speed=2\n", "f:1: unknown option 'speed=2'"),
    ("workload w 'w {level}' '(\\d+)' lower size=x\n", "f:1: size= wants an integer"),
    ("workload w 'w 4' '(\\d+)' lower\n", r"f:1: .*does not use \{level\}"),
    ("workload w 'w {level}' 'x' lower\n", "f:1: .*has no group"),
    ("\nworkload hackbench 'hackbench {level}' '(\\d+)' lower\n", "f:2: .*builtin"),
    ("workload w 'w {level}' '(\\d+)' lower\nworkload w 'w {level}' '(\\d+)' lower\n",
     "f:2: workload 'w' is already defined on line 1"),
    ("workload w 'w {level}\n", "f:1: No closing quotation"),
    ("file /no/such/file\n", "f:1: .*no such host file"),
    ("file /etc/passwd:etc\n", "f:1: .*must be absolute"),
    ("file a b\n", "f:1: want 'file HOST"),
    ("workload w 'w {level}' '(\\d+)' lower\n2x2x2 v 1\n", "f:2: unknown workload 'v'; known: .*w"),
])
def test_bad_definitions_name_the_line(text, msg):
    with pytest.raises(HarnessError, match=msg):
        suite.parse(text, "f")


def test_summary_carries_the_wasted_time_of_traced_runs(tmp_path: Path):
    from tests.test_tracerun import T222, traced_sections
    s = spec(waste="both")
    runs = bench.plan(s)
    ms = bench.collect(s, runs, traced_sections(s, runs), T222)
    report.write("2x2x2-hackbench", tmp_path, s, ms, report.metadata(s, "2x2x2", {}, "q", {}))
    text, _, js = suite.write_summary(suite.parse("2x2x2 hackbench 1,2\n"), tmp_path)
    row = json.loads(js.read_text())["rows"][0]
    # A's task waits 400 us, B's 100 us: 3 CPUs x 400 / 16000 us = 7.5%, 1.875%
    assert row["waste_a"] == pytest.approx(7.5) and row["waste_b"] == pytest.approx(1.875)
    assert row["waste_removed"]["value"] == pytest.approx(75.0)
    assert " 7.50>1.88 " in text and "75.0 [" in text
    # untraced results say "-"
    s2 = spec()
    ms2 = bench.collect(s2, bench.plan(s2), fake_sections(s2, bench.plan(s2), lambda r: 1.0))
    report.write("2x2x2-hackbench", tmp_path, s2, ms2, report.metadata(s2, "2x2x2", {}, "q", {}))
    text, _, js = suite.write_summary(suite.parse("2x2x2 hackbench 1,2\n"), tmp_path)
    assert json.loads(js.read_text())["rows"][0]["waste_a"] is None


def test_host_entries_one_per_workload_with_its_first_line():
    entries = suite.parse("2x2x2 hackbench 1,2,4 100\n1x1x2 wakelat 1 5\n"
                          "1x1x2 hackbench 1,2 50\n2x4x2 hackbench 8 10\n")
    host, notes = suite.host_entries(entries, M128)
    assert [(e.preset, e.workload, e.levels, e.size) for e in host] == \
        [("host", "hackbench", [1, 2, 4], 100), ("host", "wakelat", [1], 5)]
    assert [e.name for e in host] == ["host-hackbench", "host-wakelat"]
    assert notes == ["hackbench: levels 1,2,4 size 100 of its 2x2x2 line; its 1x1x2, 2x4x2 "
                     "line(s) left out"]


M128 = levels.Machine(128, 16, "a 128-CPU machine")


def test_relative_levels_are_counted_on_the_preset():
    e = suite.parse("2x2x2 sysbench-threads llc*0.5,llc,cpus,cpus*2 100\n"
                    "2x4x2 hackbench cpus*5,cpus*10,cpus*11 50\n"
                    "1x1x2 perf-pipe 1,cpus,3\n")
    assert e[0].levels == [2, 4, 8, 16] and e[0].words == ("llc*0.5", "llc", "cpus", "cpus*2")
    assert e[1].levels == [2, 4]     # 80 and 160 tasks, 176 rounds to 4 groups as well
    assert e[2].levels == [1, 3]     # 2 tasks = 1 pair, once


@pytest.mark.parametrize("word,want", [
    ("cpus*0", "level 'cpus*0': the factor must be > 0"),
    ("cpu", "level 'cpu': want a number >= 1, or cpus, llc, cpus*F or llc*F"),
    ("llc*x", "level 'llc*x': want"), ("0", "level '0': want"), ("2.5", "level '2.5'")])
def test_a_bad_level_names_the_line_and_the_forms(word, want):
    with pytest.raises(HarnessError, match=re.escape(f"suite:1: {want}")):
        suite.parse(f"2x2x2 hackbench {word}\n")


def test_a_custom_workload_says_how_many_tasks_a_level_starts():
    e = suite.parse("workload mine 'prog {level}' 't=([0-9.]+)' lower tasks=4\n"
                    "2x2x2 mine 1,cpus,cpus*2\n")
    assert e[0].levels == [1, 2, 4] and e[0].wl.tasks == 4
    assert e[0].wl.to_json()["tasks"] == 4
    with pytest.raises(HarnessError, match="tasks \\(per level\\) must be an integer >= 1"):
        suite.parse("workload mine 'prog {level}' 't=([0-9.]+)' lower tasks=0\n2x2x2 mine 1\n")


def test_host_lines_wait_for_the_machine_and_come_first():
    entries = suite.parse("2x2x2 hackbench 1,2 100\nhost hackbench llc,cpus,cpus*2 5000\n"
                          "host wakelat 2,cpus 5\n")
    assert entries[1].levels == [] and entries[2].levels == [2]   # numbers only, until then
    host, notes = suite.host_entries(entries, M128)
    assert [(e.workload, e.levels, e.size) for e in host] == \
        [("hackbench", [1, 3, 6], 5000), ("wakelat", [2, 26], 5)]
    assert notes[0] == ("hackbench: levels llc,cpus,cpus*2 size 5000 of its host line; its "
                        "2x2x2 line(s) left out")
    assert notes[1] == ("hackbench: levels 1,3,6: from llc = 16, cpus = 128, cpus*2 = 256 "
                        "tasks at 40 tasks a level (a 128-CPU machine: 128 CPUs, LLC 16)")
    small, _ = suite.host_entries(entries, levels.Machine(2, 2, "this machine"))
    assert small[0].levels == [1] and small[1].levels == [2, 1]


def test_a_guest_run_leaves_the_host_lines_out_and_says_so():
    entries = suite.parse("2x2x2 hackbench 1\nhost hackbench cpus\n")
    out, note = suite.guest_entries(entries)
    assert [e.preset for e in out] == ["2x2x2"]
    assert note == "host line(s) left out (only --host runs them): hackbench"
    with pytest.raises(HarnessError, match="only host lines: run it with --host"):
        suite.guest_entries(suite.parse("host hackbench cpus\n"))


@pytest.mark.parametrize("machine", [levels.of_preset("1x1x2"), levels.of_preset("2x2x2"),
                                     M128, levels.Machine(192, 96, "two 96-CPU LLCs")])
def test_the_server_suite_gives_every_workload_a_level_anywhere(machine):
    entries = suite.load(suite.default_file(host=True))
    assert {e.preset for e in entries} == {"host"}
    host, _ = suite.host_entries(entries, machine)
    assert len(host) == len(entries) and all(e.levels and min(e.levels) >= 1 for e in host)
    assert all(e.levels == sorted(e.levels) for e in host)


def test_host_dir_is_named_after_the_machine(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("IDLESTEAL_RESULTS", str(tmp_path))
    assert suite.host_dir("server-1.lab") == tmp_path / "host-server-1.lab"
    assert suite.host_dir("a b/c") == tmp_path / "host-a_b_c"


def test_host_summary_says_host_and_keeps_the_meta(tmp_path: Path):
    s = spec()
    runs = bench.plan(s)
    ms = bench.collect(s, runs, fake_sections(s, runs, lambda r: 2.0 + 0.01 * r.rep))
    report.write("host-hackbench", tmp_path, s, ms, report.metadata(s, "host", {}, "none", {}))
    entries, _ = suite.host_entries(suite.parse("2x2x2 hackbench 1,2\n2x2x2 wakelat 1\n"), M128)
    text, _, js = suite.write_summary(entries, tmp_path, {"mode": "host", "machine": "m1"})
    data = json.loads(js.read_text())
    assert data["meta"] == {"mode": "host", "machine": "m1"}
    assert {r["preset"] for r in data["rows"]} == {"host"}
    assert "host mode (docs/host.md)" in text and "not run yet: host-wakelat" in text


def _host_result(outdir, reps: int, kernel: str, a=("NO_STEAL",), b=("STEAL",)) -> None:
    meta = {"workload": {"name": "hackbench", "loops": 50, "groups": [1], "extra_args": []},
            "reps": reps, "A": list(a), "B": list(b),
            "host_mode": {"offer": {"kernel": kernel}}}
    outdir.mkdir(exist_ok=True)
    (outdir / "host-hackbench.json").write_text(json.dumps({"meta": meta, "runs": [{}] * 12}))


@pytest.mark.parametrize("reps,kernel,kept", [(2, None, True), (3, None, False),
                                              (2, "0.0-other", False)])
def test_suite_host_resume_keeps_what_an_earlier_run_wrote(tmp_path, capsys, reps, kernel, kept):
    (tmp_path / "s.suite").write_text("2x2x2 hackbench 1 50\n2x2x2 perf-pipe 1\n")
    _host_result(tmp_path / "out", reps, kernel or platform.release())
    rc = cli.main(["suite", "--host", "--resume", "--dry-run", "--reps", "2", "--suite-file",
                   str(tmp_path / "s.suite"), "--outdir", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0
    assert ("host-hackbench: kept, written by an earlier run" in out) == kept, out
    assert ("  host-hackbench: " in out.replace("host-hackbench: kept", "")) != kept, out
    assert "  host-perf-pipe: " in out
    assert out.startswith(f"suite --host: {1 if kept else 2} entr")


@pytest.mark.parametrize("a,b,kept", [
    (("NO_STEAL", "NO_DELAY_DEQUEUE"), ("STEAL", "NO_DELAY_DEQUEUE"), True),
    (("NO_DELAY_DEQUEUE",), ("NO_DELAY_DEQUEUE",), True),     # the A/A of a stock kernel
    ((), (), False), (("NO_STEAL",), ("STEAL",), False)])
def test_resume_of_the_delay_dequeue_pass(tmp_path, capsys, a, b, kept):
    (tmp_path / "s.suite").write_text("2x2x2 hackbench 1 50\n")
    _host_result(tmp_path / "out", 2, platform.release(), a, b)
    assert cli.main(["suite", "--host", "--resume", "--dry-run", "--reps", "2", "--suite-file",
                     str(tmp_path / "s.suite"), "--outdir", str(tmp_path / "out"),
                     "--delay-dequeue", "off"]) == 0
    out = capsys.readouterr().out
    assert ("host-hackbench: kept, written by an earlier run" in out) == kept, out


def test_resume_is_for_the_host_suite_only(capsys):
    assert cli.main(["suite", "--resume", "--dry-run"]) == 2
    assert "argument --resume" in capsys.readouterr().err
