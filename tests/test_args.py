"""Every option of every command, fed bad values: exit status 2, one line
that names the option, the value and what is allowed, nothing fetched,
built, booted or written.

The parser is walked (argparse's actions of every subcommand), so a new
option without a row in TABLE fails test_every_option_has_a_row: give it
its bad values, or FLAG for a flag (fed `--flag=yes`), or NoBad("why no
value can be wrong").
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from idlesteal.commands import args, needs
from idlesteal.runs import asym, bench, collect, host, hostsbs, kernels, sidebyside, stress, suite
from idlesteal.kernel import build, package, source, tree
from idlesteal import cli, paths
from idlesteal.guest import image, vm
from idlesteal.scx import peers, upstream, own as scx


@dataclass(frozen=True)
class Bad:
    """A bad value; `also`: arguments it goes with (before it on the line)."""
    value: str
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class NoBad:
    why: str


FLAG = "flag"      # a flag: `--flag=yes` is the bad input

# Value sets; {file}, {exe} (an executable file), {dir}, {suite1}, {bad_suite}, {summary}, {run},
# {bad_run} are files and directories the test makes (sandbox()).
INT = ["-1", "0", "99999999999", "", "x", "1.5", "1e3"]
INT0 = ["-1", "99999999999", "", "x", "1.5"]          # 0 means something
SECONDS = ["-1", "0", "1e9", "", "nan", "inf", "x"]
MS = ["-1", "1e9", "", "nan", "x"]
NAME = ["", "a/b", "..", "../../x", ".hidden", "-x", "a b", "/abs", "x" * 101]
OUTDIR = ["", "{file}", "{file}/sub"]
FILE = ["", "/nonexistent/x", "{dir}"]
LEVELS = ["0", "-1", "", "1,,2", "1,1", "99999", "x", "1.5", "1;2"]
FEATURES = ["", "FOO", "no-steal", "NO_FOO", "STEAL,NO_STEAL", "../STEAL", "STEAL/x"]
VARIANT = ["", "nope", "../steal", "steal/x"]
PRESET = ["", "nope", "../2x2x2", "2x2x2,2x2x2"]
FILE_SPEC = ["", "/nonexistent/x", "{file}:relative/x", "{file}:/proc/x", "{file}:/a/../b",
             "{file}:/"]
CMDLINE = ["a\nb", "x" * 3000]
TEXT = ["a\nb", "x" * 5000]
SUITE_FILE = ["", "/nonexistent/x", "{dir}", "{bad_suite}"]
SUMMARY = ["", "/nonexistent/x", "{file}", "{dir}", "HEAD:nonexistent/summary.json"]


def bad(values: list[str], *also: str) -> list[Bad]:
    return [Bad(v, tuple(also)) for v in values]


TABLE: dict[tuple[str, str], list[Bad] | NoBad | str] = {
    ("prepare", "--force"): FLAG,
    ("kernel", "--variant"): bad(VARIANT),
    ("kernel", "--force"): FLAG,
    ("kernel", "--no-prepare"): FLAG,
    ("kernel", "-v"): FLAG,
    ("scx", "--sched"): bad(["", "nope", "scx_simple,scx_simple", "eevdf", "../scx_simple"]),
    ("scx", "--no-kernel"): FLAG,
    ("scx", "--no-prepare"): FLAG,
    ("scx", "-v"): FLAG,
    ("scx-upstream", "--tree"): bad(["", "/nonexistent/x", "{file}", "{dir}"]),
    ("scx-upstream", "--out"): bad(OUTDIR),
    ("scx-upstream", "--no-check"): FLAG,
    ("side-by-side", "--sched"): bad(["", "eevdf", "nope,eevdf", "eevdf,eevdf", "eevdf,a/b",
                                      "eevdf,mine", "eevdf,Mine"]),
    ("side-by-side", "--contender"): bad(["", "x", "=STEAL", "eevdf=STEAL", "scx_p2dq=STEAL",
                                          "a/b=STEAL", "X=STEAL", ".x=STEAL", "-x=STEAL",
                                          "x" * 41 + "=STEAL", "x=", "x=steal", "x=STEAL,",
                                          "x=STEAL,,NI_STEAL", "x=STEAL,NO_STEAL",
                                          "x=STEAL, NI_STEAL", "x=NO_", "x=1STEAL"])
    + bad(["x=STEAL"], "--contender=x=NO_STEAL") + bad(["x=STEAL"], "--host"),
    ("side-by-side", "--idlesteal-build"): bad(["", "x", "{exe}", "scx_idlesteal.a=",
                                                "scx_idlesteal.a=/nonexistent/x",
                                                "scx_idlesteal.a={dir}", "scx_idlesteal.a={file}",
                                                "scx_idlesteal={exe}", "scx_idlesteal-nokick={exe}",
                                                "perf={exe}", "mine={exe}", "scx_idlesteal.={exe}",
                                                "scx_idlesteal.A={exe}", "scx_idlesteal.a/b={exe}",
                                                "scx_idlesteal.a b={exe}",
                                                "scx_idlesteal." + "x" * 27 + "={exe}"])
    + bad(["scx_idlesteal.a={exe}"], "--idlesteal-build=scx_idlesteal.a={exe}")
    + bad(["scx_idlesteal.a={exe}"], "--contender=scx_idlesteal.a=STEAL")
    + bad(["scx_idlesteal.a={exe}"], "--host"),
    ("side-by-side", "--variant"): bad(VARIANT) + bad(["steal"])
    + bad(["steal"], "--sched=eevdf,scx_simple") + bad(["steal"], "--host"),
    ("side-by-side", "--suite-file"): bad(SUITE_FILE),
    ("side-by-side", "--presets"): bad(PRESET) + bad(["2x2x2"], "--suite-file={suite1}"),
    ("side-by-side", "--workloads"): bad(["", "a/b", "..", "nope", "hackbench,hackbench"]),
    ("side-by-side", "--reps"): bad(INT + ["1"]),
    ("side-by-side", "--outdir"): bad(OUTDIR),
    ("side-by-side", "--no-build"): FLAG,
    ("side-by-side", "--dry-run"): FLAG,
    ("side-by-side", "--no-waste"): FLAG,
    ("side-by-side", "-v"): FLAG,
    ("side-by-side", "--host"): FLAG,
    ("side-by-side", "--max-load"): bad(["-1", "2", "nan", "inf", "", "x"], "--host")
    + bad(["0.5"]),
    ("side-by-side", "--force-load"): FLAG,
    ("side-by-side", "--stage"): FLAG,
    ("check-series", "--variant"): bad(VARIANT),
    ("check-series", "-v"): FLAG,
    ("package", "--config"): bad(FILE),
    ("package", "--debian-config"): bad(NAME),
    ("package", "--lsmod"): bad(FILE, "--debian-config"),
    ("package", "--format"): bad(["", "tar", "DEB"], "--debian-config"),
    ("package", "-v"): FLAG,
    ("image", "--arch"): bad(["", "x", "riscv64"]),
    ("image", "--file"): bad(FILE_SPEC),
    ("boot", "--variant"): bad(VARIANT),
    ("boot", "--preset"): bad(PRESET + ["2x2x2,2node"]),
    ("boot", "--no-build"): FLAG,
    ("boot", "--force"): FLAG,
    ("boot", "--append"): bad(CMDLINE),
    ("boot", "--cmd"): NoBad("any text is a shell script for the guest (--cmd with --script "
                             "is a row of --script)"),
    ("boot", "--script"): bad(FILE) + bad(["{file}"], "--cmd=true"),
    ("boot", "--tools"): bad(["nope", "perf,perf", ",", "../perf"]),
    ("boot", "--file"): bad(FILE_SPEC),
    ("boot", "--timeout"): bad(SECONDS),
    ("bench", "--variant"): bad(VARIANT) + bad(["base"], "--host"),
    ("bench", "--preset"): bad(PRESET) + bad(["1x1x2"], "--host"),
    ("bench", "--no-build"): FLAG,
    ("bench", "--force"): FLAG,
    ("bench", "--append"): bad(CMDLINE) + bad(["quiet"], "--host"),
    ("bench", "--workload"): bad(["", "nope", "../x", "a/b", ".x"])
    + bad(["hackbench"], "--command=prog {level}", "--metric=(\\d+)"),
    ("bench", "--command"): bad(["", "prog -n 4", "'unclosed {level}", "a\tb {level}"],
                                "--metric=(\\d+)") + bad(["prog {level}"]),
    ("bench", "--metric"): bad(["", "(", "no group"]) + bad(["x (\\d+)"]),
    ("bench", "--higher-better"): FLAG,
    ("bench", "--unit"): bad(["", "a b", "x" * 40], "--command=p {level}", "--metric=(\\d+)")
    + bad(["us"]),
    ("bench", "--levels"): bad(LEVELS),
    ("bench", "--size"): bad(INT),
    ("bench", "--reps"): bad(INT),
    ("bench", "--a"): bad(FEATURES),
    ("bench", "--b"): bad(FEATURES),
    ("bench", "--warmup"): bad(INT0),
    ("bench", "--no-alternate"): FLAG,
    ("bench", "--waste"): bad(["", "AB", "on", "a", "both,A", "../off"]),
    ("bench", "--dry-run"): FLAG,
    ("bench", "--outdir"): bad(OUTDIR),
    ("bench", "--file"): bad(FILE_SPEC),
    ("bench", "--extra-args"): bad(TEXT),
    ("bench", "--name"): bad(NAME),
    ("bench", "--timeout"): bad(SECONDS),
    ("bench", "--host"): FLAG,
    ("bench", "--max-load"): bad(["-1", "2", "nan", "inf", "", "x"], "--host") + bad(["0.5"]),
    ("bench", "--force-load"): FLAG,
    ("bench", "--lock-stat"): FLAG,
    ("bench", "--stage"): FLAG,
    ("suite", "--variant"): bad(VARIANT) + bad(["base"], "--host"),
    ("suite", "--no-build"): FLAG,
    ("suite", "--force"): FLAG,
    ("suite", "--append"): bad(CMDLINE) + bad(["quiet"], "--host"),
    ("suite", "--suite-file"): bad(SUITE_FILE),
    ("suite", "--presets"): bad(PRESET) + bad(["2x2x2"], "--suite-file={suite1}")
    + bad(["2x2x2"], "--summary-only", "--suite-file={suite1}") + bad(["2x2x2"], "--host"),
    ("suite", "--workloads"): bad(["", "a/b", "nope", "hackbench,hackbench"])
    + bad(["wakelat"], "--suite-file={suite1}"),
    ("suite", "--reps"): bad(INT),
    ("suite", "--a"): bad(FEATURES),
    ("suite", "--b"): bad(FEATURES),
    ("suite", "--warmup"): bad(INT0),
    ("suite", "--no-alternate"): FLAG,
    ("suite", "--waste"): bad(["", "AB", "on", "a", "both,A", "../off"]),
    ("suite", "--dry-run"): FLAG,
    ("suite", "--outdir"): bad(OUTDIR),
    ("suite", "--file"): bad(FILE_SPEC),
    ("suite", "--extra-args"): bad(TEXT),
    ("suite", "--summary-only"): FLAG,
    ("suite", "--resume"): FLAG,
    ("suite", "--delay-dequeue"): bad(["", "on", "OFF", "both,off"], "--host") + bad(["off"])
    + bad(["off"], "--host", "--a=NO_STEAL,NO_DELAY_DEQUEUE"),
    ("suite", "--host"): FLAG,
    ("suite", "--max-load"): bad(["-1", "2", "nan", "inf", "", "x"], "--host") + bad(["0.5"]),
    ("suite", "--force-load"): FLAG,
    ("kernels", "--preset"): bad(PRESET),
    ("kernels", "--no-build"): FLAG,
    ("kernels", "--force"): FLAG,
    ("kernels", "--append"): bad(CMDLINE),
    ("kernels", "--variants"): bad(["", "steal", "steal,nope", "steal,steal",
                                    "steal,base,debug", "../steal,base"]),
    ("kernels", "--workload"): bad(["", "nope", "custom", "../hackbench"]),
    ("kernels", "--level"): bad(INT),
    ("kernels", "--size"): bad(INT),
    ("kernels", "--boots"): bad(INT + ["1"]),
    ("kernels", "--runs"): bad(INT),
    ("kernels", "--timeout"): bad(SECONDS),
    ("kernels", "--name"): bad(NAME),
    ("kernels", "--outdir"): bad(OUTDIR),
    ("stress", "--variant"): bad(VARIANT),
    ("stress", "--no-build"): FLAG,
    ("stress", "--force"): FLAG,
    ("stress", "--append"): bad(CMDLINE),
    ("stress", "--preset"): bad(["", "1x1x2", "nope", "2x2x2,2x2x2", "2x2x2,", "../2node"]),
    ("stress", "--seconds"): bad(INT),
    ("stress", "--scx"): bad(["", "nope", "scx_p2dq", "'unclosed", "scx_idlesteal"]),
    ("stress", "--outdir"): bad(OUTDIR),
    ("stress", "--steal"): bad(["", "on", "OFF", "toggle,off", "../off"]),
    ("stress", "--repeat"): bad(INT),
    ("asym-boot", "--preset"): bad(["", "nope", "2x2x2", "../asym2b2l"]),
    ("asym-boot", "--no-build"): FLAG,
    ("asym-boot", "--force"): FLAG,
    ("asym-boot", "--threads"): bad(INT),
    ("asym-boot", "--rounds"): bad(INT),
    ("asym-boot", "--timeout"): bad(SECONDS),
    ("asym-boot", "--append"): bad(CMDLINE),
    ("asym-bench", "--preset"): bad(["", "nope", "2x2x2"]),
    ("asym-bench", "--no-build"): FLAG,
    ("asym-bench", "--force"): FLAG,
    ("asym-bench", "--threads"): bad(LEVELS) + bad(["2"], "--wakers"),
    ("asym-bench", "--rounds"): bad(INT),
    ("asym-bench", "--runs"): bad(INT),
    ("asym-bench", "--boots"): bad(INT),
    ("asym-bench", "--spin"): bad(MS + ["0"]),
    ("asym-bench", "--idle"): bad(MS),
    ("asym-bench", "--wakers"): FLAG,
    ("asym-bench", "--name"): bad(NAME),
    ("asym-bench", "--outdir"): bad(OUTDIR),
    ("collect", "run_dir"): bad(["", "/nonexistent/x", "{file}", "{dir}", "{bad_run}"]),
    ("collect", "--outdir"): bad(OUTDIR, "{run}"),
    ("compare", "old"): bad(SUMMARY),
    ("compare", "new"): bad(SUMMARY, "{summary}"),
    ("compare", "--old-name"): bad(NAME, "{summary}", "{summary}"),
    ("compare", "--new-name"): bad(NAME, "{summary}", "{summary}"),
    ("compare", "--out"): bad(["", "{dir}", "/nonexistent/dir/x", "{dir}/"],
                              "{summary}", "{summary}"),
    ("tables", "--check"): FLAG,
    ("tables", "--print"): bad(["", "nope", "../x"]),
}


def options() -> list[tuple[str, str, argparse.Action]]:
    """(command, first option string or positional name, action) of every
    argument of every subcommand."""
    p = cli.parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return [(name, act.option_strings[0] if act.option_strings else act.dest, act)
            for name, sp in sub.choices.items() for act in sp._actions
            if not isinstance(act, argparse._HelpAction)]


def test_every_option_has_a_row():
    have = {(c, o) for c, o, _ in options()}
    missing = sorted(have - TABLE.keys())
    stale = sorted(TABLE.keys() - have)
    assert not missing, f"options without bad inputs in {__file__} TABLE: {missing}"
    assert not stale, f"TABLE rows for options that no longer exist: {stale}"
    for c, o, act in options():
        row = TABLE[c, o]
        if row == FLAG:
            assert act.nargs == 0, f"{c} {o} is not a flag"
        elif isinstance(row, NoBad):
            assert act.nargs is None and row.why
        else:
            assert row, f"{c} {o}: no bad values"


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """Empty build, results and cache dirs (checked after every call), the
    working directory elsewhere, and every step that does work replaced by
    one that fails the test."""
    dirs = {k: tmp_path / k for k in ("build", "results", "cache", "cwd")}
    for d in dirs.values():
        d.mkdir()
    monkeypatch.setenv("IDLESTEAL_BUILD", str(dirs["build"]))
    monkeypatch.setenv("IDLESTEAL_RESULTS", str(dirs["results"]))
    monkeypatch.setenv("IDLESTEAL_CACHE", str(dirs["cache"]))
    monkeypatch.chdir(dirs["cwd"])
    fx = tmp_path / "fixtures"
    fx.mkdir()
    (fx / "file").write_text("x\n")
    (fx / "exe").write_text("#!/bin/sh\n")
    (fx / "exe").chmod(0o755)
    (fx / "dir").mkdir()
    (fx / "bad.suite").write_text("2x2x2 nope 1\n")
    (fx / "one.suite").write_text("1x1x2 hackbench 1 10\n")
    (fx / "summary.json").write_text(json.dumps({"rows": []}))
    for name, meta in (("run", '{"kind": "bench"}'), ("bad_run", "{}")):
        (fx / name).mkdir()
        (fx / name / vm.RUN_META).write_text(meta)
    subst = {"{file}": str(fx / "file"), "{exe}": str(fx / "exe"), "{dir}": str(fx / "dir"),
             "{bad_suite}": str(fx / "bad.suite"), "{suite1}": str(fx / "one.suite"),
             "{summary}": str(fx / "summary.json"), "{run}": str(fx / "run"),
             "{bad_run}": str(fx / "bad_run")}

    def work(what: str):
        def fail(*a, **kw):
            raise AssertionError(f"work started ({what}) for a bad argument")
        return fail
    for mod, names in ((source, ["fetch"]), (tree, ["prepare", "create_tree", "export"]),
                       (build, ["build", "check_series", "run_make"]),
                       (package, ["make_package", "debian_config"]),
                       (kernels, ["ensure", "ensure_guest", "compare"]),
                       (image, ["build_base", "compile_workloads"]), (vm, ["run_script"]),
                       (scx, ["build_schedulers"]), (peers, ["ensure"]),
                       (upstream, ["export", "check"]),
                       (asym, ["bench"]), (bench, ["run_ab"]), (sidebyside, ["run"]),
                       (stress, ["run"]), (collect, ["collect"]), (suite, ["write_summary"]),
                       (host, ["bench", "session", "suite"]), (hostsbs, ["side_by_side"])):
        for n in names:
            monkeypatch.setattr(mod, n, work(f"{mod.__name__}.{n}"))

    def fill(text: str) -> str:
        for k, v in subst.items():
            text = text.replace(k, v)
        return text
    return dirs, fill


def refused(argv: list[str], capsys) -> str:
    """Run the command line; it must exit 2 with one line on stderr."""
    try:
        rc = cli.main(argv)
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc == 2, f"{argv}: exit status {rc}, stderr {err!r}"
    assert len(lines) == 1 and out == "", f"{argv}: want one line, got {err!r} / {out!r}"
    return lines[0]


def cases() -> list[tuple[str, str, Bad]]:
    return [(c, o, b) for (c, o), row in TABLE.items() if isinstance(row, list) for b in row] \
        + [(c, o, Bad("yes")) for (c, o), row in TABLE.items() if row == FLAG]


@pytest.mark.parametrize("command,option,case", cases(),
                         ids=[f"{c} {o}={b.value[:20]!r}" for c, o, b in cases()])
def test_bad_value_is_refused_in_one_line(sandbox, capsys, command, option, case):
    dirs, fill = sandbox
    act = next(a for c, o, a in options() if (c, o) == (command, option))
    value = fill(case.value)
    also = [fill(x) for x in case.also]
    if act.option_strings:
        opt = max(act.option_strings, key=len)
        argv = [command, *also, f"{opt}={value}"]
    else:
        argv = [command, *also, value]
    line = refused(argv, capsys)
    assert line.startswith(f"idlesteal {command}: error: ")
    names = act.option_strings or [act.dest]
    assert any(n in line for n in names), f"the option is not named: {line}"
    assert repr(value) in line, f"the value {value!r} is not named: {line}"
    assert re.search(r"\(want |choose from", line), f"what is allowed is not said: {line}"
    for name, d in dirs.items():
        assert not any(d.iterdir()), f"{argv} wrote into the {name} dir: {list(d.iterdir())}"


@pytest.mark.parametrize("command", sorted({c for c, _, _ in options()} |
                                           {"fetch", "presets", "export"}))
def test_unknown_option_is_refused_in_one_line(sandbox, capsys, command):
    line = refused([command, "--nope=1"], capsys)
    assert "unrecognized arguments: --nope=1" in line or "arguments are required" in line


# ---------------------------------------------------------------- four bad arguments, for real

@pytest.mark.parametrize("argv,where", [
    (["bench", "--a", "FOO"], "argument --a: invalid value 'FOO'"),
    (["bench", "--size", "-1"], "argument --size/--loops: invalid value '-1'"),
    (["bench", "--timeout", "0"], "argument --timeout: invalid value '0'"),
    (["bench", "--name", "../../x"], "argument --name: invalid value '../../x'"),
])
def test_python_m_idlesteal_refuses_before_any_build(tmp_path, argv, where):
    env = dict(os.environ, IDLESTEAL_BUILD=str(tmp_path / "build"),
               IDLESTEAL_RESULTS=str(tmp_path / "results"),
               IDLESTEAL_CACHE=str(tmp_path / "cache"))
    r = subprocess.run([needs.DEBIAN_PYTHON, "-m", "idlesteal", *argv], cwd=paths.REPO,
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and where in r.stderr and "(want " in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_summary_only_lists_as_not_run_only_the_presets_asked_for(tmp_path, capsys):
    """suite --summary-only --presets P: every result's rows, and
    "not run yet" names P's missing entries only."""
    f = tmp_path / "two.suite"
    f.write_text("1x1x2 hackbench 1 10\n2x2x2 hackbench 1 10\n2x2x2 wakelat 1 1\n")
    out = tmp_path / "out"
    base = ["suite", "--summary-only", f"--suite-file={f}", f"--outdir={out}"]
    assert cli.main([*base, "--presets=2x2x2"]) == 0
    text = (out / "summary.txt").read_text()
    assert "not run yet: 2x2x2-hackbench, 2x2x2-wakelat" in text and "1x1x2" not in text
    assert json.loads((out / "summary.json").read_text())["missing"] == \
        ["2x2x2-hackbench", "2x2x2-wakelat"]
    assert cli.main([*base, "--workloads=wakelat"]) == 0
    assert "not run yet: 2x2x2-wakelat\n" in (out / "summary.txt").read_text()
    assert cli.main(base) == 0
    assert "not run yet: 1x1x2-hackbench, 2x2x2-hackbench, 2x2x2-wakelat" in \
        (out / "summary.txt").read_text()
    capsys.readouterr()


def test_side_by_side_of_eevdf_contenders_on_a_kernel_without_sched_ext(capsys):
    argv = ["side-by-side", "--variant=steal", "--presets=2x2x2", "--dry-run",
            "--sched=eevdf,eevdf-noni_random,eevdf+ni_steal,eevdf+steal",
            "--contender=eevdf-noni_random=NO_STEAL,NO_NI_STEAL,NO_NI_RANDOM",
            "--contender=eevdf+ni_steal=NO_STEAL,NI_STEAL"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "eevdf, eevdf-noni_random, eevdf+ni_steal, eevdf+steal; kernel variant steal" in out


def test_side_by_side_of_two_builds_of_scx_idlesteal(sandbox, capsys, tmp_path):
    """--idlesteal-build: the dry run names it and does not build it."""
    exe = tmp_path / "v2"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    argv = ["side-by-side", "--presets=2x2x2", "--dry-run",
            f"--idlesteal-build=scx_idlesteal.v2={exe}",
            "--sched=eevdf,scx_idlesteal,scx_idlesteal.v2"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "eevdf, scx_idlesteal, scx_idlesteal.v2; kernel variant scx" in out
    assert "not built yet: scx_idlesteal (" in out


@pytest.mark.parametrize("argv,why", [
    (["bench", "--lock-stat"], "CONFIG_LOCK_STAT (--variant lockstat), not steal"),
    (["bench", "--variant=debug", "--lock-stat"], "CONFIG_LOCK_STAT (--variant lockstat)"),
    (["bench", "--host", "--lock-stat"], "no --lock-stat with --host"),
])
def test_lock_stat_is_refused_without_a_lock_stat_kernel(sandbox, capsys, argv, why):
    line = refused(argv, capsys)
    assert "argument --lock-stat: invalid value True" in line and why in line


@pytest.mark.parametrize("argv,why", [
    (["bench", "--host", "--stage"], "no --stage with --host"),
    (["side-by-side", "--host", "--stage"], "no --stage with --host"),
    (["side-by-side", "--stage", "--presets=2x2x2,1x1x2"], "one preset (--presets NAME)"),
])
def test_stage_is_one_guest_boot(sandbox, capsys, argv, why):
    line = refused(argv, capsys)
    assert "argument --stage: invalid value True" in line and why in line


def test_lock_stat_on_the_lockstat_variant_plans(sandbox, capsys):
    assert cli.main(["bench", "--variant=lockstat", "--lock-stat", "--dry-run"]) == 0
    assert "/proc/lock_stat around each run" in capsys.readouterr().out


# ---------------------------------------------------------------- the interpreter

def test_an_interpreter_without_matplotlib_is_stopped_with_the_command_that_works(tmp_path):
    """Debian's python3 without site-packages (-S) but with scipy and numpy
    on the path: what a pyenv python3 with scipy and no matplotlib is."""
    shim = tmp_path / "shim"
    shim.mkdir()
    for m in ("scipy", "numpy"):
        spec = __import__("importlib").util.find_spec(m)
        (shim / m).symlink_to(Path(spec.origin).parent)
    env = dict(os.environ, PYTHONPATH=str(shim), IDLESTEAL_BUILD=str(tmp_path / "build"),
               IDLESTEAL_RESULTS=str(tmp_path / "results"))
    r = subprocess.run([needs.DEBIAN_PYTHON, "-S", "-m", "idlesteal", "bench", "--preset",
                        "1x1x2"], cwd=paths.REPO, env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert "cannot import matplotlib" in line and "scipy" not in line.split(";")[0]
    assert "/usr/bin/python3 -m idlesteal bench --preset 1x1x2" in line
    assert "python3-matplotlib" in line and "make deps" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shim"]
    # a dry run draws nothing: it runs
    r = subprocess.run([needs.DEBIAN_PYTHON, "-S", "-m", "idlesteal", "bench", "--dry-run"],
                       cwd=paths.REPO, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("plan: ")


def test_needs_per_command():
    nothing = lambda m: False          # noqa: E731
    p = needs.problem("side-by-side", ["side-by-side"], executable="/opt/py/bin/python3",
                      importable=nothing)
    assert p is not None and "/opt/py/bin/python3 cannot import scipy" in p
    assert "/usr/bin/python3 -m idlesteal side-by-side" in p and "\n" not in p
    assert "python3-scipy python3-matplotlib" in p
    assert needs.problem("presets", ["presets"], importable=nothing) is None
    assert needs.problem("bench", ["bench"], computes=False, importable=nothing) is None
    assert needs.problem("bench", ["bench"]) is None        # this interpreter has them
    assert set(needs.COMMANDS) <= {c for c, _, _ in options()}


# ---------------------------------------------------------------- sched features

def test_series_features_are_read_from_the_patches():
    added, removed = args.series_features(args.series_texts(paths.patches_dir()))
    assert "STEAL" in added and not removed
    known = args.known_features()
    assert known[:len(args.FEATURES_72)] == args.FEATURES_72
    assert known[len(args.FEATURES_72):] == ("STEAL", "STEAL_HOT", "STEAL_KICK")
    added, removed = args.series_features(["+SCHED_FEAT(A, true)\n-SCHED_FEAT(B, true)\n",
                                           "-SCHED_FEAT(A, true)\n"])
    assert (added, removed) == ([], ["B"])


def test_feature_words_with_no_prefix():
    assert args.features("NO_STEAL NO_DELAY_DEQUEUE") == ("NO_STEAL", "NO_DELAY_DEQUEUE")
    assert args.features("STEAL,NI_RANDOM") == ("STEAL", "NI_RANDOM")
    assert args.features("NO_STEAL, NI_RANDOM") == ("NO_STEAL", "NI_RANDOM")
    for text in ("NO_NO_STEAL", "STEAL NO_STEAL", "steal", "", "steal; rm -rf /"):
        with pytest.raises(argparse.ArgumentTypeError):
            args.features(text)


def tree_features_h() -> Path:
    return paths.tree_dir() / "kernel" / "sched" / "features.h"


@pytest.mark.skipif(not tree_features_h().exists(),
                    reason="no kernel tree (build/linux/kernel/sched/features.h): "
                    "`make prepare` makes it")
def test_feature_table_matches_the_kernel_tree():
    tree_names = args.features_in(tree_features_h().read_text())
    assert sorted(tree_names) == sorted(args.known_features()), \
        "idlesteal/commands/args.py FEATURES_72 (+ the series') differs from the tree's features.h"
    base = subprocess.run(["git", "-C", str(paths.tree_dir()), "show",
                           "base:kernel/sched/features.h"], capture_output=True, text=True)
    if base.returncode == 0:          # mainline's own, before the series
        assert sorted(args.features_in(base.stdout)) == sorted(args.FEATURES_72)


# ---------------------------------------------------------------- the checkers themselves

def test_names_are_never_paths():
    for good in ("x", "2x2x2-hackbench", "a.b_c-1", "_x"):
        assert args.name(good) == good
    for b in NAME:
        with pytest.raises(argparse.ArgumentTypeError):
            args.name(b)


def test_numbers_have_ranges():
    assert args.size("5") == 5 and args.levels("1,2,4") == [1, 2, 4]
    assert args.seconds("0.5") == 0.5 and args.warmup("0") == 0 and args.idle_ms("0") == 0
    for text in INT:
        with pytest.raises(argparse.ArgumentTypeError):
            args.size(text)
    for text in SECONDS:
        with pytest.raises(argparse.ArgumentTypeError):
            args.seconds(text)
