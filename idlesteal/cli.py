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
import faulthandler
import signal
import sys
from typing import Callable, NamedTuple, NoReturn

from .commands import args, asym, bench, boot, common, kernel, needs, opts, scx, stress, suite
from . import bases
from .commands.args import UsageError, one_line
from .util import HarnessError, Stopwatch, log

# The commands themselves are in commands/, one module per group, each
# command with its add_*_opts(), its check_*() and its cmd_*(): this module
# is the parser (COMMANDS, in `idlesteal --help`'s order) and main().


class Command(NamedTuple):
    """A subcommand: its name and help line, the function that adds its
    options, the one that runs it and the check after parsing."""
    name: str
    help: str
    add_opts: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    check: Callable[[argparse.Namespace], None] = common.check_none


COMMANDS: tuple[Command, ...] = (
    Command("fetch", "download + verify + extract the Debian kernel source", opts.none,
            kernel.cmd_fetch),
    Command("prepare", "work tree at base + the base's series (patches/series; "
            "a port's: patches/ports/BASE/series)", kernel.add_prepare_opts, kernel.cmd_prepare),
    Command("kernel", "prepare, configure and build the guest kernel", kernel.add_kernel_opts,
            kernel.cmd_kernel),
    Command("scx", "build the scx kernel and the sched_ext schedulers (docs/scx.md)",
            scx.add_scx_opts, scx.cmd_scx),
    Command("scx-upstream", "scx_idlesteal as a patch against a sched-ext/scx tree, "
            "checked as its CI does (docs/scx-upstream.md)", scx.add_scx_upstream_opts,
            scx.cmd_scx_upstream),
    Command("side-by-side", "EEVDF +/- STEAL and sched_ext schedulers, one boot "
            "per preset (docs/scx.md)", scx.add_side_by_side_opts, scx.cmd_side_by_side,
            scx.check_side_by_side),
    Command("check-series", "build every prefix of the series (bisectability)",
            kernel.add_check_series_opts, kernel.cmd_check_series),
    Command("package", "an installable kernel with the series for a server, from its "
            "own or Debian's configuration (docs/server.md)", kernel.add_package_opts,
            kernel.cmd_package),
    Command("image", "build the base initramfs", kernel.add_image_opts, kernel.cmd_image),
    Command("presets", "list topology presets", opts.none, kernel.cmd_presets),
    Command("boot", "boot a preset, verify topology, run a command", boot.add_boot_opts,
            boot.cmd_boot, boot.check_boot),
    Command("bench", "A/B sweep of a workload in one boot (default: the steal "
            "kernel, NO_STEAL against STEAL)", bench.add_bench_opts, bench.cmd_bench,
            bench.check_bench),
    Command("suite", "the benchmark suite (configs/bench.suite): one A/B "
            "boot per entry, then results/summary.txt", suite.add_suite_opts, suite.cmd_suite,
            suite.check_suite),
    Command("kernels", "one command on two kernel variants (alternating "
            "boots), e.g. the guest config against defconfig", bench.add_kernels_opts,
            bench.cmd_kernels, bench.check_kernels),
    Command("stress", "debug kernel under hotplug, domain rebuilds, "
            "throttling, affinity and feature churn while message passing",
            stress.add_stress_opts, stress.cmd_stress, stress.check_stress),
    Command("asym-boot", "boot an asymmetric-capacity arm64 preset, verify "
            "capacities / SMT / asym domain, run a short placement round",
            asym.add_asym_boot_opts, asym.cmd_asym_boot),
    Command("asym-bench", "placement with and without the stable idle-core "
            "patch on an asymmetric arm64 guest; results/asym/", asym.add_asym_bench_opts,
            asym.cmd_asym_bench, asym.check_asym_bench),
    Command("collect", "re-read a kept run directory (build/runs/<id>/) into "
            "results, as `kunit.py parse` does", bench.add_collect_opts, bench.cmd_collect,
            bench.check_collect),
    Command("compare", "two suite summaries side by side: did the second run "
            "reproduce the first?", bench.add_compare_opts, bench.cmd_compare,
            bench.check_compare),
    Command("tables", "write the results tables of results/README.md and the cover "
            "letter from the committed JSONs (--check: say which differ)",
            bench.add_tables_opts, bench.cmd_tables, bench.check_tables),
    Command("export", "write the tree's commits to the base's series directory "
            "(patches/, a port's patches/ports/BASE/)", opts.none, kernel.cmd_export),
)


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
    for c in COMMANDS:
        sp = sub.add_parser(c.name, allow_abbrev=False, help=c.help)
        sp.set_defaults(func=c.run, check=c.check)
        c.add_opts(sp)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:            # `kill -USR1 PID`: where a run that seems stuck is, on its stderr
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    except (AttributeError, ValueError, OSError):   # a stderr with no file descriptor
        pass
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
