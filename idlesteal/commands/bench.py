"""The commands that measure one thing and the ones that read results back:
bench (an A/B sweep of a workload in one boot, or on this machine with
--host), kernels (one command on two kernel variants, alternating boots),
collect (a kept run directory re-read into results) and compare (two suite
summaries side by side).  Each has its add_*_opts(), its check_*() where a
value depends on another option or on a file, and its cmd_*(); the
benchmark suite is commands/suite.py.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from ..runs import bench, collect, host, kernels
from .. import paths
from ..report import compare, estimate, generated, tables
from ..guest import image, topology
from ..kernel import tree
from ..measure import workload
from . import args, common, opts
from .args import UsageError
from ..util import log


# ---------------------------------------------------------------- bench

def add_bench_opts(sp: argparse.ArgumentParser) -> None:
    opts.guest(sp)
    sp.add_argument("--workload", default=None, type=args.name,
                    help=f"one of: {', '.join(workload.WORKLOADS)} (default hackbench); "
                    "with --command, the name of your own (default custom)")
    sp.add_argument("--command", dest="command_template", default=None, type=args.template,
                    help="your own workload: a command template with {level} (and "
                    "optionally {size}), e.g. 'mybench -t {level} -n {size}'")
    sp.add_argument("--metric", default=None, type=args.regex,
                    help="with --command: regular expression whose first group is the metric")
    sp.add_argument("--higher-better", action="store_true",
                    help="with --command: a higher metric is better (default: lower)")
    sp.add_argument("--unit", default=None, type=args.word,
                    help="with --command: the metric's unit")
    sp.add_argument("--levels", "--groups", default="1,2,4", type=args.levels,
                    help="comma-separated load levels (hackbench/perf groups, sysbench "
                    f"threads, wakelat messengers, {{level}} of --command; 1 to {args.MAX_LEVEL})")
    sp.add_argument("--size", "--loops", type=args.size, default=None,
                    help="work per run (hackbench/perf loops, sysbench events or locks, "
                    "wakelat seconds, {size} of --command); default: the workload's")
    opts.ab(sp, reps=3, out=paths.results_dir())
    sp.add_argument("--extra-args", "--hackbench-args", default="", type=args.line,
                    help="extra arguments for the workload's command")
    sp.add_argument("--name", type=args.name,
                    help="results/<name>.{json,txt,png} (letters, digits, . _ -)")
    sp.add_argument("--lock-stat", action="store_true",
                    help="/proc/lock_stat's run queue lock over each run (contentions, "
                    "wait and hold time, sites; a variant with CONFIG_LOCK_STAT: lockstat)")
    opts.timeout(sp, None, "guest timeout (default: 120 + 240 per run)")
    opts.stage_option(sp)
    opts.host_options(sp)


def _workload(a: argparse.Namespace) -> tuple[str, dict | None]:
    """(workload name, custom definition or None) from --workload and, for
    your own program, --command/--metric/--higher-better/--unit."""
    if a.command_template is not None:
        name = a.workload or "custom"
        if name in workload.WORKLOADS:
            raise UsageError("--workload", name, "a name of your own for --command, not a "
                             "built-in workload's")
        if a.metric is None:
            raise UsageError("--command", a.command_template, "it with --metric REGEX, whose "
                             "first group is the number to compare")
        with common.arg("--command", a.command_template):
            w = workload.custom(name, a.command_template, a.metric, a.higher_better,
                                unit=a.unit or "", default_size=a.size or 1)
        return w.name, w.to_json()
    for option, value in (("--metric", a.metric), ("--unit", a.unit),
                          ("--higher-better", True if a.higher_better else None)):
        if value is not None:
            raise UsageError(option, value, "it only with --command (your own program)")
    name = a.workload or "hackbench"
    if name not in workload.WORKLOADS:
        raise UsageError("--workload", name, f"one of {', '.join(workload.WORKLOADS)}, or a "
                         "name of your own with --command")
    return name, None


def check_bench(a: argparse.Namespace) -> None:
    common.check_host(a, (("--preset", a.preset, a.preset != "2x2x2"),
                          ("--variant", a.variant, a.variant != "steal"),
                          ("--append", a.append, bool(a.append)), ("--force", True, a.force),
                          ("--lock-stat", True, a.lock_stat), ("--stage", True, a.stage)))
    if a.lock_stat and not common.fragments_set(a.variant, "CONFIG_LOCK_STAT"):
        raise UsageError("--lock-stat", True, f"it with a kernel variant that has "
                         f"CONFIG_LOCK_STAT (--variant lockstat), not {a.variant}")
    a.explicit_ab = a.a is not None or a.b is not None
    wname, custom = _workload(a)
    a.spec = common.spec(a, wname, a.levels, a.size, custom, tuple(a.file))
    a.spec.lock_stat = a.lock_stat
    w = a.spec.wl
    if not a.host:      # the host's own programs: `command -v` in the script says
        common.tools_present(a, [w.binary] if w.binary in image.TOOLS else [])
    if a.name is None:
        a.name = f"{time.strftime('%Y%m%d-%H%M%S')}-{'host' if a.host else a.preset}-" \
            f"{a.spec.workload}"


def _bench_host(a: argparse.Namespace) -> int:
    """bench --host: on this machine (idlesteal/runs/host/, docs/host.md)."""
    spec, outdir = a.spec, Path(a.outdir)
    if a.dry_run:
        runs = len(bench.plan(spec))
        secs, src = estimate.est_seconds(a.name, "host", runs, outdir)
        print(f"plan: {a.name}: this machine (host mode, the running kernel), {runs} runs "
              f"({spec.warmup} warm-up) of {spec.wl.name} {spec.wl.level} "
              f"{','.join(map(str, spec.levels))} {spec.wl.size_name} {spec.size}, "
              f"A = {spec.a.name}, B = {spec.b.name} if the kernel has them "
              f"(docs/host.md); ~{estimate.fmt_duration(secs)} ({src})")
        return 0
    out = host.bench(spec, a.name, outdir, explicit_ab=a.explicit_ab,
                     max_load=host.DEFAULT_MAX_LOAD if a.max_load is None else a.max_load,
                     force_load=a.force_load, timeout=a.timeout or 0, show=common.show)
    print(out["table"], end="")
    print(common.wrote(out))
    return 0


def cmd_bench(a: argparse.Namespace) -> int:
    if a.host:
        return _bench_host(a)
    preset = topology.get(a.preset)
    spec = a.spec
    outdir = Path(a.outdir)
    secs, line = common.plan_line(a.name, preset, spec, outdir)
    if a.dry_run:
        print(f"plan: {line}\n  kernel: variant {a.variant}"
              + (", prepared and built first if needed" if a.build else ", as built"))
        return 0
    log(f"plan: {line}")
    kernel = kernels.ensure(a.variant, a.build, a.force)
    if a.stage:
        return common.staged(lambda: bench.run_ab(spec, preset, kernel, a.variant, a.name,
                                                   outdir, a.append, a.timeout or 0))
    out = bench.run_ab(spec, preset, kernel, a.variant, a.name, outdir, a.append,
                       a.timeout or 0)
    print(out["table"], end="")
    print(common.wrote(out))
    return 0


# ---------------------------------------------------------------- kernels

def add_kernels_opts(sp: argparse.ArgumentParser) -> None:
    opts.guest(sp, one_variant=False)
    sp.add_argument("--variants", default="steal,reference", type=args.variants2,
                    help="two comma-separated variants (configs/variants)")
    sp.add_argument("--workload", default="hackbench", type=args.builtin_workload)
    sp.add_argument("--level", type=args.level, default=1, help="load level (e.g. hackbench -g)")
    sp.add_argument("--size", type=args.size, default=2000, help="work (e.g. hackbench -l)")
    sp.add_argument("--boots", type=args.boots2, default=3, help="boots (samples) per kernel")
    sp.add_argument("--runs", type=args.runs, default=1,
                    help="runs per boot; the boot's sample is their median (default 1)")
    opts.timeout(sp, 900, "guest timeout")
    sp.add_argument("--name", type=args.name, help="results/<name>.{txt,json}")
    opts.outdir(sp, paths.results_dir())


def check_kernels(a: argparse.Namespace) -> None:
    w = workload.get(a.workload)
    common.tools_present(a, [w.binary] if w.binary in image.TOOLS else [])


def cmd_kernels(a: argparse.Namespace) -> int:
    """Same command on two kernel variants, one boot per sample, alternating."""
    out = kernels.compare(a.variants, topology.get(a.preset), workload.get(a.workload),
                          a.level, a.size, a.boots, prepare=a.build, force=a.force,
                          timeout=a.timeout, name=a.name or "", outdir=Path(a.outdir),
                          runs=a.runs)
    print(out.text, end="")
    print(f"wrote {out.txt}")
    return 0


# ---------------------------------------------------------------- collect, compare

def add_collect_opts(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("run_dir", type=args.existing_dir,
                    help="build/runs/<id>/ of a bench (guest or --host) or stress run")
    opts.outdir(sp, None, "where the results go (default: where that kind of run writes them)")


def check_collect(a: argparse.Namespace) -> None:
    with common.arg("run_dir", a.run_dir,
                    "a kept run directory, build/runs/<id>/, with its run.json"):
        collect.read_meta(Path(a.run_dir))


def cmd_collect(a: argparse.Namespace) -> int:
    out = collect.collect(Path(a.run_dir), Path(a.outdir) if a.outdir else None)
    print(out.text, end="")
    print("wrote " + ", ".join(map(str, out.paths)))
    return 0 if out.passed else 1


def add_compare_opts(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("old", help="summary.json, results dir, or REV:path (git show), "
                    "e.g. HEAD:results/summary.json")
    sp.add_argument("new", nargs="?", default=str(paths.results_dir() / "summary.json"))
    sp.add_argument("--old-name", default="old", type=args.name)
    sp.add_argument("--new-name", default="new", type=args.name)
    sp.add_argument("--out", default=None, type=args.out_file,
                    help="also write the table to this file")


def check_compare(a: argparse.Namespace) -> None:
    a.rows = []
    for option, spec in (("old", a.old), ("new", a.new)):
        with common.arg(option, spec, "a suite's summary.json, a results directory or REV:path"):
            a.rows.append(compare.rows_by_key(compare.read_text(spec, paths.REPO), spec))


def cmd_compare(a: argparse.Namespace) -> int:
    text = compare.table(*compare.compare(*a.rows), old_name=a.old_name, new_name=a.new_name)
    print(text, end="")
    if a.out:
        Path(a.out).write_text(f"# idlesteal compare {a.old} {a.new}\n" + text)
        print(f"wrote {a.out}")
    return 0


def add_tables_opts(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--check", dest="check_only", action="store_true",
                    help="write nothing; exit 1 naming each table whose text in "
                    + " or ".join(generated.DOCUMENTS) + " differs from its data")
    sp.add_argument("--print", dest="show", metavar="NAME", default=None,
                    help="print one table (" + ", ".join(generated.TABLES) + ")")


def check_tables(a: argparse.Namespace) -> None:
    if a.show is not None and a.show not in generated.TABLES:
        raise UsageError("--print", a.show, "one of " + ", ".join(generated.TABLES))
    if a.show is not None and a.check_only:
        raise UsageError("--print", a.show, "no --check with it (one table printed, none checked)")


def cmd_tables(a: argparse.Namespace) -> int:
    root = paths.REPO
    if a.show:
        print(generated.build(a.show, root).text(), end="")
        return 0
    if a.check_only:
        bad = generated.stale(root)
        for s in bad:
            print(f"{s.document}: table {s.table} differs from its data "
                  f"(run `{tables.COMMAND}`)")
        if not bad:
            n = sum(len(v) for v in generated.marked(root).values())
            print(f"tables: the {n} generated tables match their data")
        return 1 if bad else 0
    for s in generated.write(root):
        print(f"wrote table {s.table} in {s.document}")
    if tree.refresh_cover(paths.patches_dir()):
        print(f"wrote the cover letter's text into {paths.patches_dir() / tree.COVER_LETTER}")
    print("tables: up to date")
    return 0
