"""Command-line parsing: options a command would ignore are errors."""
from __future__ import annotations

import pytest

from idlesteal import cli


def parse(*argv: str):
    return cli.parser().parse_args(list(argv))


@pytest.mark.parametrize("argv", [
    ("suite", "--preset", "1x1x2"),        # was taken as --presets (abbreviation)
    ("kernels", "--variant", "steal"),     # was taken as --variants
    ("bench", "--work", "wakelat"),        # no abbreviations at all
])
def test_ignored_or_abbreviated_options_are_rejected(argv, capsys):
    with pytest.raises(SystemExit) as e:
        parse(*argv)
    assert e.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_guest_commands_keep_their_options():
    a = parse("bench", "--preset", "1x1x2", "--variant", "steal", "--no-build")
    assert (a.preset, a.variant, a.build) == ("1x1x2", "steal", False)
    a = parse("suite", "--presets", "2x2x2", "--no-build")
    assert (a.presets, a.variant, a.build) == (["2x2x2"], "steal", False)
    a = parse("kernels", "--variants", "steal,reference", "--preset", "2x2x2")
    assert (a.variants, a.preset) == (["steal", "reference"], "2x2x2")


# ---------------------------------------------------------------- the CLI driven
# end to end with the kernel build and the guest faked (kunit_tool_test.py's
# KUnitMainTest does the same for kunit.py): the paths between argparse and
# the library, errors included, run without a kernel.

import json
from pathlib import Path

from idlesteal.runs import bench, kernels
from idlesteal.kernel import tree
from idlesteal.util import HarnessError


class FakeRunner:
    """Stands in for kernels.ensure and bench.run_ab; records the calls."""

    def __init__(self, fail: dict[str, Exception] | None = None) -> None:
        self.fail = fail or {}
        self.built: list[str] = []
        self.runs: list[tuple[str, bench.BenchSpec]] = []

    def ensure(self, variant: str, prepare: bool = True, force: bool = False) -> Path:
        self.built.append(variant)
        return Path("/fake/bzImage")

    def run_ab(self, spec, preset, kernel, variant, name, outdir, append="", timeout=0) -> dict:
        self.runs.append((name, spec))
        if name in self.fail:
            raise self.fail[name]
        return {"table": f"table of {name}\n"}


@pytest.fixture
def fake(monkeypatch):
    r = FakeRunner()
    monkeypatch.setattr(kernels, "ensure", r.ensure)
    monkeypatch.setattr(bench, "run_ab", r.run_ab)

    def no_prepare(*a, **kw):
        raise AssertionError("the tree must not be prepared in this test")
    monkeypatch.setattr(tree, "prepare", no_prepare)
    return r


SUITE = """\
2x2x2 hackbench      1,2 10
2x2x2 wakelat        1   1
1x1x2 sysbench-mutex 1   100
"""


def test_suite_goes_on_after_a_parse_error_and_fails(fake, tmp_path, capsys):
    (tmp_path / "s.suite").write_text(SUITE)
    fake.fail["2x2x2-wakelat"] = bench.BenchParseError("run 3: no RESULT line")
    rc = cli.main(["suite", "--suite-file", str(tmp_path / "s.suite"),
                   "--outdir", str(tmp_path / "out"), "--reps", "1"])
    out, err = capsys.readouterr()
    assert rc == 1
    assert [n for n, _ in fake.runs] == ["2x2x2-hackbench", "2x2x2-wakelat",
                                         "1x1x2-sysbench-mutex"]
    assert "table of 1x1x2-sysbench-mutex" in out
    assert "1 suite entry failed: 2x2x2-wakelat" in err
    assert fake.built == ["steal"]


@pytest.mark.parametrize("error", [
    bench.BenchParseError("x"),
    __import__("idlesteal.measure.workload", fromlist=["x"]).WorkloadParseError("x"),
    __import__("idlesteal.measure.schedstat", fromlist=["x"]).SchedstatError("x"),
    __import__("idlesteal.measure.procstat", fromlist=["x"]).ProcStatError("x"),
    __import__("idlesteal.measure.ktap", fromlist=["x"]).KtapError("x"),
])
def test_every_parse_error_is_a_harness_error(error):
    assert isinstance(error, HarnessError) and isinstance(error, ValueError)


def main_rc(argv: list[str]) -> int:
    """cli.main()'s exit status, argparse's own exit included."""
    try:
        return cli.main(argv)
    except SystemExit as e:
        return int(e.code or 0)


# Each one a single line, exit status 2, before anything is built
# (tests/test_args.py walks every option of every command the same way).
@pytest.mark.parametrize("argv,message", [
    (["stress", "--preset", "1x1x2"], "1x1x2 has 2"),
    (["stress", "--preset", "2x2x2,typo"], "invalid value '2x2x2,typo' (want comma-separated topology presets"),
    (["asym-bench", "--preset", "typo"], "want an asymmetric arm64 preset: asym2b2l"),
    (["asym-boot", "--preset", "typo"], "argument --preset: invalid value 'typo'"),
    (["bench", "--preset", "typo"], "want a topology preset"),
    (["bench", "--workload", "nope"], "argument --workload: invalid value 'nope'"),
    (["bench", "--variant", "nope"], "want a kernel variant of configs/variants"),
    (["bench", "--a", "no-steal"], "sched feature words"),
    (["bench", "--a", "FOO"], "argument --a: invalid value 'FOO'"),
    (["bench", "--b", "STEAL,NO_STEAL"], "each once"),
    (["bench", "--levels", "0"], "--levels"),
    (["bench", "--reps", "0"], "--reps"),
    (["bench", "--size", "-1"], "argument --size/--loops: invalid value '-1'"),
    (["bench", "--timeout", "0"], "argument --timeout: invalid value '0'"),
    (["bench", "--name", "../../x"], "argument --name: invalid value '../../x'"),
    (["bench", "--metric", "x (\\d+)"], "only with --command"),
    (["bench", "--unit", "us"], "only with --command"),
    (["bench", "--command", "prog -n {level}"], "with --metric"),
    (["bench", "--command", "prog -n 4", "--metric", "(\\d+)"], "{level}"),
    (["bench", "--file", "/nonexistent/prog"], "/nonexistent/prog"),
    (["boot", "--tools", "nope"], "known: perf, sysbench"),
    (["suite", "--presets", "9x9x9"], "want comma-separated topology presets"),
    (["kernels", "--variants", "steal"], "want 2 comma-separated kernel variants"),
    (["collect", "/nonexistent/run"], "want an existing directory"),
])
def test_arguments_are_checked_before_anything_is_built(fake, argv, message, capsys):
    assert main_rc(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "error:" in err and len(err.strip().splitlines()) == 1
    assert fake.built == [] and fake.runs == []


def test_suite_filters_must_name_entries_of_the_file(fake, tmp_path, capsys):
    (tmp_path / "s.suite").write_text(SUITE)
    argv = ["suite", "--suite-file", str(tmp_path / "s.suite"), "--outdir", str(tmp_path)]
    assert main_rc([*argv, "--presets", "2x4x2"]) == 2
    assert "want presets of" in capsys.readouterr().err
    assert main_rc([*argv, "--workloads", "perf-messaging"]) == 2
    assert "want workloads of" in capsys.readouterr().err
    assert main_rc([*argv, "--presets", "1x1x2", "--workloads", "wakelat"]) == 2
    assert "share an entry" in capsys.readouterr().err
    assert fake.built == [] and fake.runs == [] and list(tmp_path.iterdir()) == [
        tmp_path / "s.suite"]


def test_bench_without_options_is_steal_against_no_steal(fake, tmp_path):
    assert cli.main(["bench", "--outdir", str(tmp_path), "--name", "x"]) == 0
    (name, spec), = fake.runs
    assert fake.built == ["steal"]
    assert (spec.a.features, spec.b.features, spec.workload) == (("NO_STEAL",), ("STEAL",),
                                                                 "hackbench")


def test_dry_run_prints_the_plan_and_runs_nothing(fake, tmp_path, capsys):
    (tmp_path / "s.suite").write_text(SUITE)
    # A previous result of the first entry: 120 s of guest time for 5 runs.
    (tmp_path / "2x2x2-hackbench.json").write_text(json.dumps(
        {"meta": {"guest": {"total_seconds": 120.0}, "warmup": 1}, "runs": [{}] * 4}))
    assert cli.main(["suite", "--suite-file", str(tmp_path / "s.suite"), "--outdir",
                     str(tmp_path), "--reps", "2", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert fake.built == [] and fake.runs == []
    assert out.startswith("suite: 3 entries, 3 boots, ")
    # hackbench: 1 warm-up + 2 reps x 2 levels x 2 sides = 9 runs, 21 s/run measured
    assert "2x2x2-hackbench: 1 boot of 2x2x2 (8 vCPUs), 9 runs" in out
    assert "last run of 2x2x2-hackbench" in out
    assert cli.main(["bench", "--preset", "1x1x2", "--dry-run", "--outdir", str(tmp_path)]) == 0
    assert "runs" in capsys.readouterr().out and fake.runs == []


def test_custom_workload_from_the_command_line(fake, tmp_path):
    assert cli.main(["bench", "--workload", "mybench", "--command", "mybench -t {level} -n {size}",
                     "--metric", r"p99: ([0-9.]+)", "--higher-better", "--size", "7",
                     "--levels", "2,4", "--outdir", str(tmp_path), "--name", "c"]) == 0
    (_, spec), = fake.runs
    assert spec.command(4) == ["mybench", "-t", "4", "-n", "7"]
    assert spec.wl.higher_better and spec.wl.parse("p99: 12.5\n")[spec.wl.metric] == 12.5


# ---------------------------------------------------------------- suite --host

import os

from idlesteal.runs import host, suite
from idlesteal.scx import peers
from idlesteal.report import ab as report

HOST_SUITE = """\
workload shb "sh -c 'echo t={level}'" "t=([0-9.]+)" lower
workload gone "idlesteal-no-prog {level}" "t=([0-9.]+)" lower
2x2x2 shb  1,2 3
1x1x2 shb  1   1
2x2x2 gone 1
"""


@pytest.fixture
def fake_host(monkeypatch, tmp_path):
    """host.bench() faked: a result JSON written as a run writes one (the
    test_bench captures' figures); the calls recorded."""
    from .test_bench import fake_sections, spec
    calls: list[tuple[str, bench.BenchSpec, Path]] = []

    def run(spec_, name, outdir, *, explicit_ab, max_load, force_load, show, root):
        calls.append((name, spec_, outdir))
        show("host: fake, kernel 6.12 (x86_64)\n")
        s = spec()
        runs = bench.plan(s)
        ms = bench.collect(s, runs, fake_sections(s, runs, lambda r: 2.0 + 0.01 * r.rep))
        return report.write(name, outdir, s, ms, report.metadata(s, "host", {}, "none", {}))
    monkeypatch.setattr(host, "bench", run)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("IDLESTEAL_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(kernels, "ensure", lambda *a, **kw: pytest.fail("a kernel was built"))
    (tmp_path / "h.suite").write_text(HOST_SUITE)
    return calls


def test_suite_host_runs_each_workload_once_into_a_host_folder(fake_host, tmp_path, capsys):
    rc = cli.main(["suite", "--host", "--suite-file", str(tmp_path / "h.suite"), "--reps", "2"])
    out, err = capsys.readouterr()
    outdir = suite.host_dir()
    assert outdir.parent == tmp_path / "results" and outdir.name.startswith("host-")
    assert rc == 0, err
    assert [(n, s.levels, s.size, s.reps, d) for n, s, d in fake_host] == \
        [("host-shb", [1, 2], 3, 2, outdir)]
    assert "shb: levels 1,2 size 3 of its 2x2x2 line; its 1x1x2 line(s) left out" in out
    assert "suite --host: host-gone skipped: idlesteal-no-prog is not installed" in out
    assert out.count("host: fake") == 1
    data = json.loads((outdir / "summary.json").read_text())
    assert data["meta"]["mode"] == "host" and data["meta"]["skipped"][0].startswith("host-gone")
    assert {r["preset"] for r in data["rows"]} == {"host"}
    assert "not run yet: host-gone" in (outdir / "summary.txt").read_text()
    assert f"wrote {outdir / 'cover-tables.txt'} (the cover letter's tables)" in out
    tables = (outdir / "cover-tables.txt").read_text()
    assert "  shb 1 " in tables and "  shb 2 " in tables and "Not run: host-gone." in tables
    assert not (tmp_path / "results" / "summary.json").exists()


def test_suite_host_runs_once_per_delay_dequeue_setting(fake_host, tmp_path, capsys):
    rc = cli.main(["suite", "--host", "--suite-file", str(tmp_path / "h.suite"), "--reps", "2",
                   "--delay-dequeue", "both", "--workloads", "shb"])
    out, err = capsys.readouterr()
    outdir = suite.host_dir()
    assert rc == 0, err
    assert [(n, s.a.features, s.b.features, d) for n, s, d in fake_host] == [
        ("host-shb", ("NO_STEAL",), ("STEAL",), outdir),
        ("host-shb", ("NO_STEAL", "NO_DELAY_DEQUEUE"), ("STEAL", "NO_DELAY_DEQUEUE"),
         outdir / "no-delay-dequeue")]
    assert f"results in {outdir}, {outdir / 'no-delay-dequeue'}" in out
    assert "suite --host, NO_DELAY_DEQUEUE on both sides: 1 entries" in out
    for d, label in ((outdir, "DELAY_DEQUEUE as booted"),
                     (outdir / "no-delay-dequeue", "NO_DELAY_DEQUEUE on both sides")):
        assert json.loads((d / "summary.json").read_text())["meta"]["delay_dequeue"] == label
        assert (d / "cover-tables.txt").exists()


def test_suite_host_refused_before_any_entry_is_one_line(fake_host, tmp_path, capsys,
                                                         monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    rc = cli.main(["suite", "--host", "--suite-file", str(tmp_path / "h.suite")])
    out, err = capsys.readouterr()
    errors = [l for l in err.splitlines() if not l.startswith("[idlesteal]")]
    assert rc == 1 and errors == ["idlesteal suite: error: --host needs root (sched features, "
                                  "tracefs, the schedstats sysctl, mounting debugfs/tracefs); "
                                  "run it with sudo"]
    assert fake_host == [] and not suite.host_dir().exists()


def test_suite_host_dry_run_and_summary_only(fake_host, tmp_path, capsys):
    h = str(tmp_path / "h.suite")
    assert cli.main(["suite", "--host", "--suite-file", h, "--dry-run",
                     "--outdir", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "suite --host: 2 entries on this machine (the running kernel), " in out
    assert f"results in {tmp_path / 'o'}" in out
    assert "host-gone: 11 runs of gone" in out and "would be skipped: idlesteal-no-prog" in out
    assert fake_host == [] and not (tmp_path / "o").exists()
    assert cli.main(["suite", "--host", "--suite-file", h, "--summary-only",
                     "--workloads", "gone"]) == 0
    out = capsys.readouterr().out
    assert "not run yet: host-gone" in out
    assert json.loads((suite.host_dir() / "summary.json").read_text())["meta"]["mode"] == "host"


@pytest.mark.parametrize("argv,want", [
    (["--host", "--presets", "2x2x2"], "argument --presets: invalid value '2x2x2' (want no "
     "--presets with --host: a preset is a guest's topology"),
    (["--host", "--variant", "base"], "argument --variant: invalid value 'base' (want no "
     "--variant with --host"),
    (["--force-load"], "argument --force-load: invalid value True (want it only with --host)"),
])
def test_suite_host_arguments(fake_host, argv, want, capsys):
    assert cli.main(["suite", *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and want in err, err
    assert fake_host == []


def test_side_by_side_summary_keeps_every_preset_of_the_file(monkeypatch, tmp_path, capsys):
    """--presets runs some; summary.txt still lists all (the others as
    their last .txt, or "not run yet")."""
    from idlesteal.kernel import build
    from idlesteal.runs import sidebyside
    (tmp_path / "s.suite").write_text("2x2x2 hackbench 1 50\n1x1x2 hackbench 1 50\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out/2x2x2.txt").write_text("2x2x2: an earlier run\n")
    ran = []

    def run(spec, kernel, variant, outdir):
        ran.append(spec.preset)
        (outdir / f"{spec.preset}.txt").write_text(f"{spec.preset}: this run\n")
        return {"table": "", "txt": outdir / f"{spec.preset}.txt"}
    monkeypatch.setattr(sidebyside, "run", run)
    monkeypatch.setattr(build, "bzimage", lambda v: tmp_path / "bzImage")
    rc = cli.main(["side-by-side", "--no-build", "--variant", "steal", "--sched",
                   "eevdf,eevdf+steal", "--suite-file", str(tmp_path / "s.suite"), "--presets",
                   "1x1x2", "--reps", "2", "--outdir", str(tmp_path / "out")])
    assert rc == 0 and ran == ["1x1x2"]
    assert (tmp_path / "out/summary.txt").read_text() == \
        "2x2x2: an earlier run\n\n1x1x2: this run\n"


def test_side_by_side_host_dry_run_takes_each_workload_once(monkeypatch, tmp_path, capsys):
    (tmp_path / "s.suite").write_text("2x2x2 hackbench 1 50\n1x1x2 hackbench 2 50\n")
    monkeypatch.setattr(host, "session", lambda *a, **kw: pytest.fail("a host run started"))
    rc = cli.main(["side-by-side", "--host", "--dry-run", "--suite-file",
                   str(tmp_path / "s.suite"), "--reps", "2"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "hackbench: levels 1 size 50 of its 2x2x2 line; its 1x1x2 line(s) left out" in out
    assert "side by side on this machine (host mode, the running kernel): eevdf, " in out
    n = 3 + len(peers.PEERS)     # eevdf, eevdf+steal, scx_idlesteal and the peers
    assert f"{2 * n} loads, {4 * n} runs: hackbench 1" in out


def test_the_cli_dumps_its_stack_on_sigusr1(capfd):
    """`kill -USR1` on a run that seems stuck (docs/host.md): main() has
    Python's faulthandler print every thread's stack on that signal."""
    import faulthandler
    import signal
    faulthandler.unregister(signal.SIGUSR1)
    assert cli.main(["presets"]) == 0
    assert faulthandler.unregister(signal.SIGUSR1), "SIGUSR1 not registered by main()"
