"""Kconfig fragments: parse them, and check that every option stuck in the
final .config (olddefconfig silently drops options whose dependencies are
not met)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..util import HarnessError

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set\s*$")


def parse(text: str) -> dict[str, str]:
    """Map option name -> value; '# CONFIG_X is not set' gives 'n'.

    Later lines override earlier ones (as merge_config does)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        m = _SET.match(line)
        if m:
            out[m.group(1)] = m.group(2)
            continue
        m = _UNSET.match(line)
        if m:
            out[m.group(1)] = "n"
    return out


def parse_file(path: Path) -> dict[str, str]:
    return parse(path.read_text())


def merge(fragments: list[dict[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in fragments:
        out.update(f)
    return out


@dataclass(frozen=True)
class Mismatch:
    option: str
    wanted: str
    got: str  # 'n' when absent from .config

    def __str__(self) -> str:
        return f"{self.option}: wanted {self.wanted}, got {self.got}"


def check(wanted: dict[str, str], config: dict[str, str]) -> list[Mismatch]:
    """Every wanted option must have its value in config (absent == n)."""
    bad = []
    for opt, val in wanted.items():
        got = config.get(opt, "n")
        if got != val:
            bad.append(Mismatch(opt, val, got))
    return bad


def check_files(fragments: list[Path], config: Path) -> None:
    """Raise HarnessError listing the options that did not stick."""
    wanted = merge([parse_file(f) for f in fragments])
    bad = check(wanted, parse_file(config))
    if bad:
        names = ", ".join(f.name for f in fragments)
        raise HarnessError(f"{len(bad)} option(s) of {names} did not stick in {config}:\n"
                           + "\n".join(f"  {m}" for m in bad)
                           + "\n(missing dependencies? add them to the fragment)")
