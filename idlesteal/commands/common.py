"""What several commands share: the checks after parsing that more than one
command's check_*() makes (a value turned into a UsageError, the host
programs an image carries, --host against the guest-only options, a suite
file and what --presets/--workloads pick of it, a variant's fragments) and
the pieces of their output (one bench's plan line, the files a result went
to, a progress line, a staged boot).  Each command's own options, check and
run are in the module of its group (kernel, boot, bench, suite, scx,
stress, asym); cli.py puts them together.
"""
from __future__ import annotations

import argparse
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from ..runs import bench, host, levels, suite
from ..kernel import build, kconfig
from ..report import estimate
from ..guest import image, topology, vm
from .args import UsageError, one_line
from ..util import HarnessError, log


# ---------------------------------------------------------------- checks after parsing

@contextmanager
def arg(option: str, value: object, want: str = "") -> Iterator[None]:
    """A HarnessError raised inside is a bad value of `option`."""
    try:
        yield
    except UsageError:
        raise
    except HarnessError as e:
        raise UsageError(option, value, f"{want}{': ' if want else ''}{one_line(str(e))}") \
            from None


def check_none(a: argparse.Namespace) -> None:
    """Every argument of the command is checked by its type= alone."""


# --a / --b when not given (None in the namespace: host mode tells the two apart)
DEFAULT_A, DEFAULT_B = ("NO_STEAL",), ("STEAL",)


def spec(a: argparse.Namespace, wname: str, levels: list[int], size: int | None,
         custom: dict | None = None, files: tuple[str, ...] = ()) -> bench.BenchSpec:
    """The A/B bench of one workload from the options --a, --b, --reps,
    --warmup, --no-alternate, --extra-args and --waste."""
    s = bench.BenchSpec(
        a=bench.Side("A", a.a if a.a is not None else DEFAULT_A),
        b=bench.Side("B", a.b if a.b is not None else DEFAULT_B),
        levels=levels, size=size or 0, reps=a.reps,
        alternate=not a.no_alternate, warmup=a.warmup,
        extra_args=a.extra_args.split(), workload=wname, custom=custom,
        files=list(files), waste=a.waste)
    if not s.size:
        s.size = s.wl.default_size
    return s


def tools_present(a: argparse.Namespace, tools: tuple[str, ...] | list[str]) -> None:
    """The host programs an image will carry exist (before any build; a
    dry run needs none)."""
    if getattr(a, "dry_run", False):
        return
    for t in tools:
        host, pkg = image.TOOLS[t]
        if not Path(host).exists():
            raise HarnessError(f"{host} is missing ({t} goes into the guest image); install "
                               f"it with `make deps` or `sudo apt-get install -y {pkg}`")


def load_suite(a: argparse.Namespace, default: Path) -> tuple[Path, list[suite.Entry]]:
    """The entries of --suite-file, else of `default`."""
    path = Path(a.suite_file) if a.suite_file else default
    with arg("--suite-file", str(path), "a suite file"):
        return path, suite.load(path)


def host_machine() -> levels.Machine:
    """This machine's online CPUs and LLCs, for a suite's relative levels."""
    t = host.read_topology()
    return levels.of_groups(t.online, t.llc, "this machine")


def guest_entries(path: Path, entries: list[suite.Entry]) -> list[suite.Entry]:
    """The entries of a guest run; a line on stderr names the host lines
    left out."""
    with arg("--suite-file", str(path), "entries for a guest"):
        out, note = suite.guest_entries(entries)
    if note:
        log(note)
    return out


def select(a: argparse.Namespace, path: Path, entries: list[suite.Entry]) -> list[suite.Entry]:
    """The entries --presets and --workloads pick; every name must be in the file."""
    have_p = list(dict.fromkeys(e.preset for e in entries))
    have_w = list(dict.fromkeys(e.workload for e in entries))
    ps, ws = a.presets or [], a.workloads or []
    if any(p not in have_p for p in ps):
        raise UsageError("--presets", ",".join(ps), f"presets of {path}: {', '.join(have_p)}")
    if any(w not in have_w for w in ws):
        raise UsageError("--workloads", ",".join(ws), f"workloads of {path}: "
                         f"{', '.join(have_w)}")
    with arg("--presets/--workloads", f"{','.join(ps)}/{','.join(ws)}",
             f"a preset and a workload that share an entry of {path}"):
        return suite.select(entries, ",".join(ps), ",".join(ws))


def check_host(a: argparse.Namespace, guest_only: tuple[tuple[str, object, bool], ...]) -> None:
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


def fragments_set(variant: str, option: str) -> bool:
    """The variant's fragments set `option` =y (known before any build; the
    build checks that every option of them stuck)."""
    frags = kconfig.merge([kconfig.parse_file(f) for f in build.variants()[variant]])
    return frags.get(option) == "y"


def has_sched_ext(variant: str) -> bool:
    """The variant's fragments turn sched_ext on."""
    return fragments_set(variant, "CONFIG_SCHED_CLASS_EXT")


# ---------------------------------------------------------------- output

def plan_line(name: str, preset: topology.Preset, spec: bench.BenchSpec, outdir: Path
              ) -> tuple[float, str]:
    """(estimated seconds, the line that says what one A/B boot runs)."""
    runs = len(bench.plan(spec))
    secs, src = estimate.est_seconds(name, preset.name, runs, outdir)
    w = spec.wl
    return secs, (f"{name}: 1 boot of {preset.name} ({preset.ncpus} vCPUs), {runs} runs "
                  f"({spec.warmup} warm-up) of {w.name} {w.level} "
                  f"{','.join(map(str, spec.levels))} {w.size_name} {spec.size}, "
                  f"A = {spec.a.name}, B = {spec.b.name}"
                  + ("; /proc/lock_stat around each run" if spec.lock_stat else "")
                  + f"; ~{estimate.fmt_duration(secs)} ({src})")


def wrote(out: dict) -> str:
    """The files a result went to (no "png": util.pyplot() said why)."""
    return "wrote " + ", ".join(str(out[k]) for k in ("txt", "json", "png", "timeline_A",
                                                       "timeline_B") if k in out)


def show(text: str) -> None:
    print(text.rstrip("\n"), flush=True)


def staged(run: Callable[[], object]) -> int:
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
