"""Kernel bases: the Debian source packages the harness builds from.

A base is one pinned linux-source package (version and the .deb's sha256
as `apt-cache show` lists them in the Debian archive) and the suite that
serves it.  One base is selected per command: `--base` on the command line,
IDLESTEAL_BASE in the environment (`make ... BASE=`), else DEFAULT.

Every base has its own build directory, so trees, objects, images, runs
and apt lists of two bases never mix: the default base keeps `build/`
itself (nothing that existed before bases moves), any other base lives in
`build/ports/<name>/` with the same layout inside.  The user cache (the
.debs, ccache) is shared: it is keyed by content.

`patches`: the base's own series, a directory of the repository holding
`git format-patch` output, its `series` file and cover letter, exported from
that base's tree (`idlesteal --base B export`): `patches/` for the default
base, `patches/ports/<name>/` for a port (7.3: the rebase, 6.12: the
backport).  None for a base the series does not apply to: it builds
without it (its `variants.<name>` file lists what can be built there).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .util import HarnessError

ENV = "IDLESTEAL_BASE"


@dataclass(frozen=True)
class Base:
    name: str
    package: str
    version: str
    sha256: str
    suite: str           # the Debian suite that serves `version`
    patches: str | None  # the base's series: a directory of the repository, or None
    variants: str        # configs/<variants>: the kernel variants of this base
    schedstat: int = 17  # the /proc/schedstat version it prints (6.12: 16)

    @property
    def series(self) -> bool:
        """Does the base have a series of its own (`patches`)?"""
        return self.patches is not None

    def describe(self) -> str:
        return f"{self.name} ({self.package} {self.version}, Debian {self.suite})"

    def to_json(self) -> dict:
        return {"name": self.name, "package": self.package, "version": self.version,
                "sha256": self.sha256, "suite": self.suite, "series": self.series}


# Newest first.  Hashes from `apt-cache show PACKAGE=VERSION` (SHA256 of the
# .deb) on 2026-11-25; each download is checked against them.
BASES: dict[str, Base] = {b.name: b for b in (
    Base("7.3", "linux-source-7.3", "7.3.4-1~bpo13+1",
         "703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3",
         "trixie-backports", "patches/ports/7.3", "variants.7.3"),
    Base("7.2", "linux-source-7.2", "7.2.13-1",
         "30a8c5fc63f9028a62e6d7b3f7f43bee67425dbce2a05fceba83f9b87c92083d",
         "sid", "patches", "variants"),
    Base("6.12", "linux-source-6.12", "6.12.117-1",
         "9141325315c7f1eca682113d185a8c77c82814aa6e32f7e127e61d6106403835",
         "trixie", "patches/ports/6.12", "variants.6.12", schedstat=16),
)}
# The series' own base; `build/` is its build directory.
DEFAULT = "7.2"


def known() -> str:
    return ", ".join(f"{n}{' (default)' if n == DEFAULT else ''}" for n in BASES)


def get(name: str) -> Base:
    if name not in BASES:
        raise HarnessError(f"unknown base {name!r}; known bases: {known()}")
    return BASES[name]


def current() -> Base:
    """The selected base: IDLESTEAL_BASE (set by --base and make BASE=), else DEFAULT."""
    return get(os.environ.get(ENV) or DEFAULT)


def select(name: str) -> Base:
    """Select `name` for this process and the programs it starts."""
    b = get(name)
    os.environ[ENV] = b.name
    return b


def is_default(base: Base | None = None) -> bool:
    return (base or current()).name == DEFAULT


def build_subdir(base: Base | None = None) -> Path:
    """A base's build directory relative to the build root ('.' for the default)."""
    base = base or current()
    return Path(".") if is_default(base) else Path("ports") / base.name
