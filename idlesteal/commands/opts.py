"""Groups of options that several commands take, added to a subcommand's
parser: the kernel variant, --file, --outdir, --timeout, the options of a
command that boots a guest, of one that can run on the host (--host,
--max-load, --force-load), --stage, the suite filters --presets and
--workloads, and those of an A/B bench.  Each command's add_*_opts() (in
its module beside the command) calls the ones it takes; the values are
checked by the `type=` checkers of args.py.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..runs import host
from . import args


def none(sp: argparse.ArgumentParser) -> None:
    """A command without options."""


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


def ab(sp: argparse.ArgumentParser, reps: int, out: Path | None, out_help: str = "") -> None:
    """The options of an A/B bench, --outdir (default `out`) and --file."""
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
