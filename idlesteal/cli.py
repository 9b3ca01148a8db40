"""The `idlesteal` command: fetch, prepare, kernel, check-series, image,
presets, boot, bench, suite, kernels, stress, export, asym-boot, asym-bench."""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from . import (asym, bench, build, compare, image, paths, report, source, stats, stress, suite,
               topology, tree, vm, workload)
from .util import HarnessError, Stopwatch, log


def do_prepare(force: bool = False) -> None:
    info = source.fetch()
    tree.create_tree(info)
    n = tree.apply_series(force=force)
    desc = tree.describe()
    log(f"tree {paths.tree_dir()} at {desc['head'][:12]}: base + {len(desc['commits'])} "
        f"patch(es) ({n} applied now), Debian {info.package} {info.version}")


def do_kernel(variant: str, verbose: bool = False) -> Path:
    return build.build(variant, verbose=verbose)


def ensure_kernel(variant: str, prepare: bool, force: bool = False) -> Path:
    """The variant's bzImage; prepares and builds first unless told not to."""
    if prepare:
        do_prepare(force)
        return do_kernel(variant)
    return build.bzimage(variant)


def ensure_guest(variant: str, prepare: bool, force: bool = False,
                 tools: tuple[str, ...] = ()) -> tuple[Path, Path]:
    """(bzImage, base initramfs).  `tools`: extra host programs the image must
    carry (image.TOOLS)."""
    return ensure_kernel(variant, prepare, force), image.build_base(tools=tools)


def cmd_fetch(a: argparse.Namespace) -> int:
    info = source.fetch()
    print(f"{info.package} {info.version} sha256 {info.sha256}\n  deb: {info.deb}\n  tarball: {info.tarball}")
    return 0


def cmd_prepare(a: argparse.Namespace) -> int:
    do_prepare(a.force)
    return 0


def cmd_kernel(a: argparse.Namespace) -> int:
    if not a.no_prepare:
        do_prepare(a.force)
    print(do_kernel(a.variant, a.verbose))
    return 0


def cmd_check_series(a: argparse.Namespace) -> int:
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
    print(image.build_base(a.arch))
    return 0


def cmd_presets(a: argparse.Namespace) -> int:
    for p in topology.PRESETS.values():
        print(p.describe())
    for ap in asym.PRESETS.values():
        print(f"{ap.describe()} [asym-boot/asym-bench]")
    return 0


def cmd_boot(a: argparse.Namespace) -> int:
    preset = topology.get(a.preset)
    kernel, initrd = ensure_guest(a.variant, a.build, a.force,
                                  tools=tuple(t for t in a.tools.split(",") if t))
    user = Path(a.script).read_text() if a.script else (a.cmd or "")
    script = ("section topology\n" + topology.GUEST_SNIPPET.strip() + "\n"
              "section user\n" + user + "\n")
    res = vm.run_script(script, preset, kernel, initrd, timeout=a.timeout, name="boot",
                        cmdline=a.append.split() if a.append else None)
    obs = topology.verify(preset, res.sections.get("topology", ""))
    log(f"topology {preset.name} verified: {len(obs.online)} CPUs, "
        f"{len(preset.llc_groups())} LLC(s), {len(obs.nodes)} node(s)")
    sys.stdout.write(res.sections.get("user", ""))
    return 0


def _levels(text: str) -> list[int]:
    try:
        levels = [int(g) for g in text.split(",") if g.strip()]
    except ValueError:
        raise HarnessError(f"--levels wants comma-separated positive integers, got {text!r}") \
            from None
    if not levels or min(levels) < 1:
        raise HarnessError(f"--levels wants comma-separated positive integers, got {text!r}")
    return levels


def _spec(a: argparse.Namespace, wname: str, levels: list[int], size: int) -> bench.BenchSpec:
    w = workload.get(wname)
    try:
        sides = bench.parse_features(a.a), bench.parse_features(a.b)
    except ValueError as e:
        raise HarnessError(str(e)) from None
    if a.reps < 1:
        raise HarnessError("--reps must be at least 1")
    return bench.BenchSpec(
        a=bench.Side("A", sides[0]), b=bench.Side("B", sides[1]),
        levels=levels, size=size or w.default_size, reps=a.reps,
        alternate=not a.no_alternate, warmup=a.warmup,
        extra_args=a.extra_args.split() if a.extra_args else [], workload=w.name)


def run_ab(spec: bench.BenchSpec, preset: topology.Preset, kernel: Path, variant: str,
           name: str, outdir: Path, append: str = "", timeout: float = 0) -> dict:
    """One boot, one A/B sweep; writes outdir/<name>.{txt,json,png}."""
    w = spec.wl
    initrd = image.build_base(tools=(w.binary,) if w.binary in image.TOOLS else ())
    runs = bench.plan(spec)
    timeout = timeout or 120 + 240 * len(runs)
    log(f"bench {name}: {len(runs)} {w.name} runs ({w.level} "
        f"{','.join(map(str, spec.levels))}, {w.size_name} {spec.size}) on {preset.name}; "
        f"A = {spec.a.name}, B = {spec.b.name}")
    res = vm.run_script(bench.script(spec, runs), preset, kernel, initrd, timeout=timeout,
                        name="bench", cmdline=append.split() if append else None)
    topology.verify(preset, res.sections.get("topology", ""))
    ms = bench.collect(spec, runs, res.sections)
    guest = {"uname": res.sections.get("meta", "").strip(), "run_dir": str(res.run_dir),
             "boot_seconds": round(res.boot_seconds, 1), "total_seconds": round(res.seconds, 1)}
    meta = report.metadata(spec, preset.name, build.read_meta(variant), vm.qemu_version(),
                           guest)
    return report.write(name, outdir, spec, ms, meta)


def cmd_bench(a: argparse.Namespace) -> int:
    preset = topology.get(a.preset)
    spec = _spec(a, a.workload, _levels(a.levels), a.size)
    kernel = ensure_kernel(a.variant, a.build, a.force)  # run_ab builds the image
    name = a.name or f"{time.strftime('%Y%m%d-%H%M%S')}-{preset.name}-{spec.workload}"
    out = run_ab(spec, preset, kernel, a.variant, name, Path(a.outdir), a.append, a.timeout)
    print(out["table"], end="")
    print("wrote " + ", ".join(str(out[k]) for k in ("txt", "json", "png") if k in out))
    return 0


def cmd_suite(a: argparse.Namespace) -> int:
    entries = suite.select(suite.load(Path(a.file) if a.file else None), a.presets, a.workloads)
    outdir = Path(a.outdir)
    if a.summary_only:
        text, txt, _ = suite.write_summary(suite.load(Path(a.file) if a.file else None), outdir)
        print(text, end="")
        print(f"wrote {txt}")
        return 0
    specs = [(e, topology.get(e.preset), _spec(a, e.workload, e.levels, e.size)) for e in entries]
    kernel = ensure_kernel(a.variant, a.build, a.force)  # run_ab builds the image
    failed = []
    for i, (e, preset, spec) in enumerate(specs, 1):
        log(f"suite entry {i}/{len(specs)}: {e.name}")
        try:
            out = run_ab(spec, preset, kernel, a.variant, e.name, outdir, a.append)
        except HarnessError as err:   # keep going: one broken entry must not lose the rest
            log(f"suite entry {e.name} FAILED: {err}")
            failed.append(e.name)
            continue
        print(f"== {e.name}\n{out['table']}", end="", flush=True)
    text, txt, _ = suite.write_summary(suite.load(Path(a.file) if a.file else None), outdir)
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
    variants = [v for v in a.variants.split(",") if v]
    if len(variants) != 2:
        raise HarnessError(f"--variants wants two variants, got {a.variants!r}")
    if a.boots < 2:
        raise HarnessError("--boots must be at least 2 (a spread needs two samples)")
    kernels = {}
    for v in variants:
        kernels[v] = ensure_kernel(v, a.build, a.force)
    initrd = image.build_base(tools=(w.binary,) if w.binary in image.TOOLS else ())
    cmd = w.argv(a.level, a.size or w.default_size)
    script = ("section topology\n" + topology.GUEST_SNIPPET.strip() + "\n"
              f"section output\n{shlex.join(cmd)} 2>&1 || fail '{w.name} failed'\n")
    values: dict[str, list[float]] = {v: [] for v in variants}
    runs = []
    failed_boots: list[dict] = []
    for b in range(a.boots):
        for v in (variants if b % 2 == 0 else variants[::-1]):
            for attempt in (1, 2):
                try:
                    res = vm.run_script(script, preset, kernels[v], initrd, timeout=a.timeout,
                                        name=f"kernels-{v}")
                    break
                except vm.GuestKernelError as e:
                    # A JUMP_LABEL kernel (defconfig) can die at boot under
                    # multi-threaded TCG ("Oops: int3", see README); say so,
                    # keep the log, boot once more.
                    failed_boots.append({"variant": v, "error": str(e).splitlines()[0],
                                         "console": str(e.console)})
                    log(f"  {v}: kernel error ({str(e).splitlines()[1].strip()}); "
                        f"console kept at {e.console}" + ("; retrying" if attempt == 1 else ""))
                    if attempt == 2:
                        raise
            topology.verify(preset, res.sections.get("topology", ""))
            x = w.parse(res.sections.get("output", ""))[w.metric]
            values[v].append(x)
            runs.append({"variant": v, "boot": b, w.metric: x, "run_dir": str(res.run_dir)})
            log(f"  {v}: {w.metric} {x:g} {w.unit}")
    va, vb = variants
    r = stats.ratio(values[vb], values[va])
    lines = [f"{shlex.join(cmd)} on {preset.name}, one boot per sample, {a.boots} per kernel, "
             "alternating"]
    for v in variants:
        sm = stats.summarize(values[v])
        lines.append(f"  {v:<12} {w.metric} {sm.mean:.3f} ± {sm.ci95:.3f} {w.unit} (95% CI)  "
                     f"samples {', '.join(f'{x:.2f}' for x in values[v])}")
    lines.append(f"  {vb}/{va} = {r.value:.3f} [{r.low:.3f}, {r.high:.3f}]")
    for fb in failed_boots:
        lines.append(f"  failed boot (retried): {fb['variant']}: {fb['error']}")
    text = "\n".join(lines) + "\n"
    outdir = Path(a.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    name = a.name or f"kernels-{preset.name}-{'-'.join(variants)}"
    meta = {v: build.read_meta(v) for v in variants}
    (outdir / f"{name}.txt").write_text(text)
    (outdir / f"{name}.json").write_text(json.dumps(
        {"command": cmd, "preset": preset.name, "values": values, "runs": runs,
         "ratio": {"value": r.value, "low": r.low, "high": r.high}, "builds": meta,
         "failed_boots": failed_boots,
         "qemu_version": vm.qemu_version(), "host": report.host_info(),
         "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}, indent=2) + "\n")
    print(text, end="")
    print(f"wrote {outdir / (name + '.txt')}")
    return 0


def cmd_stress(a: argparse.Namespace) -> int:
    presets = [p for p in a.preset.split(",") if p]
    for name in presets:
        topology.get(name)  # unknown names fail before the build
    kernel, initrd = ensure_guest(a.variant, a.build, a.force)
    ok = True
    for name in presets:
        s, path = stress.run(name, a.seconds, kernel, initrd, variant=a.variant,
                             outdir=Path(a.outdir), append=a.append.split() if a.append else None)
        print(stress.report(s), end="")
        print(f"wrote {path}")
        ok = ok and s["passed"]
    return 0 if ok else 1


def cmd_asym_boot(a: argparse.Namespace) -> int:
    preset = asym.get(a.preset)
    if a.build:
        do_prepare(a.force)
        kernel = build.build(asym.VARIANT, arch="arm64")
    else:
        kernel = build.kernel_image(asym.VARIANT, arch="arm64")
    initrd = image.build_base("arm64")
    script = asym.smoke_script(preset, a.threads or preset.big, a.rounds)
    res = vm.run_script(script, preset, kernel, initrd, timeout=a.timeout, name="asym-boot",
                        cmdline=a.append.split() if a.append else None)
    obs = asym.verify(preset, res.sections.get("topology", ""))
    log(f"asym topology {preset.name} verified: capacities "
        f"{sorted(set(obs.cap.values()))}, SMT + SD_ASYM_CPUCAPACITY domains")
    sys.stdout.write(res.sections.get("placement", ""))
    return 0


def cmd_asym_bench(a: argparse.Namespace) -> int:
    if a.build:
        do_prepare(a.force)
    out = asym.bench(a.preset, [int(n) for n in a.threads.split(",")] if a.threads else None,
                     rounds=a.rounds, runs=a.runs, boots=a.boots, spin_ms=a.spin, idle_ms=a.idle,
                     build_them=a.build, name=a.name, outdir=Path(a.outdir),
                     concurrent=a.wakers)
    print(out["table"], end="")
    print(f"wrote {out['txt']}, {out['json']}")
    return 0


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


def parser() -> argparse.ArgumentParser:
    # allow_abbrev off: `suite --preset X` must be an error, not `--presets X`.
    p = argparse.ArgumentParser(prog="idlesteal", description=__doc__, allow_abbrev=False)
    sub = p.add_subparsers(dest="command", required=True)

    def command(name: str, **kw: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, allow_abbrev=False, **kw)

    def variant(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--variant", default="base", help="kernel variant (configs/variants)")

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

    sp = command("fetch", help="download + verify + extract the Debian kernel source")
    sp.set_defaults(func=cmd_fetch)

    sp = command("prepare", help="work tree at base + patches/series")
    sp.add_argument("--force", action="store_true",
                    help="reset the tree to base + series even if that discards commits")
    sp.set_defaults(func=cmd_prepare)

    sp = command("kernel", help="prepare, configure and build the guest kernel")
    variant(sp)
    sp.add_argument("--force", action="store_true", help="prepare --force")
    sp.add_argument("--no-prepare", action="store_true", help="build the tree as it is")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all of make's output")
    sp.set_defaults(func=cmd_kernel)

    sp = command("check-series", help="build every prefix of the series (bisectability)")
    variant(sp)
    sp.add_argument("-v", "--verbose", action="store_true")
    sp.set_defaults(func=cmd_check_series)

    sp = command("image", help="build the base initramfs")
    sp.add_argument("--arch", default="x86_64", choices=["x86_64", "arm64"])
    sp.set_defaults(func=cmd_image)

    sp = command("presets", help="list topology presets")
    sp.set_defaults(func=cmd_presets)

    sp = command("boot", help="boot a preset, verify topology, run a command")
    guest(sp)
    sp.add_argument("--cmd", help="shell commands to run in the guest")
    sp.add_argument("--script", help="file with shell commands to run in the guest")
    sp.add_argument("--tools", default="", help=f"extra programs in the image "
                    f"(comma-separated: {', '.join(image.TOOLS)})")
    sp.add_argument("--timeout", type=float, default=600, help="script timeout (s)")
    sp.set_defaults(func=cmd_boot)

    sp = command("bench", help="A/B sweep of a workload in one boot")
    guest(sp)
    sp.add_argument("--workload", default="hackbench",
                    help=f"one of: {', '.join(workload.WORKLOADS)}")
    sp.add_argument("--levels", "--groups", default="1,2,4",
                    help="comma-separated load levels (hackbench/perf groups, sysbench "
                    "threads, wakelat messengers)")
    sp.add_argument("--size", "--loops", type=int, default=0,
                    help="work per run (hackbench/perf loops, sysbench events or locks, "
                    "wakelat seconds); default: the workload's")
    sp.add_argument("--reps", type=int, default=3, help="repetitions per side and group count")
    sp.add_argument("--a", default="NO_NI_RANDOM", help="side A sched features (baseline)")
    sp.add_argument("--b", default="NI_RANDOM", help="side B sched features")
    sp.add_argument("--warmup", type=int, default=1, help="discarded warm-up runs")
    sp.add_argument("--no-alternate", action="store_true",
                    help="always run A before B (default alternates per repetition)")
    sp.add_argument("--extra-args", "--hackbench-args", default="",
                    help="extra arguments for the workload's command")
    sp.add_argument("--name", help="results/<name>.{json,txt,png}")
    sp.add_argument("--outdir", default=str(paths.results_dir()))
    sp.add_argument("--timeout", type=float, default=0, help="guest timeout (s)")
    sp.set_defaults(func=cmd_bench)

    sp = command("suite", help="the benchmark suite (configs/bench.suite): one A/B "
                 "boot per entry, then results/summary.txt")
    guest(sp, preset=False)
    sp.set_defaults(variant="steal")
    sp.add_argument("--file", default="", help="suite file (default configs/bench.suite)")
    sp.add_argument("--presets", default="", help="only these presets (comma-separated)")
    sp.add_argument("--workloads", default="", help="only these workloads (comma-separated)")
    sp.add_argument("--reps", type=int, default=5, help="repetitions per side and level")
    sp.add_argument("--a", default="NO_STEAL", help="side A sched features (baseline)")
    sp.add_argument("--b", default="STEAL", help="side B sched features")
    sp.add_argument("--warmup", type=int, default=1, help="discarded warm-up runs")
    sp.add_argument("--no-alternate", action="store_true")
    sp.add_argument("--extra-args", default="", help="extra arguments for every command")
    sp.add_argument("--outdir", default=str(paths.results_dir()))
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
