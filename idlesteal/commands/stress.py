"""The stress command (docs/stress.md): a debug kernel under CPU hotplug,
sched domain rebuilds, throttling, affinity and sched feature churn while
messages pass, on each topology preset of --preset, --repeat times, with
one of our sched_ext schedulers in charge when --scx names it.  Its
options (add_stress_opts), its check after parsing (check_stress: --scx
and --steal against what the variant's kernel has) and the run
(cmd_stress), which prints each boot's report and a tally of them.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..runs import kernels, stress
from ..kernel import build
from ..guest import image, topology
from ..scx import own as scx
from . import args, common, opts
from .args import UsageError
from ..util import HarnessError, log


def add_stress_opts(sp: argparse.ArgumentParser) -> None:
    opts.guest(sp, preset=False)
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
    opts.outdir(sp, stress.results_dir(), "where the JSON summaries go")


def check_stress(a: argparse.Namespace) -> None:
    if a.scx and not common.has_sched_ext(a.variant):
        raise UsageError("--scx", " ".join(a.scx), f"it with a kernel variant that has "
                         f"sched_ext (--variant {scx.VARIANT}), not {a.variant}")
    if a.steal != "toggle" and not stress.series_kernel(a.variant):
        raise UsageError("--steal", a.steal, f"it with a kernel variant that has the series "
                         f"(--variant {a.variant} is built without it: no STEAL feature)")


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
