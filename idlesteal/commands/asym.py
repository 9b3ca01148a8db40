"""The commands of the asymmetric-capacity arm64 guests:
asym-boot (boot a preset, verify its CPU capacities, SMT and the
SD_ASYM_CPUCAPACITY domain, run a short placement round) and asym-bench
(placement with and without the stable idle-core patch, alternating
boots; results/asym/).  Their options (the shared asym_guest() and an
add_*_opts() each), the check after parsing of asym-bench (--wakers
against --threads and the preset) and the runs (cmd_*).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..runs import asym
from ..kernel import build, tree
from ..guest import image, vm
from . import args, common, opts
from .args import UsageError
from ..util import log


def asym_guest(sp: argparse.ArgumentParser) -> None:
    """The options of both asym commands: preset, build, prepare --force."""
    sp.add_argument("--preset", default=asym.DEFAULT_PRESET, type=args.asym_preset,
                    help="asymmetric arm64 preset (see `presets`)")
    sp.add_argument("--no-build", dest="build", action="store_false",
                    help="use the arm64 kernel(s) already built")
    sp.add_argument("--force", action="store_true", help="prepare --force")


def add_asym_boot_opts(sp: argparse.ArgumentParser) -> None:
    asym_guest(sp)
    sp.add_argument("--threads", type=args.threads, default=None,
                    help="placement threads (default: big cores)")
    sp.add_argument("--rounds", type=args.rounds, default=50)
    opts.timeout(sp, 600, "script timeout")
    sp.add_argument("--append", default="", type=args.cmdline, help="extra kernel command line")


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


def add_asym_bench_opts(sp: argparse.ArgumentParser) -> None:
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
    opts.outdir(sp, asym.results_dir())


def check_asym_bench(a: argparse.Namespace) -> None:
    if a.wakers:
        if a.threads is not None:
            raise UsageError("--threads", ",".join(map(str, a.threads)),
                             "no --threads with --wakers (two threads, placed by the preset)")
        with common.arg("--wakers", True, "a preset with SMT, 2 big and 2 little cores"):
            asym.get(a.preset).race_cpus()


def cmd_asym_bench(a: argparse.Namespace) -> int:
    if a.build:
        tree.prepare(a.force)
    out = asym.bench(a.preset, a.threads, rounds=a.rounds, runs=a.runs, boots=a.boots,
                     spin_ms=a.spin, idle_ms=a.idle, build_them=a.build, name=a.name,
                     outdir=Path(a.outdir), concurrent=a.wakers)
    print(out["table"], end="")
    print(f"wrote {out['txt']}, {out['json']}")
    return 0
