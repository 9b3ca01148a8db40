"""A server's kernel configuration, made ready for the series and the
measure: what to force into a distribution's (or a machine's own) config,
why, and whether it stuck.

The series adds no Kconfig option a server needs (STEAL is a scheduler
feature, off as booted); the harness needs a few the distribution may
leave out: schedstats and debugfs (the counters and sched/features, where
STEAL is switched), event tracing (the wasted-time measure's sched events),
and sched_ext with BTF where the base has it (scx_idlesteal beside EEVDF).
`plan()` says which of those a config lacks, `force()` writes them and
`verify()` checks after olddefconfig that each stuck.  Pure functions on
parsed configs (kconfig.parse); the make calls are in kernel/package.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..util import HarnessError
from . import kconfig


@dataclass(frozen=True)
class Want:
    """An option the package needs, and why."""
    option: str
    value: str
    why: str
    needs: str = ""        # only where the base's Kconfig defines this symbol
    unless: str = ""       # not when this option is already y (another way to the same end)


WANTS: tuple[Want, ...] = (
    Want("CONFIG_SCHEDSTATS", "y", "/proc/schedstat, the steal counters and their cost"),
    Want("CONFIG_DEBUG_FS", "y", "sched/features (STEAL on and off) and the series' debugfs files"),
    Want("CONFIG_SCHED_DEBUG", "y", "sched/features exists only with it on this base",
         needs="SCHED_DEBUG"),
    Want("CONFIG_FTRACE", "y", "tracefs, for the wasted-time measure's sched events"),
    Want("CONFIG_ENABLE_DEFAULT_TRACERS", "y", "event tracing, where no tracer selects it",
         unless="CONFIG_EVENT_TRACING"),
    Want("CONFIG_BPF_SYSCALL", "y", "sched_ext's BPF schedulers", needs="SCHED_CLASS_EXT"),
    Want("CONFIG_BPF_JIT", "y", "sched_ext's BPF schedulers", needs="SCHED_CLASS_EXT"),
    Want("CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT", "y", "debug info, which BTF is made from",
         needs="SCHED_CLASS_EXT", unless="CONFIG_DEBUG_INFO"),
    Want("CONFIG_DEBUG_INFO_BTF", "y", "sched_ext resolves its kfuncs through the kernel's BTF",
         needs="SCHED_CLASS_EXT"),
    Want("CONFIG_SCHED_CLASS_EXT", "y", "scx_idlesteal and the sched_ext side by side",
         needs="SCHED_CLASS_EXT"),
)

# What must hold after olddefconfig, whatever was forced to get there.
RESULTS: tuple[tuple[str, str], ...] = (
    ("CONFIG_SCHEDSTATS", "y"), ("CONFIG_DEBUG_FS", "y"), ("CONFIG_EVENT_TRACING", "y"),
)

_SYMBOL = re.compile(r"^\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*$", re.M)
_STEAL_FEAT = re.compile(r"^SCHED_FEAT\(STEAL,\s*(true|false)\)", re.M)
_LOCALVERSION = re.compile(r"^[A-Za-z0-9.+_-]*$")


@dataclass(frozen=True)
class Change:
    """One option set differently from the given config."""
    option: str
    was: str               # 'n' when absent or not set
    now: str
    why: str

    def line(self) -> str:
        was = "not set" if self.was == "n" else f"was {self.was}"
        return f"forced {self.option}={self.now} ({was}): {self.why}"


def kconfig_symbols(src: Path) -> set[str]:
    """Every symbol the tree's Kconfig files define (without CONFIG_)."""
    out: set[str] = set()
    for f in src.rglob("Kconfig*"):
        if f.is_file():
            out.update(_SYMBOL.findall(f.read_text(errors="replace")))
    if not out:
        raise HarnessError(f"no Kconfig symbols under {src}: not a kernel tree")
    return out


def plan(config: dict[str, str], symbols: set[str]) -> list[Change]:
    """The options `config` lacks, of those this base defines."""
    out = []
    for w in WANTS:
        if w.needs and w.needs not in symbols:
            continue
        if w.option[len("CONFIG_"):] not in symbols:
            continue
        if w.unless and config.get(w.unless) == "y":
            continue
        was = config.get(w.option, "n")
        if was != w.value:
            out.append(Change(w.option, was, w.value, w.why))
    return out


def set_options(text: str, values: dict[str, str]) -> str:
    """`text` (a .config) with each option's line replaced by its new value
    ('n' writes '# CONFIG_X is not set'; a string value is quoted)."""
    keep = [ln for ln in text.splitlines()
            if not any(ln.startswith(f"{o}=") or ln == f"# {o} is not set" for o in values)]
    for o, v in values.items():
        keep.append(f"# {o} is not set" if v == "n" else f"{o}={v}")
    return "\n".join(keep) + "\n"


def force(path: Path, changes: list[Change]) -> None:
    """Write the changes into .config."""
    path.write_text(set_options(path.read_text(), {c.option: c.now for c in changes}))


def verify(config: dict[str, str], changes: list[Change]) -> None:
    """After olddefconfig: every forced option and every needed result stuck."""
    bad = [f"  {c.option}: wanted {c.now}, got {config.get(c.option, 'n')}"
           for c in changes if config.get(c.option, "n") != c.now]
    bad += [f"  {o}: wanted {v}, got {config.get(o, 'n')}"
            for o, v in RESULTS if config.get(o, "n") != v]
    if bad:
        raise HarnessError("the package's configuration lost options after olddefconfig "
                           "(a dependency the given config turns off?):\n" + "\n".join(bad))


def check_localversion(local: str) -> None:
    if not _LOCALVERSION.match(local):
        raise HarnessError(f"local version {local!r}: letters, digits and .+_- only")


def steal_off_at_boot(src: Path) -> None:
    """The tree's STEAL feature exists and is off as booted, as the series
    ships it; a HarnessError otherwise."""
    f = src / "kernel/sched/features.h"
    m = _STEAL_FEAT.search(f.read_text()) if f.exists() else None
    if not m:
        raise HarnessError(f"{f} defines no STEAL feature: the tree does not carry the series")
    if m.group(1) != "false":
        raise HarnessError(f"{f}: STEAL is on as booted; the series ships it off")


def report(changes: list[Change]) -> list[str]:
    """One line per forced option; one line saying so when none was."""
    return [c.line() for c in changes] or ["forced nothing: the config has every option needed"]


def read(path: Path) -> dict[str, str]:
    try:
        return kconfig.parse_file(path)
    except OSError as e:
        raise HarnessError(f"cannot read the kernel configuration {path}: {e.strerror}") from e
