"""The sched_ext commands (docs/scx.md): scx (build the scx kernel, our
sched_ext schedulers and the published peers), scx-upstream (scx_idlesteal
as a patch against a sched-ext/scx tree) and side-by-side (EEVDF with
and without STEAL against sched_ext schedulers and EEVDF ones of
--contender, one boot per preset of a suite file, or each workload of it
once on this machine with --host).  Their options (add_*_opts), the check
after parsing of side-by-side (the schedulers, the variant, the entries)
and the runs (cmd_*).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..runs import host, hostsbs, sidebyside, suite
from ..kernel import build, tree
from ..report import estimate
from ..guest import image
from ..scx import peers, upstream, own as scx
from . import args, common, needs, opts
from .args import UsageError
from ..util import HarnessError, log


# ---------------------------------------------------------------- scx

def add_scx_opts(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--sched", metavar="A,B", type=args.scx_schedulers,
                    help=f"only these (default: {','.join(scx.SCHEDULERS + tuple(peers.PEERS))})")
    sp.add_argument("--no-kernel", action="store_true", help="use the scx kernel as built")
    sp.add_argument("--no-prepare", action="store_true", help="build the tree as it is")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all of make's output")


def cmd_scx(a: argparse.Namespace) -> int:
    if not a.no_kernel:
        if not a.no_prepare:
            tree.prepare()
        build.build(scx.VARIANT, verbose=a.verbose)
    names = tuple(a.sched) if a.sched else scx.SCHEDULERS + tuple(peers.PEERS)
    own = tuple(n for n in names if n not in peers.PEERS)
    published = tuple(n for n in names if n in peers.PEERS)
    bins = scx.build_schedulers(names=own, verbose=a.verbose) if own else {}
    if published:
        bins.update(peers.ensure(published, verbose=a.verbose))
    for name, path in bins.items():
        print(f"{name} {path}")
    return 0


# ---------------------------------------------------------------- scx-upstream

def add_scx_upstream_opts(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--tree", metavar="DIR", type=args.scx_tree, required=True,
                    help="a clean clone of sched-ext/scx; the patch is committed there on "
                         f"a new branch, {upstream.BRANCH}")
    sp.add_argument("--out", metavar="DIR", type=args.outdir, default="patches/scx",
                    help="where the patch is written (default: patches/scx)")
    sp.add_argument("--no-check", action="store_true",
                    help="do not run rustfmt, clippy and the build in the tree")


def cmd_scx_upstream(a: argparse.Namespace) -> int:
    tree_dir = Path(a.tree)
    patch = upstream.export(tree_dir, Path(a.out), upstream.series_author())
    print(f"wrote {patch}")
    if not a.no_check:
        for line in upstream.check(tree_dir):
            print(line)
    return 0


# ---------------------------------------------------------------- side-by-side

def add_side_by_side_opts(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--sched", default=",".join(sidebyside.DEFAULT), metavar="A,B,...",
                    type=sidebyside.sched_names,
                    help="schedulers, the first is the baseline (default %(default)s; known: "
                    + ", ".join(sidebyside.CONTENDERS) + ", and those of --contender)")
    sp.add_argument("--contender", action="append", default=[], metavar="NAME=FEAT[,FEAT...]",
                    type=sidebyside.parse_contender,
                    help="an EEVDF scheduler of your own for --sched: these sched features "
                    "set when switching to it (e.g. eevdf+kick=STEAL,STEAL_KICK; "
                    "repeatable; a feature the booted kernel lacks fails the boot naming it; "
                    "docs/scx.md)")
    sp.add_argument("--idlesteal-build", action="append", default=[], metavar="NAME=PATH",
                    type=sidebyside.parse_idlesteal_build,
                    help="a scx_idlesteal loader built elsewhere (another commit, a change "
                    "under test) for --sched, as NAME (scx_idlesteal.X or scx_idlesteal-X): "
                    "two builds in one boot (repeatable; not with --host; docs/scx.md)")
    sp.add_argument("--variant", default=scx.VARIANT, type=args.variant,
                    help=f"kernel variant (configs/variants; default {scx.VARIANT}); one "
                    "without sched_ext (e.g. steal) takes EEVDF schedulers only")
    sp.add_argument("--suite-file", type=args.existing_file,
                    help="entries to run (default configs/scx.suite)")
    opts.filters(sp)
    sp.add_argument("--reps", type=args.reps2, default=4, help="repetitions per scheduler "
                    "(default %(default)s)")
    opts.outdir(sp, None, f"where the results go (default {sidebyside.results_dir()}; with "
                f"--host {suite.host_dir()}/side-by-side)")
    sp.add_argument("--no-build", dest="build", action="store_false",
                    help="use the scx kernel and schedulers as built")
    sp.add_argument("--no-waste", action="store_true",
                    help="do not trace the runs (no wasted-CPU-time column, docs/waste.md)")
    sp.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all build output")
    opts.stage_option(sp)
    opts.host_options(sp, "each workload of the suite file once; a scheduler the kernel "
                      "cannot run (eevdf+steal without the series, sched_ext ones without "
                      "sched_ext) is left out with its reason")


def _check_contenders(a: argparse.Namespace) -> None:
    """--host takes no --variant, own --contender features or
    --idlesteal-build; each NAME of --contender and --idlesteal-build once."""
    if a.host:
        for option, value in (("--variant", a.variant if a.variant != scx.VARIANT else None),
                              ("--contender", ",".join(a.contender[0].features) and
                               f"{a.contender[0].name}={','.join(a.contender[0].features)}"
                               if a.contender else None)):
            if value is not None:
                raise UsageError(option, value, f"no {option} with --host: the kernel is "
                                 "the running one, and it shows its own offer")
        if a.idlesteal_build:
            c = a.idlesteal_build[0]
            raise UsageError("--idlesteal-build", f"{c.name}={c.build}", "no --idlesteal-build "
                             "with --host: host mode runs the loaders `make scx` built")
    seen: set[str] = set()
    for c in [*a.contender, *a.idlesteal_build]:
        # as given (parse_contender, parse_idlesteal_build)
        option, text = (("--idlesteal-build", f"{c.name}={c.build}") if c.build
                        else ("--contender", f"{c.name}={','.join(c.features)}"))
        if c.name in seen:
            raise UsageError(option, text, f"each NAME defined once ({c.name} is "
                             "defined twice)")
        seen.add(c.name)


def check_side_by_side(a: argparse.Namespace) -> None:
    common.check_host(a, (("--stage", True, a.stage),))
    _check_contenders(a)
    path, entries = common.load_suite(a, sidebyside.default_suite())
    # summary.txt holds every preset of the file, not only those --presets ran
    a.summary_presets = list(dict.fromkeys(e.preset for e in entries))
    with common.arg("--sched", ",".join(a.sched),
                    "built-in schedulers or ones of --contender or --idlesteal-build"):
        a.contenders = sidebyside.contenders(a.sched, [*a.contender, *a.idlesteal_build])
    scx_ones = sidebyside.needs_sched_ext(a.contenders)
    if scx_ones and not common.has_sched_ext(a.variant):
        raise UsageError("--variant", a.variant, f"a kernel variant with sched_ext (--variant "
                         f"{scx.VARIANT}) for the sched_ext schedulers {', '.join(scx_ones)}, "
                         f"or only EEVDF schedulers in --sched on {a.variant}")
    if a.host:      # one run, each workload of the file once (suite.host_entries())
        if a.presets:
            raise UsageError("--presets", ",".join(a.presets), "no --presets with --host: a "
                             "preset is a guest's topology; the host runs each workload of "
                             "the suite file once on its own CPUs (--workloads picks them)")
        entries, a.left_out = suite.host_entries(entries, common.host_machine())
    else:
        entries = common.guest_entries(path, entries)
    if a.outdir is None:
        a.outdir = str(suite.host_dir() / "side-by-side" if a.host else sidebyside.results_dir())
    with common.arg("--suite-file", str(path), "entries for side by side"):
        a.specs = sidebyside.specs(common.select(a, path, entries), a.contenders, a.reps,
                                   waste=not a.no_waste)
    if a.stage and len(a.specs) != 1:
        raise UsageError("--stage", True, f"one preset (--presets NAME): a staged run is one "
                         f"boot, and these entries need {len(a.specs)}: "
                         f"{', '.join(s.preset for s in a.specs)}")
    if not a.host:      # host mode builds no image
        common.tools_present(a, sorted({e.wl.binary for s in a.specs for e in s.entries
                                        if e.wl.binary in image.TOOLS}))


def _buildable(cs: list[sidebyside.Contender]) -> list[str]:
    """The loaders `make scx` builds or installs for the contenders
    (--idlesteal-build's are given built)."""
    return [c.binary for c in cs if c.binary and not c.build]


def _unbuilt(cs: list[sidebyside.Contender]) -> list[str]:
    """Loaders of the contenders not built yet (of _buildable())."""
    return [c.binary for c in cs if c.binary and not c.build
            and not sidebyside.loader_path(c).exists()]


def _build_loaders(binaries: list[str], verbose: bool) -> None:
    """Build our sched_ext schedulers and install the published peers among
    `binaries` (each once, in their order)."""
    own = tuple(b for b in binaries if b not in peers.PEERS)
    if own:
        scx.build_schedulers(names=tuple(dict.fromkeys(own)), verbose=verbose)
    published = tuple(b for b in binaries if b in peers.PEERS)
    if published:
        peers.ensure(published, verbose=verbose)


def _side_by_side_host(a: argparse.Namespace) -> int:
    """side-by-side --host: on this machine (idlesteal/runs/hostsbs.py, docs/host.md)."""
    (spec,) = a.specs
    outdir = Path(a.outdir)
    for note in a.left_out:
        print(f"side-by-side --host: {note}")
    if a.dry_run:
        loads = sidebyside.plan(spec)
        print(f"side by side on this machine (host mode, the running kernel): "
              f"{', '.join(c.name for c in spec.contenders)} where the kernel can run them; "
              f"{len(loads)} loads, {sum(len(l.runs) for l in loads)} runs: "
              + "; ".join(f"{e.workload} {','.join(map(str, e.levels))}" for e in spec.entries))
        return 0
    unbuilt = _unbuilt(spec.contenders)
    if unbuilt and a.build:
        _build_loaders(unbuilt, a.verbose)
    out = hostsbs.side_by_side(spec, outdir, max_load=host.DEFAULT_MAX_LOAD
                               if a.max_load is None else a.max_load,
                               force_load=a.force_load, show=common.show)
    if out is None:
        return 0
    print(out["table"], end="")
    print("wrote " + ", ".join(str(v) for v in out.values() if isinstance(v, Path)))
    return 0


def _run_presets(a: argparse.Namespace, kernel: Path, outdir: Path) -> int:
    """One boot per preset of a.specs, the summary of them all after."""
    specs = a.specs
    failed = []
    for i, s in enumerate(specs, 1):
        log(f"side by side {i}/{len(specs)}: {s.preset}")
        try:
            out = sidebyside.run(s, kernel, a.variant, outdir)
        except HarnessError as err:   # keep going: one broken preset must not lose the rest
            log(f"side by side on {s.preset} FAILED: {err}")
            failed.append(s.preset)
        else:
            print(out["table"], end="", flush=True)
            print("wrote " + ", ".join(str(v) for v in out.values() if isinstance(v, Path)))
    summary = sidebyside.write_summary(outdir, a.summary_presets)
    print(f"wrote {summary}")
    if failed:
        log(f"FAILED: {', '.join(failed)}")
        return 1
    return 0


def cmd_side_by_side(a: argparse.Namespace) -> int:
    if a.host:
        return _side_by_side_host(a)
    cs, specs = a.contenders, a.specs
    outdir = Path(a.outdir)
    total = sum(sidebyside.estimate_seconds(s, outdir) for s in specs)
    header = (f"side by side: {', '.join(c.name for c in cs)}; kernel variant {a.variant}, "
              f"{len(specs)} boot(s) "
              f"({', '.join(s.preset for s in specs)}), {a.reps} repetitions, "
              f"~{estimate.fmt_duration(total)} (builds not included)")
    unbuilt = _unbuilt(cs)
    if a.dry_run:
        print(header)
        for s in specs:
            loads = sidebyside.plan(s)
            print(f"  {s.preset}: {len(loads)} loads, {sum(len(l.runs) for l in loads)} runs: "
                  + "; ".join(f"{e.workload} {','.join(map(str, e.levels))}" for e in s.entries))
        if unbuilt:
            print(f"  not built yet: {', '.join(unbuilt)} (built first, or `make scx`)")
        return 0
    if unbuilt and not a.build:
        raise HarnessError(f"{', '.join(unbuilt)}: not built; build them with `make scx` "
                           f"(or `{needs.DEBIAN_PYTHON} -m idlesteal scx`), or leave out "
                           "--no-build")
    log(header)
    if a.build:
        tree.prepare()
        build.build(a.variant, verbose=a.verbose)
        _build_loaders(_buildable(cs), a.verbose)
    kernel = build.bzimage(a.variant)
    if a.stage:
        return common.staged(lambda: sidebyside.run(specs[0], kernel, a.variant, outdir))
    return _run_presets(a, kernel, outdir)
