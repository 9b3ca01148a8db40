"""The suite command: the benchmark suite of a suite file (default
configs/bench.suite), one A/B boot per entry that --presets and
--workloads pick, then results/summary.txt; with --host each workload of
the file (default configs/server.suite) once on this machine, its levels
counted on the machine, into a folder of the machine's own; with
--summary-only only the summary rebuilt from the results there.  Its
options (add_suite_opts), its check after parsing (check_suite: the file,
the filters, the host options, the specs of the entries) and the run
(cmd_suite).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from ..runs import bench, host, kernels, suite
from .. import paths
from ..report import estimate, hosttables
from ..report.tables import TableError
from ..guest import image, topology
from . import args, common, opts
from .args import UsageError
from ..util import HarnessError, Stopwatch, log


def add_suite_opts(sp: argparse.ArgumentParser) -> None:
    opts.guest(sp, preset=False)
    sp.add_argument("--suite-file", type=args.existing_file,
                    help="suite file (default configs/bench.suite; with --host "
                         "configs/server.suite)")
    opts.filters(sp)
    opts.ab(sp, reps=5, out=None, out_help=f"where the results go (default "
            f"{paths.results_dir()}; with --host its host-<machine name>/)")
    sp.add_argument("--extra-args", default="", type=args.line,
                    help="extra arguments for every command")
    sp.add_argument("--summary-only", action="store_true",
                    help="only rebuild results/summary.txt from the results there")
    sp.add_argument("--resume", action="store_true",
                    help="with --host: keep the entries an interrupted run already wrote "
                         "(same kernel, workload, levels, size and repetitions)")
    sp.add_argument("--delay-dequeue", default="booted", choices=DD_CHOICES,
                    help="with --host: DELAY_DEQUEUE as booted (default), off on both sides "
                         "(NO_DELAY_DEQUEUE), or both: the suite as booted, then again with "
                         f"it off into <outdir>/{NO_DD_DIR}/")
    opts.host_options(sp)


DD_CHOICES = ("booted", "off", "both")
NO_DD = "NO_DELAY_DEQUEUE"
NO_DD_DIR = "no-delay-dequeue"


@dataclass
class HostPass:
    """One pass of suite --host: its folder, the entries to run there (with
    the pass's features added to both sides) and those kept (--resume)."""
    label: str
    outdir: Path
    specs: list
    kept: list


def _with_words(s: "bench.BenchSpec", words: tuple[str, ...]) -> "bench.BenchSpec":
    """`s` with `words` added to both sides' features."""
    if not words:
        return s
    clash = {w.removeprefix("NO_") for w in (*s.a.features, *s.b.features)} & \
        {w.removeprefix("NO_") for w in words}
    if clash:
        raise UsageError("--delay-dequeue", "off", f"booted when --a/--b set "
                         f"{', '.join(sorted(clash))} themselves")
    return dataclasses.replace(s, a=dataclasses.replace(s.a, features=(*s.a.features, *words)),
                               b=dataclasses.replace(s.b, features=(*s.b.features, *words)))


def check_suite(a: argparse.Namespace) -> None:
    path, a.entries = common.load_suite(a, suite.default_file(a.host))
    if a.host and a.presets:
        raise UsageError("--presets", ",".join(a.presets), "no --presets with --host: a preset "
                         "is a guest's topology; the host runs each workload of the suite file "
                         "once on its own CPUs (--workloads picks them)")
    common.check_host(a, (("--variant", a.variant, a.variant != "steal"),
                          ("--append", a.append, bool(a.append)), ("--force", True, a.force)))
    if a.delay_dequeue != "booted" and not a.host:
        raise UsageError("--delay-dequeue", a.delay_dequeue, "only with --host (a guest "
                         "suite's DELAY_DEQUEUE A/B: make bench-dd)")
    if a.resume and not a.host:
        raise UsageError("--resume", True, "only with --host (a guest suite reruns what it is "
                         "asked; --workloads picks the entries)")
    if a.outdir is None:
        a.outdir = str(suite.host_dir() if a.host else paths.results_dir())
    if a.host:
        return _check_suite_host(a, path)
    a.entries = common.guest_entries(path, a.entries)
    if a.summary_only:      # "not run yet" lists only what --presets/--workloads pick
        a.selected = common.select(a, path, a.entries) if a.presets or a.workloads \
            else a.entries
        return
    a.specs = []
    for e in common.select(a, path, a.entries):
        with common.arg("--suite-file", str(path), f"entry {e.name}"):
            a.specs.append((e, topology.get(e.preset), common.spec(
                a, e.workload, e.levels, e.size, e.custom, e.files + tuple(a.file))))
    common.tools_present(a, sorted({s.wl.binary for _, _, s in a.specs
                                    if s.wl.binary in image.TOOLS}))


def _check_suite_host(a: argparse.Namespace, path: Path) -> None:
    """suite --host: one entry per workload of the file (suite.host_entries())."""
    a.explicit_ab = a.a is not None or a.b is not None
    a.entries, a.left_out = suite.host_entries(a.entries, common.host_machine())
    a.selected = common.select(a, path, a.entries) if a.workloads else a.entries
    specs = [(e, None, common.spec(a, e.workload, e.levels, e.size, e.custom,
                                   e.files + tuple(a.file))) for e in a.selected]
    out = Path(a.outdir)
    Pass = tuple[str, Path, tuple[str, ...]]
    booted: Pass = ("DELAY_DEQUEUE as booted", out, ())
    off: Pass = (f"{NO_DD} on both sides", out / NO_DD_DIR if a.delay_dequeue == "both" else out,
           (NO_DD,))
    passes = {"booted": [booted], "off": [off], "both": [booted, off]}[a.delay_dequeue]
    a.passes = []
    for label, folder, words in passes:
        hp = HostPass(label, folder, [], [])
        for e, p, s in specs:
            s = _with_words(s, words)
            done = a.resume and done_before(folder / f"{e.name}.json", s, platform.release())
            (hp.kept if done else hp.specs).append((e, p, s))
        a.passes.append(hp)


def done_before(path: Path, s: "bench.BenchSpec", kernel: str) -> bool:
    """Did an earlier run write `path` for this spec, on this kernel, whole?"""
    try:
        data = json.loads(path.read_text())
        m = data["meta"]
        w = m["workload"]
        hm = m["host_mode"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    # an A/A (a kernel without the series) keeps only the words both sides share
    shared = [f for f in s.a.features if f in s.b.features]
    return (hm.get("offer", {}).get("kernel") == kernel and w.get("name") == s.workload
            and w.get(s.wl.size_name) == s.size and w.get(s.wl.level) == s.levels
            and w.get("extra_args") == s.extra_args and m.get("reps") == s.reps
            and m.get("A") in (list(s.a.features), shared)
            and m.get("B") in (list(s.b.features), shared)
            and len(data.get("runs", [])) >= len(bench.plan(s)))


def _summary_of(entries: list[suite.Entry], selected: list[suite.Entry], outdir: Path
                ) -> tuple[str, Path, Path]:
    """suite.write_summary() of every entry's results, with "not run yet"
    naming only the `selected` entries' missing ones."""
    if selected == entries:
        return suite.write_summary(entries, outdir)
    rows, _ = suite.summary_rows(entries, outdir)
    _, missing = suite.summary_rows(selected, outdir)
    text = suite.summary_table(rows, missing)
    txt, js = outdir / "summary.txt", outdir / "summary.json"
    outdir.mkdir(parents=True, exist_ok=True)
    txt.write_text(text)
    js.write_text(json.dumps({"rows": rows, "missing": missing}, indent=2) + "\n")
    return text, txt, js


def _suite_host(a: argparse.Namespace) -> int:
    """suite --host: the file's workloads on this machine (host.suite(),
    docs/host.md), once per DELAY_DEQUEUE pass."""
    if not a.summary_only:
        runs = sum(len(bench.plan(s)) for hp in a.passes for _, _, s in hp.specs)
        secs = sum(estimate.est_seconds(e.name, "host", len(bench.plan(s)), hp.outdir)[0]
                   for hp in a.passes for e, _, s in hp.specs)
        n = sum(len(hp.specs) for hp in a.passes)
        print(f"suite --host: {n} entr{'y' if n == 1 else 'ies'} on this machine (the running "
              f"kernel), {runs} runs, ~{estimate.fmt_duration(secs)}; results in "
              f"{', '.join(str(hp.outdir) for hp in a.passes)}")
        for line in a.left_out:
            print(f"  {line}")
    rc = 0
    for hp in a.passes:
        rc = max(rc, _host_pass(a, hp, len(a.passes) > 1))
    return rc


def _host_pass(a: argparse.Namespace, hp: HostPass, named: bool) -> int:
    outdir = hp.outdir
    meta = {"mode": "host", "machine": platform.node(), "kernel": platform.release(),
            "suite_file": str(a.suite_file or suite.default_file(True)), "left_out": a.left_out,
            "delay_dequeue": hp.label}
    if named:
        print(f"suite --host, {hp.label}: {len(hp.specs)} entries, results in {outdir}")
    res = None
    if not a.summary_only:
        for e, _, _ in hp.kept:
            print(f"  {e.name}: kept, written by an earlier run ({outdir / (e.name + '.json')})")
        if a.dry_run:
            for e, _, s in hp.specs:
                missing = host.program_missing(s, host.paths_of_files(s.files))
                print(f"  {e.name}: {len(bench.plan(s))} runs of {s.wl.name} {s.wl.level} "
                      f"{','.join(map(str, s.levels))} {s.wl.size_name} {s.size}, A = "
                      f"{s.a.name}, B = {s.b.name} if the kernel has them"
                      + (f"; would be skipped: {missing}" if missing else ""))
            return 0
        res = host.suite([(e.name, s) for e, _, s in hp.specs], outdir,
                         explicit_ab=a.explicit_ab, max_load=host.DEFAULT_MAX_LOAD
                         if a.max_load is None else a.max_load, force_load=a.force_load,
                         show=common.show)
        if res.stopped and not res.done and not res.failed:
            raise HarnessError(res.stopped)
        meta.update(skipped=[f"{n}: {w}" for n, w in res.skipped], stopped=res.stopped,
                    failed=[n for n, _ in res.failed])
    text, txt, _ = suite.write_summary(a.entries, outdir, meta, a.selected)
    print(text, end="")
    print(f"wrote {txt}")
    try:
        print(f"wrote {hosttables.write(outdir)} (the cover letter's tables)")
    except TableError as err:
        print(f"no {hosttables.NAME}: {err}", file=sys.stderr)
    if res is not None and (res.stopped or res.failed):
        print(f"idlesteal suite: error: {res.stopped}" if res.stopped else
              f"{len(res.failed)} suite entr{'y' if len(res.failed) == 1 else 'ies'} failed: "
              f"{', '.join(n for n, _ in res.failed)}", file=sys.stderr)
        return 1
    return 0


def cmd_suite(a: argparse.Namespace) -> int:
    if a.host:
        return _suite_host(a)
    outdir = Path(a.outdir)
    if a.summary_only:
        text, txt, _ = _summary_of(a.entries, a.selected, outdir)
        print(text, end="")
        print(f"wrote {txt}")
        return 0
    specs = a.specs
    plans = [common.plan_line(e.name, preset, spec, outdir) for e, preset, spec in specs]
    total_est = sum(s for s, _ in plans)
    header = (f"suite: {len(specs)} entr{'y' if len(specs) == 1 else 'ies'}, "
              f"{len(specs)} boots, {sum(len(bench.plan(s)) for _, _, s in specs)} runs, "
              f"~{estimate.fmt_duration(total_est)} (kernel build not included)")
    if a.dry_run:
        print(header)
        for i, (_, line) in enumerate(plans, 1):
            print(f"  {i:2d}. {line}")
        return 0
    log(header)
    kernel = kernels.ensure(a.variant, a.build, a.force)
    failed = []
    sw = Stopwatch()
    spent_est = 0.0
    for i, ((e, preset, spec), (est, _)) in enumerate(zip(specs, plans), 1):
        log(f"suite entry {i}/{len(specs)}: {e.name}")
        try:
            out = bench.run_ab(spec, preset, kernel, a.variant, e.name, outdir, a.append)
        except HarnessError as err:   # keep going: one broken entry must not lose the rest
            log(f"suite entry {e.name} FAILED: {err}")
            failed.append(e.name)
        else:
            print(f"== {e.name}\n{out['table']}", end="", flush=True)
        spent_est += est
        left = (total_est - spent_est) * (sw.elapsed() / spent_est if spent_est else 1.0)
        log(f"suite: {i}/{len(specs)} done, {len(failed)} failed, "
            f"{estimate.fmt_duration(sw.elapsed())} elapsed, ~{estimate.fmt_duration(left)} left")
    text, txt, _ = suite.write_summary(a.entries, outdir)
    print(text, end="")
    print(f"wrote {txt}")
    if failed:
        print(f"{len(failed)} suite entr{'y' if len(failed) == 1 else 'ies'} failed: "
              f"{', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
