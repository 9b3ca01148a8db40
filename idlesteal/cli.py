"""The `idlesteal` command: argument parsing and printing only.

Every action is a function of another module (tree, build, kernels, image,
vm, bench, suite, stress, asym, collect, compare) that takes plain values and
returns a result; each command here checks all of its arguments first, then
calls them.  Errors meant for the user are HarnessError: printed as one
message, exit status 1.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import (asym, bench, build, collect, compare, estimate, image, kernels, paths, peers, scx,
               sidebyside, source, stress, suite, topology, tree, vm, workload)
from .util import HarnessError, Stopwatch, log


# ---------------------------------------------------------------- argument checks

def _levels(text: str) -> list[int]:
    try:
        levels = [int(g) for g in text.split(",") if g.strip()]
    except ValueError:
        raise HarnessError(f"--levels wants comma-separated positive integers, got {text!r}") \
            from None
    if not levels or min(levels) < 1:
        raise HarnessError(f"--levels wants comma-separated positive integers, got {text!r}")
    return levels


def _presets(text: str) -> list[topology.Preset]:
    names = [p for p in text.split(",") if p]
    if not names:
        raise HarnessError("no preset given")
    return [topology.get(n) for n in names]


def _variant(name: str) -> str:
    if name not in build.variants():
        raise HarnessError(f"unknown kernel variant {name!r}; configs/variants has: "
                           f"{', '.join(build.variants())}")
    return name


def _files(a: argparse.Namespace) -> tuple[str, ...]:
    """--file HOST[:GUEST] options, checked now and written out whole
    ("HOST:GUEST", absolute host path) as results record them."""
    return tuple(str(image.parse_file_spec(s)) for s in getattr(a, "file", None) or ())


def _workload(a: argparse.Namespace, name: str) -> tuple[str, dict | None]:
    """(workload name, custom definition or None) from --workload and, for
    your own program, --command/--metric/--higher-better/--unit."""
    if getattr(a, "command_template", None):
        name = name or "custom"
        if name in workload.WORKLOADS:
            raise HarnessError(f"--workload {name} is a built-in workload; give your own "
                               "command another name")
        if not a.metric:
            raise HarnessError("--command needs --metric: a regular expression whose first "
                               "group is the number to compare")
        w = workload.custom(name, a.command_template, a.metric, a.higher_better,
                            unit=a.unit, default_size=a.size or 1)
        return w.name, w.to_json()
    if getattr(a, "metric", None):
        raise HarnessError("--metric needs --command (it is the regular expression for "
                           "the metric of your own command)")
    return workload.get(name or "hackbench").name, None


def _spec(a: argparse.Namespace, wname: str, levels: list[int], size: int,
          custom: dict | None = None, files: tuple[str, ...] = ()) -> bench.BenchSpec:
    try:
        sides = bench.parse_features(a.a), bench.parse_features(a.b)
    except ValueError as e:
        raise HarnessError(str(e)) from None
    if a.reps < 1:
        raise HarnessError("--reps must be at least 1")
    if a.warmup < 0:
        raise HarnessError("--warmup must be 0 or more")
    spec = bench.BenchSpec(
        a=bench.Side("A", sides[0]), b=bench.Side("B", sides[1]),
        levels=levels, size=size, reps=a.reps,
        alternate=not a.no_alternate, warmup=a.warmup,
        extra_args=a.extra_args.split() if a.extra_args else [], workload=wname, custom=custom,
        files=list(files))
    if not spec.size:
        spec.size = spec.wl.default_size
    return spec


def _plan_line(name: str, preset: topology.Preset, spec: bench.BenchSpec, outdir: Path
               ) -> tuple[float, str]:
    runs = len(bench.plan(spec))
    secs, src = estimate.est_seconds(name, preset.name, runs, outdir)
    w = spec.wl
    return secs, (f"{name}: 1 boot of {preset.name} ({preset.ncpus} vCPUs), {runs} runs "
                  f"({spec.warmup} warm-up) of {w.name} {w.level} "
                  f"{','.join(map(str, spec.levels))} {w.size_name} {spec.size}, "
                  f"A = {spec.a.name}, B = {spec.b.name}; "
                  f"~{estimate.fmt_duration(secs)} ({src})")


# ---------------------------------------------------------------- commands

def cmd_fetch(a: argparse.Namespace) -> int:
    info = source.fetch()
    print(f"{info.package} {info.version} sha256 {info.sha256}\n  deb: {info.deb}\n  tarball: {info.tarball}")
    return 0


def cmd_prepare(a: argparse.Namespace) -> int:
    tree.prepare(a.force)
    return 0


def cmd_kernel(a: argparse.Namespace) -> int:
    _variant(a.variant)
    if not a.no_prepare:
        tree.prepare(a.force)
    print(build.build(a.variant, verbose=a.verbose))
    return 0


def cmd_scx(a: argparse.Namespace) -> int:
    if not a.no_kernel:
        if not a.no_prepare:
            tree.prepare()
        build.build(scx.VARIANT, verbose=a.verbose)
    names = tuple(a.sched.split(",")) if a.sched else scx.SCHEDULERS + tuple(peers.PEERS)
    own = tuple(n for n in names if n not in peers.PEERS)
    published = tuple(n for n in names if n in peers.PEERS)
    bins = scx.build_schedulers(names=own, verbose=a.verbose) if own else {}
    if published:
        bins.update(peers.ensure(published, verbose=a.verbose))
    for name, path in bins.items():
        print(f"{name} {path}")
    return 0


def cmd_side_by_side(a: argparse.Namespace) -> int:
    path = Path(a.suite_file) if a.suite_file else sidebyside.default_suite()
    entries = suite.select(suite.load(path), a.presets, a.workloads)
    cs = sidebyside.contenders(a.sched)
    specs = sidebyside.specs(entries, cs, a.reps)
    outdir = Path(a.outdir)
    total = sum(sidebyside.estimate_seconds(s, outdir) for s in specs)
    header = (f"side by side: {', '.join(c.name for c in cs)}; {len(specs)} boot(s) "
              f"({', '.join(s.preset for s in specs)}), {a.reps} repetitions, "
              f"~{estimate.fmt_duration(total)} (builds not included)")
    if a.dry_run:
        print(header)
        for s in specs:
            loads = sidebyside.plan(s)
            print(f"  {s.preset}: {len(loads)} loads, {sum(len(l.runs) for l in loads)} runs: "
                  + "; ".join(f"{e.workload} {','.join(map(str, e.levels))}" for e in s.entries))
        return 0
    log(header)
    if a.build:
        tree.prepare()
        build.build(scx.VARIANT, verbose=a.verbose)
        own = tuple(c.binary for c in cs if c.binary and c.binary not in peers.PEERS)
        if own:
            scx.build_schedulers(names=tuple(dict.fromkeys(own)), verbose=a.verbose)
        published = tuple(c.binary for c in cs if c.binary in peers.PEERS)
        if published:
            peers.ensure(published, verbose=a.verbose)
    kernel = build.bzimage(scx.VARIANT)
    failed = []
    for i, s in enumerate(specs, 1):
        log(f"side by side {i}/{len(specs)}: {s.preset}")
        try:
            out = sidebyside.run(s, kernel, scx.VARIANT, outdir)
        except HarnessError as err:   # keep going: one broken preset must not lose the rest
            log(f"side by side on {s.preset} FAILED: {err}")
            failed.append(s.preset)
        else:
            print(out["table"], end="", flush=True)
            print(f"wrote {out['txt']} and {out['json']}")
    summary = sidebyside.write_summary(outdir, [s.preset for s in specs])
    print(f"wrote {summary}")
    if failed:
        log(f"FAILED: {', '.join(failed)}")
        return 1
    return 0


def cmd_check_series(a: argparse.Namespace) -> int:
    _variant(a.variant)
    tree.create_tree(source.fetch())
    results = build.check_series(a.variant, a.verbose)
    for i, (subj, ok, msg) in enumerate(results, 1):
        print(f"{i:3d} {'ok  ' if ok else 'FAIL'} {subj}" + ("" if ok else f"\n      {msg}"))
    total = len(tree.read_series())
    if any(not ok for _, ok, _ in results):
        return 1
    print(f"all {total} prefix(es) of the series build")
    return 0


def cmd_image(a: argparse.Namespace) -> int:
    print(image.build_base(a.arch, files=_files(a)))
    return 0


def cmd_presets(a: argparse.Namespace) -> int:
    for p in topology.PRESETS.values():
        print(p.describe())
    for ap in asym.PRESETS.values():
        print(f"{ap.describe()} [asym-boot/asym-bench]")
    return 0


def cmd_boot(a: argparse.Namespace) -> int:
    preset = topology.get(a.preset)
    _variant(a.variant)
    tools = tuple(t for t in a.tools.split(",") if t)
    for t in tools:
        if t not in image.TOOLS:
            raise HarnessError(f"--tools: unknown tool {t!r}; known: {', '.join(image.TOOLS)}")
    files = _files(a)
    user = Path(a.script).read_text() if a.script else (a.cmd or "")
    kernel = kernels.ensure(a.variant, a.build, a.force)
    initrd = image.build_base(tools=tools, files=files)
    script = ("section topology\n" + preset.check_script.strip() + "\n"
              "section user\n" + user + "\n")
    res = vm.run_script(script, preset, kernel, initrd, timeout=a.timeout, name="boot",
                        cmdline=a.append.split() if a.append else None)
    obs = preset.verify(res.sections.get("topology", ""))
    log(f"topology {preset.name} verified: {len(obs.online)} CPUs, "
        f"{len(preset.llc_groups())} LLC(s), {len(obs.nodes)} node(s); "
        f"booted in {res.boot_seconds:.1f} s, {res.seconds:.1f} s in all")
    sys.stdout.write(res.sections.get("user", ""))
    return 0


def cmd_bench(a: argparse.Namespace) -> int:
    preset = topology.get(a.preset)
    _variant(a.variant)
    wname, custom = _workload(a, a.workload)
    spec = _spec(a, wname, _levels(a.levels), a.size, custom, _files(a))
    outdir = Path(a.outdir)
    name = a.name or f"{time.strftime('%Y%m%d-%H%M%S')}-{preset.name}-{spec.workload}"
    secs, line = _plan_line(name, preset, spec, outdir)
    if a.dry_run:
        print(f"plan: {line}\n  kernel: variant {a.variant}"
              + (", prepared and built first if needed" if a.build else ", as built"))
        return 0
    log(f"plan: {line}")
    kernel = kernels.ensure(a.variant, a.build, a.force)
    out = bench.run_ab(spec, preset, kernel, a.variant, name, outdir, a.append, a.timeout)
    print(out["table"], end="")
    print("wrote " + ", ".join(str(out[k]) for k in ("txt", "json", "png") if k in out))
    return 0


def cmd_suite(a: argparse.Namespace) -> int:
    path = Path(a.suite_file) if a.suite_file else None
    outdir = Path(a.outdir)
    if a.summary_only:
        text, txt, _ = suite.write_summary(suite.load(path), outdir)
        print(text, end="")
        print(f"wrote {txt}")
        return 0
    _variant(a.variant)
    loaded = suite.load(path)
    entries = suite.select(loaded, a.presets, a.workloads)
    files = _files(a)
    specs = [(e, topology.get(e.preset),
              _spec(a, e.workload, e.levels, e.size, e.custom, e.files + files))
             for e in entries]
    plans = [_plan_line(e.name, preset, spec, outdir) for e, preset, spec in specs]
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
    text, txt, _ = suite.write_summary(loaded, outdir)
    print(text, end="")
    print(f"wrote {txt}")
    if failed:
        print(f"{len(failed)} suite entr{'y' if len(failed) == 1 else 'ies'} failed: "
              f"{', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def cmd_kernels(a: argparse.Namespace) -> int:
    """Same command on two kernel variants, one boot per sample, alternating."""
    preset = topology.get(a.preset)
    w = workload.get(a.workload)
    variants = [_variant(v) for v in a.variants.split(",") if v]
    if len(variants) != 2:
        raise HarnessError(f"--variants wants two variants, got {a.variants!r}")
    if a.boots < 2:
        raise HarnessError("--boots must be at least 2 (a spread needs two samples)")
    out = kernels.compare(variants, preset, w, a.level, a.size, a.boots, prepare=a.build,
                          force=a.force, timeout=a.timeout, name=a.name or "",
                          outdir=Path(a.outdir))
    print(out.text, end="")
    print(f"wrote {out.txt}")
    return 0


def cmd_stress(a: argparse.Namespace) -> int:
    presets = _presets(a.preset)
    for p in presets:
        stress.check_preset(p)        # before the (KASAN) kernel build
    if a.seconds < 1:
        raise HarnessError("--seconds must be at least 1")
    _variant(a.variant)
    loader = tuple(a.scx.split()) if a.scx else ()
    if loader and loader[0] not in scx.SCHEDULERS:
        raise HarnessError(f"--scx: {loader[0]} is not one of ours ({', '.join(scx.SCHEDULERS)})")
    kernel, initrd = kernels.ensure_guest(a.variant, a.build, a.force)
    if loader:
        if not build.config_enabled(a.variant, "CONFIG_SCHED_CLASS_EXT"):
            raise HarnessError(f"--scx needs a kernel with sched_ext (--variant {scx.VARIANT}), "
                               f"not {a.variant}")
        bins = scx.build_schedulers(a.variant, (loader[0],)) if a.build \
            else {loader[0]: scx.binary(loader[0], a.variant)}
        initrd = image.build_base(files=scx.image_files(bins))
    ok = True
    for p in presets:
        s, path = stress.run(p.name, a.seconds, kernel, initrd, variant=a.variant,
                             outdir=Path(a.outdir), append=a.append.split() if a.append else None,
                             kcsan_races=build.config_enabled(a.variant, "CONFIG_KCSAN"),
                             scx_loader=loader)
        print(stress.report(s), end="")
        print(f"wrote {path}")
        ok = ok and s["passed"]
    return 0 if ok else 1


def cmd_asym_boot(a: argparse.Namespace) -> int:
    preset = asym.get(a.preset)
    if a.threads < 0 or a.rounds < 1:
        raise HarnessError("--threads must be >= 0 and --rounds >= 1")
    if a.build:
        tree.prepare(a.force)
        kernel = build.build(asym.VARIANT, arch="arm64")
    else:
        kernel = build.kernel_image(asym.VARIANT, arch="arm64")
    initrd = image.build_base("arm64")
    script = asym.smoke_script(preset, a.threads or preset.big, a.rounds)
    res = vm.run_script(script, preset, kernel, initrd, timeout=a.timeout, name="asym-boot",
                        cmdline=a.append.split() if a.append else None)
    obs = preset.verify(res.sections.get("topology", ""))
    log(f"asym topology {preset.name} verified: capacities "
        f"{sorted(set(obs.cap.values()))}, SMT + SD_ASYM_CPUCAPACITY domains")
    sys.stdout.write(res.sections.get("placement", ""))
    return 0


def cmd_asym_bench(a: argparse.Namespace) -> int:
    preset = asym.get(a.preset)
    threads = _levels(a.threads) if a.threads else None
    if a.wakers:
        preset.race_cpus()            # the race layout needs SMT, 2 big and 2 little cores
    if a.rounds < 1 or a.runs < 1 or a.boots < 1:
        raise HarnessError("--rounds, --runs and --boots must be at least 1")
    if a.build:
        tree.prepare(a.force)
    out = asym.bench(preset.name, threads, rounds=a.rounds, runs=a.runs, boots=a.boots,
                     spin_ms=a.spin, idle_ms=a.idle, build_them=a.build, name=a.name,
                     outdir=Path(a.outdir), concurrent=a.wakers)
    print(out["table"], end="")
    print(f"wrote {out['txt']}, {out['json']}")
    return 0


def cmd_collect(a: argparse.Namespace) -> int:
    run_dir = Path(a.run_dir)
    if not run_dir.is_dir():
        raise HarnessError(f"{run_dir} is not a directory (a run directory is "
                           f"build/runs/<id>/)")
    out = collect.collect(run_dir, Path(a.outdir) if a.outdir else None)
    print(out.text, end="")
    print("wrote " + ", ".join(map(str, out.paths)))
    return 0 if out.passed else 1


def cmd_export(a: argparse.Namespace) -> int:
    series = tree.export()
    print(f"exported {len(series)} patch(es) to {paths.patches_dir()}")
    for s in series:
        print(f"  {s}")
    return 0


def cmd_compare(a: argparse.Namespace) -> int:
    old = compare.rows_by_key(compare.read_text(a.old, paths.REPO), a.old)
    new = compare.rows_by_key(compare.read_text(a.new, paths.REPO), a.new)
    text = compare.table(*compare.compare(old, new), old_name=a.old_name, new_name=a.new_name)
    print(text, end="")
    if a.out:
        Path(a.out).write_text(f"# idlesteal compare {a.old} {a.new}\n" + text)
        print(f"wrote {a.out}")
    return 0


# ---------------------------------------------------------------- parser

def parser() -> argparse.ArgumentParser:
    # allow_abbrev off: `suite --preset X` must be an error, not `--presets X`.
    p = argparse.ArgumentParser(prog="idlesteal", description=__doc__, allow_abbrev=False,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, allow_abbrev=False, help=help)

    def variant(sp: argparse.ArgumentParser, default: str = "steal") -> None:
        sp.add_argument("--variant", default=default,
                        help=f"kernel variant (configs/variants; default {default})")

    def files(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--file", action="append", default=[], metavar="HOST[:GUEST]",
                        help="put a host file or directory into the guest image (repeatable; "
                        "executables get their shared libraries; default guest path "
                        "/usr/local/bin/NAME for a file, /opt/NAME for a directory)")

    def guest(sp: argparse.ArgumentParser, preset: bool = True, one_variant: bool = True) -> None:
        """Options of the commands that boot a guest; `suite` takes its presets
        from the suite file and `kernels` two variants, so they leave out the
        single --preset / --variant rather than accept and ignore them."""
        if one_variant:
            variant(sp)
        if preset:
            sp.add_argument("--preset", default="2x2x2", help="topology preset (see `presets`)")
        sp.add_argument("--no-build", dest="build", action="store_false",
                        help="use the kernel already built, do not prepare/build")
        sp.add_argument("--force", action="store_true", help="prepare --force")
        sp.add_argument("--append", default="", help="extra kernel command line")

    def ab(sp: argparse.ArgumentParser, reps: int) -> None:
        sp.add_argument("--reps", type=int, default=reps,
                        help=f"repetitions per side and load level (default {reps})")
        sp.add_argument("--a", default="NO_STEAL", help="side A sched features (baseline)")
        sp.add_argument("--b", default="STEAL", help="side B sched features")
        sp.add_argument("--warmup", type=int, default=1, help="discarded warm-up runs")
        sp.add_argument("--no-alternate", action="store_true",
                        help="always run A before B (default alternates per repetition)")
        sp.add_argument("--dry-run", action="store_true",
                        help="print what would run and how long it should take, run nothing")
        sp.add_argument("--outdir", default=str(paths.results_dir()))
        files(sp)

    sp = command("fetch", help="download + verify + extract the Debian kernel source")
    sp.set_defaults(func=cmd_fetch)

    sp = command("prepare", help="work tree at base + patches/series")
    sp.add_argument("--force", action="store_true",
                    help="reset the tree to base + series even if that discards commits")
    sp.set_defaults(func=cmd_prepare)

    sp = command("kernel", help="prepare, configure and build the guest kernel")
    variant(sp, "base")
    sp.add_argument("--force", action="store_true", help="prepare --force")
    sp.add_argument("--no-prepare", action="store_true", help="build the tree as it is")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all of make's output")
    sp.set_defaults(func=cmd_kernel)

    sp = command("scx", help="build the scx kernel and the sched_ext schedulers (docs/scx.md)")
    sp.add_argument("--sched", metavar="A,B", help=f"only these (default: {','.join(scx.SCHEDULERS)})")
    sp.add_argument("--no-kernel", action="store_true", help="use the scx kernel as built")
    sp.add_argument("--no-prepare", action="store_true", help="build the tree as it is")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all of make's output")
    sp.set_defaults(func=cmd_scx)

    sp = command("side-by-side", help="EEVDF +/- STEAL and sched_ext schedulers, one boot "
                 "per preset (docs/scx.md)")
    sp.add_argument("--sched", default=",".join(sidebyside.DEFAULT), metavar="A,B,...",
                    help="schedulers, the first is the baseline (default %(default)s; known: "
                    + ", ".join(sidebyside.CONTENDERS) + ")")
    sp.add_argument("--suite-file", help="entries to run (default configs/scx.suite)")
    sp.add_argument("--presets", default="", help="only these presets (comma-separated)")
    sp.add_argument("--workloads", default="", help="only these workloads")
    sp.add_argument("--reps", type=int, default=4, help="repetitions per scheduler "
                    "(default %(default)s)")
    sp.add_argument("--outdir", default=str(sidebyside.results_dir()))
    sp.add_argument("--no-build", dest="build", action="store_false",
                    help="use the scx kernel and schedulers as built")
    sp.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all build output")
    sp.set_defaults(func=cmd_side_by_side)

    sp = command("check-series", help="build every prefix of the series (bisectability)")
    variant(sp, "base")
    sp.add_argument("-v", "--verbose", action="store_true")
    sp.set_defaults(func=cmd_check_series)

    sp = command("image", help="build the base initramfs")
    sp.add_argument("--arch", default="x86_64", choices=["x86_64", "arm64"])
    files(sp)
    sp.set_defaults(func=cmd_image)

    sp = command("presets", help="list topology presets")
    sp.set_defaults(func=cmd_presets)

    sp = command("boot", help="boot a preset, verify topology, run a command")
    guest(sp)
    sp.add_argument("--cmd", help="shell commands to run in the guest")
    sp.add_argument("--script", help="file with shell commands to run in the guest")
    sp.add_argument("--tools", default="", help=f"extra programs in the image "
                    f"(comma-separated: {', '.join(image.TOOLS)})")
    files(sp)
    sp.add_argument("--timeout", type=float, default=600, help="script timeout (s)")
    sp.set_defaults(func=cmd_boot)

    sp = command("bench", help="A/B sweep of a workload in one boot (default: the steal "
                 "kernel, NO_STEAL against STEAL)")
    guest(sp)
    sp.add_argument("--workload", default="",
                    help=f"one of: {', '.join(workload.WORKLOADS)} (default hackbench); "
                    "with --command, the name of your own (default custom)")
    sp.add_argument("--command", dest="command_template", default="",
                    help="your own workload: a command template with {level} (and "
                    "optionally {size}), e.g. 'schbench -m {level} -r {size}'")
    sp.add_argument("--metric", default="",
                    help="with --command: regular expression whose first group is the metric")
    sp.add_argument("--higher-better", action="store_true",
                    help="with --command: a higher metric is better (default: lower)")
    sp.add_argument("--unit", default="", help="with --command: the metric's unit")
    sp.add_argument("--levels", "--groups", default="1,2,4",
                    help="comma-separated load levels (hackbench/perf groups, sysbench "
                    "threads, wakelat messengers, {level} of --command)")
    sp.add_argument("--size", "--loops", type=int, default=0,
                    help="work per run (hackbench/perf loops, sysbench events or locks, "
                    "wakelat seconds, {size} of --command); default: the workload's")
    ab(sp, reps=3)
    sp.add_argument("--extra-args", "--hackbench-args", default="",
                    help="extra arguments for the workload's command")
    sp.add_argument("--name", help="results/<name>.{json,txt,png}")
    sp.add_argument("--timeout", type=float, default=0, help="guest timeout (s)")
    sp.set_defaults(func=cmd_bench)

    sp = command("suite", help="the benchmark suite (configs/bench.suite): one A/B "
                 "boot per entry, then results/summary.txt")
    guest(sp, preset=False)
    sp.add_argument("--suite-file", default="",
                    help="suite file (default configs/bench.suite)")
    sp.add_argument("--presets", default="", help="only these presets (comma-separated)")
    sp.add_argument("--workloads", default="", help="only these workloads (comma-separated)")
    ab(sp, reps=5)
    sp.add_argument("--extra-args", default="", help="extra arguments for every command")
    sp.add_argument("--summary-only", action="store_true",
                    help="only rebuild results/summary.txt from the results there")
    sp.set_defaults(func=cmd_suite)

    sp = command("kernels", help="one command on two kernel variants (alternating "
                 "boots), e.g. the guest config against defconfig")
    guest(sp, one_variant=False)
    sp.add_argument("--variants", default="steal,reference",
                    help="two comma-separated variants (configs/variants)")
    sp.add_argument("--workload", default="hackbench")
    sp.add_argument("--level", type=int, default=1, help="load level (e.g. hackbench -g)")
    sp.add_argument("--size", type=int, default=2000, help="work (e.g. hackbench -l)")
    sp.add_argument("--boots", type=int, default=3, help="boots (samples) per kernel")
    sp.add_argument("--timeout", type=float, default=900, help="guest timeout (s)")
    sp.add_argument("--name", help="results/<name>.{txt,json}")
    sp.add_argument("--outdir", default=str(paths.results_dir()))
    sp.set_defaults(func=cmd_kernels)

    sp = command("stress", help="debug kernel under hotplug, domain rebuilds, "
                 "throttling, affinity and feature churn while message passing")
    guest(sp)
    sp.set_defaults(variant=stress.VARIANT, preset="2x2x2,2node")
    sp.add_argument("--seconds", type=int, default=600, help="load duration per preset (s)")
    sp.add_argument("--scx", default="", metavar="'LOADER ARGS'",
                    help="a sched_ext scheduler of ours in charge during the load "
                    "(e.g. scx_idlesteal; with --variant scx)")
    sp.add_argument("--outdir", default=str(stress.results_dir()),
                    help="where the JSON summaries go")
    sp.set_defaults(func=cmd_stress)

    def asym_guest(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--preset", default=asym.DEFAULT_PRESET,
                        help="asymmetric arm64 preset (see `presets`)")
        sp.add_argument("--no-build", dest="build", action="store_false",
                        help="use the arm64 kernel(s) already built")
        sp.add_argument("--force", action="store_true", help="prepare --force")

    sp = command("asym-boot", help="boot an asymmetric-capacity arm64 preset, verify "
                 "capacities / SMT / asym domain, run a short placement round")
    asym_guest(sp)
    sp.add_argument("--threads", type=int, default=0, help="placement threads (default: big cores)")
    sp.add_argument("--rounds", type=int, default=50)
    sp.add_argument("--timeout", type=float, default=600, help="script timeout (s)")
    sp.add_argument("--append", default="", help="extra kernel command line")
    sp.set_defaults(func=cmd_asym_boot)

    sp = command("asym-bench", help="placement with and without the stable idle-core "
                 "patch on an asymmetric arm64 guest; results/asym/")
    asym_guest(sp)
    sp.add_argument("--threads", default="", help="comma-separated thread counts "
                    "(default: big cores, all cores)")
    sp.add_argument("--rounds", type=int, default=200, help="rounds per placement run")
    sp.add_argument("--runs", type=int, default=3, help="placement runs per boot")
    sp.add_argument("--boots", type=int, default=2, help="boots per kernel (alternating)")
    sp.add_argument("--spin", type=float, default=5, help="placement -s (ms)")
    sp.add_argument("--idle", type=float, default=20, help="placement -i (ms)")
    sp.add_argument("--wakers", action="store_true",
                    help="concurrent wakers on the little cores (placement -W), one per "
                    "thread; threads default to the number of big cores")
    sp.add_argument("--name", help="results/asym/<name>.{json,txt}")
    sp.add_argument("--outdir", default=str(asym.results_dir()))
    sp.set_defaults(func=cmd_asym_bench)

    sp = command("collect", help="re-read a kept run directory (build/runs/<id>/) into "
                 "results, as `kunit.py parse` does")
    sp.add_argument("run_dir", help="build/runs/<id>/ of a bench or stress run")
    sp.add_argument("--outdir", default="",
                    help="where the results go (default: where that kind of run writes them)")
    sp.set_defaults(func=cmd_collect)

    sp = command("compare", help="two suite summaries side by side: did the second run "
                 "reproduce the first?")
    sp.add_argument("old", help="summary.json, results dir, or REV:path (git show), "
                    "e.g. HEAD:results/summary.json")
    sp.add_argument("new", nargs="?", default=str(paths.results_dir() / "summary.json"))
    sp.add_argument("--old-name", default="old")
    sp.add_argument("--new-name", default="new")
    sp.add_argument("--out", default="", help="also write the table to this file")
    sp.set_defaults(func=cmd_compare)

    sp = command("export", help="write the tree's commits to patches/")
    sp.set_defaults(func=cmd_export)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    sw = Stopwatch()
    try:
        rc = args.func(args)
    except HarnessError as e:
        print(f"idlesteal {args.command}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    log(f"{args.command} finished in {sw.elapsed():.0f} s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
