"""The `idlesteal` command: argument parsing and printing only.

Every action is a function of another module (tree, build, kernels, image,
vm, bench, suite, stress, asym, collect, compare) that takes plain values and
returns a result.  Before any of them runs, in this order:

1. argparse with the checkers of args.py as `type=`: every option's value
   on its own (ranges, names, feature words, presets, files);
2. needs.problem(): the interpreter has what the command needs (scipy,
   matplotlib), else the line with the command that works, exit status 1;
3. the command's check_*(): what needs two options or a file's content
   (--command with --metric, a suite file and its --presets).

A bad argument in 1 or 3 is one line, `idlesteal CMD: error: argument
--OPT: invalid value 'V' (want ...)`, exit status 2, and nothing is
fetched, built, booted or written.  Errors later, meant for the user, are
HarnessError: one message, exit status 1.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, NoReturn

from .commands import args, needs
from .runs import asym, bench, collect, host, hostsbs, kernels, sidebyside, stress, suite
from . import bases, paths
from .kernel import build, kconfig, source, tree
from .report import compare, estimate
from .guest import image, topology, vm
from .scx import peers, own as scx
from .measure import workload
from .commands.args import UsageError, one_line
from .util import HarnessError, Stopwatch, log


# ---------------------------------------------------------------- checks after parsing

@contextmanager
def _arg(option: str, value: object, want: str = "") -> Iterator[None]:
    """A HarnessError raised inside is a bad value of `option`."""
    try:
        yield
    except UsageError:
        raise
    except HarnessError as e:
        raise UsageError(option, value, f"{want}{': ' if want else ''}{one_line(str(e))}") \
            from None


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
        with _arg("--command", a.command_template):
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


# --a / --b when not given (None in the namespace: host mode tells the two apart)
DEFAULT_A, DEFAULT_B = ("NO_STEAL",), ("STEAL",)


def _spec(a: argparse.Namespace, wname: str, levels: list[int], size: int | None,
          custom: dict | None = None, files: tuple[str, ...] = ()) -> bench.BenchSpec:
    spec = bench.BenchSpec(
        a=bench.Side("A", a.a if a.a is not None else DEFAULT_A),
        b=bench.Side("B", a.b if a.b is not None else DEFAULT_B),
        levels=levels, size=size or 0, reps=a.reps,
        alternate=not a.no_alternate, warmup=a.warmup,
        extra_args=a.extra_args.split(), workload=wname, custom=custom,
        files=list(files), waste=a.waste)
    if not spec.size:
        spec.size = spec.wl.default_size
    return spec


def _tools_present(a: argparse.Namespace, tools: tuple[str, ...] | list[str]) -> None:
    """The host programs an image will carry exist (before any build; a
    dry run needs none)."""
    if getattr(a, "dry_run", False):
        return
    for t in tools:
        host, pkg = image.TOOLS[t]
        if not Path(host).exists():
            raise HarnessError(f"{host} is missing ({t} goes into the guest image); install "
                               f"it with `make deps` or `sudo apt-get install -y {pkg}`")


def _load_suite(a: argparse.Namespace, default: Path) -> tuple[Path, list[suite.Entry]]:
    path = Path(a.suite_file) if a.suite_file else default
    with _arg("--suite-file", str(path), "a suite file"):
        return path, suite.load(path)


def _select(a: argparse.Namespace, path: Path, entries: list[suite.Entry]) -> list[suite.Entry]:
    """The entries --presets and --workloads pick; every name must be in the file."""
    have_p = list(dict.fromkeys(e.preset for e in entries))
    have_w = list(dict.fromkeys(e.workload for e in entries))
    ps, ws = a.presets or [], a.workloads or []
    if any(p not in have_p for p in ps):
        raise UsageError("--presets", ",".join(ps), f"presets of {path}: {', '.join(have_p)}")
    if any(w not in have_w for w in ws):
        raise UsageError("--workloads", ",".join(ws), f"workloads of {path}: "
                         f"{', '.join(have_w)}")
    with _arg("--presets/--workloads", f"{','.join(ps)}/{','.join(ws)}",
              f"a preset and a workload that share an entry of {path}"):
        return suite.select(entries, ",".join(ps), ",".join(ws))


def check_none(a: argparse.Namespace) -> None:
    """Every argument of the command is checked by its type= alone."""


def _check_host(a: argparse.Namespace, guest_only: tuple[tuple[str, object, bool], ...]) -> None:
    """--host leaves out what picks or builds a guest; --max-load and
    --force-load go with --host only."""
    if a.host:
        for option, value, given in guest_only:
            if given:
                raise UsageError(option, value, f"no {option} with --host: the machine is the "
                                 "one you are on, its kernel the running one")
        return
    for option, value in (("--max-load", None if a.max_load is None else f"{a.max_load:g}"),
                          ("--force-load", a.force_load or None)):
        if value is not None:
            raise UsageError(option, value, "it only with --host")


def check_bench(a: argparse.Namespace) -> None:
    _check_host(a, (("--preset", a.preset, a.preset != "2x2x2"),
                    ("--variant", a.variant, a.variant != "steal"),
                    ("--append", a.append, bool(a.append)), ("--force", True, a.force),
                    ("--lock-stat", True, a.lock_stat), ("--stage", True, a.stage)))
    if a.lock_stat and not _fragments_set(a.variant, "CONFIG_LOCK_STAT"):
        raise UsageError("--lock-stat", True, f"it with a kernel variant that has "
                         f"CONFIG_LOCK_STAT (--variant lockstat), not {a.variant}")
    a.explicit_ab = a.a is not None or a.b is not None
    wname, custom = _workload(a)
    a.spec = _spec(a, wname, a.levels, a.size, custom, tuple(a.file))
    a.spec.lock_stat = a.lock_stat
    w = a.spec.wl
    if not a.host:      # the host's own programs: `command -v` in the script says
        _tools_present(a, [w.binary] if w.binary in image.TOOLS else [])
    if a.name is None:
        a.name = f"{time.strftime('%Y%m%d-%H%M%S')}-{'host' if a.host else a.preset}-" \
            f"{a.spec.workload}"


def check_suite(a: argparse.Namespace) -> None:
    path, a.entries = _load_suite(a, suite.default_file())
    if a.host and a.presets:
        raise UsageError("--presets", ",".join(a.presets), "no --presets with --host: a preset "
                         "is a guest's topology; the host runs each workload of the suite file "
                         "once on its own CPUs (--workloads picks them)")
    _check_host(a, (("--variant", a.variant, a.variant != "steal"),
                    ("--append", a.append, bool(a.append)), ("--force", True, a.force)))
    if a.outdir is None:
        a.outdir = str(suite.host_dir() if a.host else paths.results_dir())
    if a.host:
        return _check_suite_host(a, path)
    if a.summary_only:      # "not run yet" lists only what --presets/--workloads pick
        a.selected = _select(a, path, a.entries) if a.presets or a.workloads else a.entries
        return
    a.specs = []
    for e in _select(a, path, a.entries):
        with _arg("--suite-file", str(path), f"entry {e.name}"):
            a.specs.append((e, topology.get(e.preset), _spec(
                a, e.workload, e.levels, e.size, e.custom, e.files + tuple(a.file))))
    _tools_present(a, sorted({s.wl.binary for _, _, s in a.specs if s.wl.binary in image.TOOLS}))


def _check_suite_host(a: argparse.Namespace, path: Path) -> None:
    """suite --host: one entry per workload of the file (suite.host_entries())."""
    a.explicit_ab = a.a is not None or a.b is not None
    a.entries, a.left_out = suite.host_entries(a.entries)
    a.selected = _select(a, path, a.entries) if a.workloads else a.entries
    a.specs = [(e, None, _spec(a, e.workload, e.levels, e.size, e.custom,
                               e.files + tuple(a.file))) for e in a.selected]


def check_side_by_side(a: argparse.Namespace) -> None:
    _check_host(a, (("--stage", True, a.stage),))
    if a.host:
        for option, value in (("--variant", a.variant if a.variant != scx.VARIANT else None),
                              ("--contender", ",".join(a.contender[0].features) and
                               f"{a.contender[0].name}={','.join(a.contender[0].features)}"
                               if a.contender else None)):
            if value is not None:
                raise UsageError(option, value, f"no {option} with --host: the kernel is "
                                 "the running one, and it shows its own offer")
    seen: set[str] = set()
    for c in a.contender:
        text = f"{c.name}={','.join(c.features)}"      # as given (parse_contender)
        if c.name in seen:
            raise UsageError("--contender", text, f"each NAME defined once ({c.name} is "
                             "defined twice)")
        seen.add(c.name)
    path, entries = _load_suite(a, sidebyside.default_suite())
    # summary.txt holds every preset of the file, not only those --presets ran
    a.summary_presets = list(dict.fromkeys(e.preset for e in entries))
    with _arg("--sched", ",".join(a.sched), "built-in schedulers or ones of --contender"):
        a.contenders = sidebyside.contenders(a.sched, a.contender)
    scx_ones = sidebyside.needs_sched_ext(a.contenders)
    if scx_ones and not _has_sched_ext(a.variant):
        raise UsageError("--variant", a.variant, f"a kernel variant with sched_ext (--variant "
                         f"{scx.VARIANT}) for the sched_ext schedulers {', '.join(scx_ones)}, "
                         f"or only EEVDF schedulers in --sched on {a.variant}")
    if a.host:      # one run, each workload of the file once (suite.host_entries())
        if a.presets:
            raise UsageError("--presets", ",".join(a.presets), "no --presets with --host: a "
                             "preset is a guest's topology; the host runs each workload of "
                             "the suite file once on its own CPUs (--workloads picks them)")
        entries, a.left_out = suite.host_entries(entries)
    if a.outdir is None:
        a.outdir = str(suite.host_dir() / "side-by-side" if a.host else sidebyside.results_dir())
    with _arg("--suite-file", str(path), "entries for side by side"):
        a.specs = sidebyside.specs(_select(a, path, entries), a.contenders, a.reps,
                                   waste=not a.no_waste)
    if a.stage and len(a.specs) != 1:
        raise UsageError("--stage", True, f"one preset (--presets NAME): a staged run is one "
                         f"boot, and these entries need {len(a.specs)}: "
                         f"{', '.join(s.preset for s in a.specs)}")
    if not a.host:      # host mode builds no image
        _tools_present(a, sorted({e.wl.binary for s in a.specs for e in s.entries
                               if e.wl.binary in image.TOOLS}))


def check_kernels(a: argparse.Namespace) -> None:
    w = workload.get(a.workload)
    _tools_present(a, [w.binary] if w.binary in image.TOOLS else [])


def check_boot(a: argparse.Namespace) -> None:
    if a.cmd is not None and a.script is not None:
        raise UsageError("--script", a.script, "--cmd or --script, not both")
    _tools_present(a, a.tools)


def _fragments_set(variant: str, option: str) -> bool:
    """The variant's fragments set `option` =y (known before any build; the
    build checks that every option of them stuck)."""
    frags = kconfig.merge([kconfig.parse_file(f) for f in build.variants()[variant]])
    return frags.get(option) == "y"


def _has_sched_ext(variant: str) -> bool:
    """The variant's fragments turn sched_ext on."""
    return _fragments_set(variant, "CONFIG_SCHED_CLASS_EXT")


def check_stress(a: argparse.Namespace) -> None:
    if a.scx and not _has_sched_ext(a.variant):
        raise UsageError("--scx", " ".join(a.scx), f"it with a kernel variant that has "
                         f"sched_ext (--variant {scx.VARIANT}), not {a.variant}")
    if a.steal != "toggle" and not stress.series_kernel(a.variant):
        raise UsageError("--steal", a.steal, f"it with a kernel variant that has the series "
                         f"(--variant {a.variant} is built without it: no STEAL feature)")


def check_asym_bench(a: argparse.Namespace) -> None:
    if a.wakers:
        if a.threads is not None:
            raise UsageError("--threads", ",".join(map(str, a.threads)),
                             "no --threads with --wakers (two threads, placed by the preset)")
        with _arg("--wakers", True, f"a preset with SMT, 2 big and 2 little cores"):
            asym.get(a.preset).race_cpus()


def check_collect(a: argparse.Namespace) -> None:
    with _arg("run_dir", a.run_dir, "a kept run directory, build/runs/<id>/, with its run.json"):
        collect.read_meta(Path(a.run_dir))


def check_compare(a: argparse.Namespace) -> None:
    a.rows = []
    for option, spec in (("old", a.old), ("new", a.new)):
        with _arg(option, spec, "a suite's summary.json, a results directory or REV:path"):
            a.rows.append(compare.rows_by_key(compare.read_text(spec, paths.REPO), spec))


def _plan_line(name: str, preset: topology.Preset, spec: bench.BenchSpec, outdir: Path
               ) -> tuple[float, str]:
    runs = len(bench.plan(spec))
    secs, src = estimate.est_seconds(name, preset.name, runs, outdir)
    w = spec.wl
    return secs, (f"{name}: 1 boot of {preset.name} ({preset.ncpus} vCPUs), {runs} runs "
                  f"({spec.warmup} warm-up) of {w.name} {w.level} "
                  f"{','.join(map(str, spec.levels))} {w.size_name} {spec.size}, "
                  f"A = {spec.a.name}, B = {spec.b.name}"
                  + ("; /proc/lock_stat around each run" if spec.lock_stat else "")
                  + f"; ~{estimate.fmt_duration(secs)} ({src})")


# ---------------------------------------------------------------- commands

def cmd_fetch(a: argparse.Namespace) -> int:
    info = source.fetch()
    print(f"{info.package} {info.version} sha256 {info.sha256}\n  deb: {info.deb}\n  tarball: {info.tarball}")
    return 0


def cmd_prepare(a: argparse.Namespace) -> int:
    tree.prepare(a.force)
    return 0


def cmd_kernel(a: argparse.Namespace) -> int:
    if not a.no_prepare:
        tree.prepare(a.force)
    print(build.build(a.variant, verbose=a.verbose))
    return 0


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


def _unbuilt(cs: list[sidebyside.Contender]) -> list[str]:
    """Loaders of the contenders not built yet."""
    return [c.binary for c in cs if c.binary and not (
        peers.binary(c.binary) if c.binary in peers.PEERS else scx.binary(c.binary)).exists()]


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
        own = tuple(b for b in unbuilt if b not in peers.PEERS)
        if own:
            scx.build_schedulers(names=tuple(dict.fromkeys(own)), verbose=a.verbose)
        published = tuple(b for b in unbuilt if b in peers.PEERS)
        if published:
            peers.ensure(published, verbose=a.verbose)
    out = hostsbs.side_by_side(spec, outdir, max_load=host.DEFAULT_MAX_LOAD
                               if a.max_load is None else a.max_load,
                               force_load=a.force_load, show=_show)
    if out is None:
        return 0
    print(out["table"], end="")
    print("wrote " + ", ".join(str(v) for v in out.values() if isinstance(v, Path)))
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
        own = tuple(c.binary for c in cs if c.binary and c.binary not in peers.PEERS)
        if own:
            scx.build_schedulers(names=tuple(dict.fromkeys(own)), verbose=a.verbose)
        published = tuple(c.binary for c in cs if c.binary in peers.PEERS)
        if published:
            peers.ensure(published, verbose=a.verbose)
    kernel = build.bzimage(a.variant)
    if a.stage:
        return _staged(lambda: sidebyside.run(specs[0], kernel, a.variant, outdir))
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
    print(image.build_base(a.arch, files=tuple(a.file)))
    return 0


def cmd_presets(a: argparse.Namespace) -> int:
    for p in topology.PRESETS.values():
        print(p.describe())
    for ap in asym.PRESETS.values():
        print(f"{ap.describe()} [asym-boot/asym-bench]")
    return 0


def cmd_boot(a: argparse.Namespace) -> int:
    preset = topology.get(a.preset)
    user = Path(a.script).read_text() if a.script else (a.cmd or "")
    kernel = kernels.ensure(a.variant, a.build, a.force)
    initrd = image.build_base(tools=tuple(a.tools), files=tuple(a.file))
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


def _wrote(out: dict) -> str:
    """The files a result went to (no "png": util.pyplot() said why)."""
    return "wrote " + ", ".join(str(out[k]) for k in ("txt", "json", "png", "timeline_A",
                                                       "timeline_B") if k in out)


def _show(text: str) -> None:
    print(text.rstrip("\n"), flush=True)


def _bench_host(a: argparse.Namespace) -> int:
    """bench --host: on this machine (idlesteal/runs/host.py, docs/host.md)."""
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
                     force_load=a.force_load, timeout=a.timeout or 0, show=_show)
    print(out["table"], end="")
    print(_wrote(out))
    return 0


def _staged(run: Callable[[], object]) -> int:
    """--stage: `run` writes its run directory and stops before booting
    (vm.stage()); say how to boot it elsewhere and collect it here."""
    with vm.stage():
        try:
            run()
        except vm.Staged as st:
            rd = st.run_dir
            print(f"staged {rd}: run.sh, initrd.cpio.gz, bzImage and {vm.BOOT_SCRIPT}; nothing "
                  f"booted.\n  Copy the directory to a machine with QEMU and run `sh "
                  f"{vm.BOOT_SCRIPT}` there (QEMU_DATADIR=DIR: QEMU's firmware directory, "
                  f"when its own is not installed); bring back console.log, output.log, "
                  f"qemu.log and {vm.BOOTED_ON}, then: python3 -m idlesteal collect {rd}")
            return 0
    raise HarnessError("--stage: the run finished without staging a boot (a bug)")


def cmd_bench(a: argparse.Namespace) -> int:
    if a.host:
        return _bench_host(a)
    preset = topology.get(a.preset)
    spec = a.spec
    outdir = Path(a.outdir)
    secs, line = _plan_line(a.name, preset, spec, outdir)
    if a.dry_run:
        print(f"plan: {line}\n  kernel: variant {a.variant}"
              + (", prepared and built first if needed" if a.build else ", as built"))
        return 0
    log(f"plan: {line}")
    kernel = kernels.ensure(a.variant, a.build, a.force)
    if a.stage:
        return _staged(lambda: bench.run_ab(spec, preset, kernel, a.variant, a.name, outdir,
                                            a.append, a.timeout or 0))
    out = bench.run_ab(spec, preset, kernel, a.variant, a.name, outdir, a.append,
                       a.timeout or 0)
    print(out["table"], end="")
    print(_wrote(out))
    return 0


def _summary_of(entries: list[suite.Entry], selected: list[suite.Entry], outdir: Path
                ) -> tuple[str, Path, Path]:
    """suite.write_summary() of every entry's results, with "not run yet"
    naming only the `selected` entries' missing ones (issue 19)."""
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
    """suite --host: the file's workloads on this machine (host.suite(), docs/host.md)."""
    outdir = Path(a.outdir)
    meta = {"mode": "host", "machine": platform.node(), "kernel": platform.release(),
            "suite_file": str(a.suite_file or suite.default_file()), "left_out": a.left_out}
    if not a.summary_only:
        runs = [len(bench.plan(s)) for _, _, s in a.specs]
        secs = sum(estimate.est_seconds(e.name, "host", n, outdir)[0]
                   for (e, _, _), n in zip(a.specs, runs))
        print(f"suite --host: {len(a.specs)} entr{'y' if len(a.specs) == 1 else 'ies'} on this "
              f"machine (the running kernel), {sum(runs)} runs, ~{estimate.fmt_duration(secs)}; "
              f"results in {outdir}")
        for line in a.left_out:
            print(f"  {line}")
        if a.dry_run:
            for (e, _, s), n in zip(a.specs, runs):
                missing = host.program_missing(s, host.paths_of_files(s.files))
                print(f"  {e.name}: {n} runs of {s.wl.name} {s.wl.level} "
                      f"{','.join(map(str, s.levels))} {s.wl.size_name} {s.size}, A = "
                      f"{s.a.name}, B = {s.b.name} if the kernel has them"
                      + (f"; would be skipped: {missing}" if missing else ""))
            return 0
        res = host.suite([(e.name, s) for e, _, s in a.specs], outdir,
                         explicit_ab=a.explicit_ab, max_load=host.DEFAULT_MAX_LOAD
                         if a.max_load is None else a.max_load, force_load=a.force_load,
                         show=_show)
        if res.stopped and not res.done and not res.failed:
            raise HarnessError(res.stopped)
        meta.update(skipped=[f"{n}: {w}" for n, w in res.skipped], stopped=res.stopped,
                    failed=[n for n, _ in res.failed])
    text, txt, _ = suite.write_summary(a.entries, outdir, meta, a.selected)
    print(text, end="")
    print(f"wrote {txt}")
    if not a.summary_only and (res.stopped or res.failed):
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
    text, txt, _ = suite.write_summary(a.entries, outdir)
    print(text, end="")
    print(f"wrote {txt}")
    if failed:
        print(f"{len(failed)} suite entr{'y' if len(failed) == 1 else 'ies'} failed: "
              f"{', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def cmd_kernels(a: argparse.Namespace) -> int:
    """Same command on two kernel variants, one boot per sample, alternating."""
    out = kernels.compare(a.variants, topology.get(a.preset), workload.get(a.workload),
                          a.level, a.size, a.boots, prepare=a.build, force=a.force,
                          timeout=a.timeout, name=a.name or "", outdir=Path(a.outdir),
                          runs=a.runs)
    print(out.text, end="")
    print(f"wrote {out.txt}")
    return 0


def cmd_stress(a: argparse.Namespace) -> int:
    presets = [topology.get(p) for p in a.preset]
    loader: tuple[str, ...] = a.scx or ()
    kernel, initrd = kernels.ensure_guest(a.variant, a.build, a.force)
    if loader:
        if not build.config_enabled(a.variant, "CONFIG_SCHED_CLASS_EXT"):
            raise HarnessError(f"--scx needs a kernel with sched_ext (--variant {scx.VARIANT}), "
                               f"not {a.variant}")
        bins = scx.build_schedulers(a.variant, (loader[0],)) if a.build \
            else {loader[0]: scx.binary(loader[0], a.variant)}
        initrd = image.build_base(files=scx.image_files(bins))
    ok = True
    summaries = []
    for i in range(a.repeat):
        for p in presets:
            if a.repeat > 1:
                log(f"stress: run {i + 1} of {a.repeat} on {p.name}")
            s, path = stress.run(p.name, a.seconds, kernel, initrd, variant=a.variant,
                                 outdir=Path(a.outdir),
                                 append=a.append.split() if a.append else None,
                                 kcsan_races=build.config_enabled(a.variant, "CONFIG_KCSAN"),
                                 scx_loader=loader, steal=a.steal)
            print(stress.report(s), end="")
            print(f"wrote {path}")
            ok = ok and s["passed"]
            summaries.append(s)
    if a.repeat > 1 or len(presets) > 1 or any(s.get("known_mainline_warnings")
                                               for s in summaries):
        print(stress.tally(summaries))
    return 0 if ok else 1


def cmd_asym_boot(a: argparse.Namespace) -> int:
    preset = asym.get(a.preset)
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
    if a.build:
        tree.prepare(a.force)
    out = asym.bench(a.preset, a.threads, rounds=a.rounds, runs=a.runs, boots=a.boots,
                     spin_ms=a.spin, idle_ms=a.idle, build_them=a.build, name=a.name,
                     outdir=Path(a.outdir), concurrent=a.wakers)
    print(out["table"], end="")
    print(f"wrote {out['txt']}, {out['json']}")
    return 0


def cmd_collect(a: argparse.Namespace) -> int:
    out = collect.collect(Path(a.run_dir), Path(a.outdir) if a.outdir else None)
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
    text = compare.table(*compare.compare(*a.rows), old_name=a.old_name, new_name=a.new_name)
    print(text, end="")
    if a.out:
        Path(a.out).write_text(f"# idlesteal compare {a.old} {a.new}\n" + text)
        print(f"wrote {a.out}")
    return 0


# ---------------------------------------------------------------- parser

class Parser(argparse.ArgumentParser):
    """argparse with its errors on one line: `PROG: error: MESSAGE (see
    PROG --help)`, exit status 2 (no usage block in front)."""

    def error(self, message: str) -> NoReturn:
        if "ignored explicit argument" in message:
            message += " (want none: a flag takes no value)"
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def parser() -> Parser:
    # allow_abbrev off: `suite --preset X` must be an error, not `--presets X`.
    p = Parser(prog="idlesteal", description=__doc__, allow_abbrev=False,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", type=args.base, default=None,
                   help=f"kernel base, before the command: {bases.known()} "
                        f"(idlesteal/bases.py; default: ${bases.ENV}, else {bases.DEFAULT}); "
                        "each base builds in a directory of its own")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)

    def command(name: str, help: str, func: Callable[[argparse.Namespace], int],
                check: Callable[[argparse.Namespace], None] = check_none) -> Parser:
        sp = sub.add_parser(name, allow_abbrev=False, help=help)
        sp.set_defaults(func=func, check=check)
        return sp

    def variant(sp: argparse.ArgumentParser, default: str = "steal") -> None:
        sp.add_argument("--variant", default=default, type=args.variant,
                        help=f"kernel variant (configs/variants; default {default})")

    def files(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--file", action="append", default=[], metavar="HOST[:GUEST]",
                        type=args.file_spec,
                        help="put a host file or directory into the guest image (repeatable; "
                        "executables get their shared libraries; default guest path "
                        "/usr/local/bin/NAME for a file, /opt/NAME for a directory)")

    def outdir(sp: argparse.ArgumentParser, default: Path | None, help: str = "") -> None:
        sp.add_argument("--outdir", default=None if default is None else str(default),
                        type=args.outdir, help=help or f"where the results go (default {default})")

    def timeout(sp: argparse.ArgumentParser, default: float | None, help: str) -> None:
        sp.add_argument("--timeout", type=args.seconds, default=default,
                        help=f"{help} (s, at most {args.MAX_SECONDS})")

    def guest(sp: argparse.ArgumentParser, preset: bool = True, one_variant: bool = True) -> None:
        """Options of the commands that boot a guest; `suite` takes its presets
        from the suite file and `kernels` two variants, so they leave out the
        single --preset / --variant rather than accept and ignore them."""
        if one_variant:
            variant(sp)
        if preset:
            sp.add_argument("--preset", default="2x2x2", type=args.preset,
                            help="topology preset (see `presets`)")
        sp.add_argument("--no-build", dest="build", action="store_false",
                        help="use the kernel already built, do not prepare/build")
        sp.add_argument("--force", action="store_true", help="prepare --force")
        sp.add_argument("--append", default="", type=args.cmdline,
                        help="extra kernel command line")

    def host_options(sp: argparse.ArgumentParser, without: str = "without the series, the "
                     "kernel as it is on both sides") -> None:
        sp.add_argument("--host", action="store_true",
                        help="run on this machine and its running kernel, no VM (root; "
                        "docs/host.md): the kernel's offer first, the machine's state put "
                        f"back after; {without}")
        sp.add_argument("--max-load", default=None, type=args.max_load,
                        help="with --host: stop when more than this fraction of the CPUs is "
                        f"already busy (default {host.DEFAULT_MAX_LOAD})")
        sp.add_argument("--force-load", action="store_true",
                        help="with --host: run even above --max-load (the load is recorded)")

    def stage_option(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--stage", action="store_true",
                        help="write the boot's run directory (script, initrd, kernel, boot.sh) "
                        "and stop: boot it on another machine with QEMU, then `idlesteal "
                        "collect` it here (docs/harness.md)")

    def filters(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--presets", default=None, type=args.presets,
                        help="only these presets (comma-separated)")
        sp.add_argument("--workloads", default=None, type=args.names,
                        help="only these workloads (comma-separated)")

    def ab(sp: argparse.ArgumentParser, reps: int, out: Path | None = paths.results_dir(),
           out_help: str = "") -> None:
        sp.add_argument("--reps", type=args.reps, default=reps,
                        help=f"repetitions per side and load level (default {reps})")
        sp.add_argument("--a", default=None, type=args.features,
                        help="side A sched features (baseline; words of kernel/sched/"
                        "features.h, NO_ to turn one off; default NO_STEAL)")
        sp.add_argument("--b", default=None, type=args.features,
                        help="side B sched features (default STEAL)")
        sp.add_argument("--warmup", type=args.warmup, default=1, help="discarded warm-up runs")
        sp.add_argument("--no-alternate", action="store_true",
                        help="always run A before B (default alternates per repetition)")
        sp.add_argument("--waste", default="both", type=args.waste_mode,
                        help="sides traced for the wasted-CPU-time measure (docs/waste.md): "
                        "both (default), A, B (the tracing overhead: the same features on "
                        "both sides, one traced) or off")
        sp.add_argument("--dry-run", action="store_true",
                        help="print what would run and how long it should take, run nothing")
        outdir(sp, out, out_help)
        files(sp)

    sp = command("fetch", "download + verify + extract the Debian kernel source", cmd_fetch)

    sp = command("prepare", "work tree at base + the base's series (patches/series; "
                 "a port's: patches/ports/BASE/series)", cmd_prepare)
    sp.add_argument("--force", action="store_true",
                    help="reset the tree to base + series even if that discards commits")

    sp = command("kernel", "prepare, configure and build the guest kernel", cmd_kernel)
    variant(sp, "base")
    sp.add_argument("--force", action="store_true", help="prepare --force")
    sp.add_argument("--no-prepare", action="store_true", help="build the tree as it is")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all of make's output")

    sp = command("scx", "build the scx kernel and the sched_ext schedulers (docs/scx.md)",
                 cmd_scx)
    sp.add_argument("--sched", metavar="A,B", type=args.scx_schedulers,
                    help=f"only these (default: {','.join(scx.SCHEDULERS + tuple(peers.PEERS))})")
    sp.add_argument("--no-kernel", action="store_true", help="use the scx kernel as built")
    sp.add_argument("--no-prepare", action="store_true", help="build the tree as it is")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all of make's output")

    sp = command("side-by-side", "EEVDF +/- STEAL and sched_ext schedulers, one boot "
                 "per preset (docs/scx.md)", cmd_side_by_side, check_side_by_side)
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
    sp.add_argument("--variant", default=scx.VARIANT, type=args.variant,
                    help=f"kernel variant (configs/variants; default {scx.VARIANT}); one "
                    "without sched_ext (e.g. steal) takes EEVDF schedulers only")
    sp.add_argument("--suite-file", type=args.existing_file,
                    help="entries to run (default configs/scx.suite)")
    filters(sp)
    sp.add_argument("--reps", type=args.reps2, default=4, help="repetitions per scheduler "
                    "(default %(default)s)")
    outdir(sp, None, f"where the results go (default {sidebyside.results_dir()}; with --host "
           f"{suite.host_dir()}/side-by-side)")
    sp.add_argument("--no-build", dest="build", action="store_false",
                    help="use the scx kernel and schedulers as built")
    sp.add_argument("--no-waste", action="store_true",
                    help="do not trace the runs (no wasted-CPU-time column, docs/waste.md)")
    sp.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all build output")
    stage_option(sp)
    host_options(sp, "each workload of the suite file once; a scheduler the kernel cannot "
                 "run (eevdf+steal without the series, sched_ext ones without sched_ext) is "
                 "left out with its reason")

    sp = command("check-series", "build every prefix of the series (bisectability)",
                 cmd_check_series)
    variant(sp, "base")
    sp.add_argument("-v", "--verbose", action="store_true")

    sp = command("image", "build the base initramfs", cmd_image)
    sp.add_argument("--arch", default="x86_64", choices=["x86_64", "arm64"])
    files(sp)

    sp = command("presets", "list topology presets", cmd_presets)

    sp = command("boot", "boot a preset, verify topology, run a command", cmd_boot, check_boot)
    guest(sp)
    sp.add_argument("--cmd", help="shell commands to run in the guest")
    sp.add_argument("--script", type=args.existing_file,
                    help="file with shell commands to run in the guest")
    sp.add_argument("--tools", default="", type=args.tools, help=f"extra programs in the image "
                    f"(comma-separated: {', '.join(image.TOOLS)})")
    files(sp)
    timeout(sp, 600, "script timeout")

    sp = command("bench", "A/B sweep of a workload in one boot (default: the steal "
                 "kernel, NO_STEAL against STEAL)", cmd_bench, check_bench)
    guest(sp)
    sp.add_argument("--workload", default=None, type=args.name,
                    help=f"one of: {', '.join(workload.WORKLOADS)} (default hackbench); "
                    "with --command, the name of your own (default custom)")
    sp.add_argument("--command", dest="command_template", default=None, type=args.template,
                    help="your own workload: a command template with {level} (and "
                    "optionally {size}), e.g. 'schbench -m {level} -r {size}'")
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
    ab(sp, reps=3)
    sp.add_argument("--extra-args", "--hackbench-args", default="", type=args.line,
                    help="extra arguments for the workload's command")
    sp.add_argument("--name", type=args.name,
                    help="results/<name>.{json,txt,png} (letters, digits, . _ -)")
    sp.add_argument("--lock-stat", action="store_true",
                    help="/proc/lock_stat's run queue lock over each run (contentions, "
                    "wait and hold time, sites; a variant with CONFIG_LOCK_STAT: lockstat)")
    timeout(sp, None, "guest timeout (default: 120 + 240 per run)")
    stage_option(sp)
    host_options(sp)

    sp = command("suite", "the benchmark suite (configs/bench.suite): one A/B "
                 "boot per entry, then results/summary.txt", cmd_suite, check_suite)
    guest(sp, preset=False)
    sp.add_argument("--suite-file", type=args.existing_file,
                    help="suite file (default configs/bench.suite)")
    filters(sp)
    ab(sp, reps=5, out=None, out_help=f"where the results go (default {paths.results_dir()}; "
       "with --host its host-<machine name>/)")
    sp.add_argument("--extra-args", default="", type=args.line,
                    help="extra arguments for every command")
    sp.add_argument("--summary-only", action="store_true",
                    help="only rebuild results/summary.txt from the results there")
    host_options(sp)

    sp = command("kernels", "one command on two kernel variants (alternating "
                 "boots), e.g. the guest config against defconfig", cmd_kernels, check_kernels)
    guest(sp, one_variant=False)
    sp.add_argument("--variants", default="steal,reference", type=args.variants2,
                    help="two comma-separated variants (configs/variants)")
    sp.add_argument("--workload", default="hackbench", type=args.builtin_workload)
    sp.add_argument("--level", type=args.level, default=1, help="load level (e.g. hackbench -g)")
    sp.add_argument("--size", type=args.size, default=2000, help="work (e.g. hackbench -l)")
    sp.add_argument("--boots", type=args.boots2, default=3, help="boots (samples) per kernel")
    sp.add_argument("--runs", type=args.runs, default=1,
                    help="runs per boot; the boot's sample is their median (default 1)")
    timeout(sp, 900, "guest timeout")
    sp.add_argument("--name", type=args.name, help="results/<name>.{txt,json}")
    outdir(sp, paths.results_dir())

    sp = command("stress", "debug kernel under hotplug, domain rebuilds, "
                 "throttling, affinity and feature churn while message passing", cmd_stress,
                 check_stress)
    guest(sp, preset=False)
    sp.set_defaults(variant=stress.VARIANT)
    sp.add_argument("--preset", default="2x2x2,2node", type=args.stress_presets,
                    help="topology presets, comma-separated (even number of >= 4 CPUs; "
                    "default %(default)s)")
    sp.add_argument("--seconds", type=args.stress_seconds, default=600,
                    help=f"load duration per preset (s, at most {args.MAX_SECONDS})")
    sp.add_argument("--scx", default=None, metavar="'LOADER ARGS'", type=args.scx_loader,
                    help="a sched_ext scheduler of ours in charge during the load "
                    "(e.g. scx_idlesteal; with --variant scx)")
    sp.add_argument("--steal", default="toggle", type=args.steal_mode,
                    help="toggle: STEAL on 3/4 of the time, switched every second "
                    "(default); off: NO_STEAL for the whole run")
    sp.add_argument("--repeat", default=1, metavar="N",
                    type=args.integer(1, args.MAX_BOOTS, "a number of boots"),
                    help="boot each preset N times in a row (default 1)")
    outdir(sp, stress.results_dir(), "where the JSON summaries go")

    def asym_guest(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--preset", default=asym.DEFAULT_PRESET, type=args.asym_preset,
                        help="asymmetric arm64 preset (see `presets`)")
        sp.add_argument("--no-build", dest="build", action="store_false",
                        help="use the arm64 kernel(s) already built")
        sp.add_argument("--force", action="store_true", help="prepare --force")

    sp = command("asym-boot", "boot an asymmetric-capacity arm64 preset, verify "
                 "capacities / SMT / asym domain, run a short placement round", cmd_asym_boot)
    asym_guest(sp)
    sp.add_argument("--threads", type=args.threads, default=None,
                    help="placement threads (default: big cores)")
    sp.add_argument("--rounds", type=args.rounds, default=50)
    timeout(sp, 600, "script timeout")
    sp.add_argument("--append", default="", type=args.cmdline, help="extra kernel command line")

    sp = command("asym-bench", "placement with and without the stable idle-core "
                 "patch on an asymmetric arm64 guest; results/asym/", cmd_asym_bench,
                 check_asym_bench)
    asym_guest(sp)
    sp.add_argument("--threads", default=None, type=args.thread_counts,
                    help="comma-separated thread counts (default: big cores, all cores)")
    sp.add_argument("--rounds", type=args.rounds, default=200, help="rounds per placement run")
    sp.add_argument("--runs", type=args.runs, default=3, help="placement runs per boot")
    sp.add_argument("--boots", type=args.boots, default=2, help="boots per kernel (alternating)")
    sp.add_argument("--spin", type=args.spin_ms, default=5, help="placement -s (ms)")
    sp.add_argument("--idle", type=args.idle_ms, default=20, help="placement -i (ms)")
    sp.add_argument("--wakers", action="store_true",
                    help="concurrent wakers on the little cores (placement -W), two threads "
                    "(no --threads)")
    sp.add_argument("--name", type=args.name, help="results/asym/<name>.{json,txt}")
    outdir(sp, asym.results_dir())

    sp = command("collect", "re-read a kept run directory (build/runs/<id>/) into "
                 "results, as `kunit.py parse` does", cmd_collect, check_collect)
    sp.add_argument("run_dir", type=args.existing_dir,
                    help="build/runs/<id>/ of a bench (guest or --host) or stress run")
    outdir(sp, None, "where the results go (default: where that kind of run writes them)")

    sp = command("compare", "two suite summaries side by side: did the second run "
                 "reproduce the first?", cmd_compare, check_compare)
    sp.add_argument("old", help="summary.json, results dir, or REV:path (git show), "
                    "e.g. HEAD:results/summary.json")
    sp.add_argument("new", nargs="?", default=str(paths.results_dir() / "summary.json"))
    sp.add_argument("--old-name", default="old", type=args.name)
    sp.add_argument("--new-name", default="new", type=args.name)
    sp.add_argument("--out", default=None, type=args.out_file,
                    help="also write the table to this file")

    sp = command("export", "write the tree's commits to the base's series directory "
                 "(patches/, a port's patches/ports/BASE/)", cmd_export)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        bases.current()                      # IDLESTEAL_BASE (make BASE=) names a base
    except HarnessError as e:
        print(f"idlesteal: error: {bases.ENV}: {e}", file=sys.stderr)
        return 2
    a = parser().parse_args(argv)            # every value on its own: exit 2
    problem = needs.problem(a.command, argv, computes=not (
        getattr(a, "dry_run", False) or getattr(a, "summary_only", False)))
    if problem:
        print(problem, file=sys.stderr)
        return 1
    try:
        a.check(a)                           # values that depend on each other: exit 2
    except UsageError as e:
        print(f"idlesteal {a.command}: error: {one_line(str(e))} "
              f"(see idlesteal {a.command} --help)", file=sys.stderr)
        return 2
    except HarnessError as e:
        print(f"idlesteal {a.command}: error: {e}", file=sys.stderr)
        return 1
    sw = Stopwatch()
    try:
        rc = a.func(a)
    except HarnessError as e:
        print(f"idlesteal {a.command}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    log(f"{a.command} finished in {sw.elapsed():.0f} s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
