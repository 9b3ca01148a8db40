"""The guest's shell scripts (busybox ash), shipped as package data.

    init.sh           /init of every initramfs (image.INIT)
    helpers.sh        /lib/idlesteal.sh, sourced before /run.sh (image.HELPERS)
    topology.sh       topology report read by topology.verify() (topology.GUEST_SNIPPET)
    asym-topology.sh  the arm64 guest's topology report (asym.GUEST_SNIPPET)
    stress.sh         the stress suite's /run.sh body; stress.script() puts a
                      preamble of shell variables in front of it

`read(name)` returns one of them; tests check each with `busybox ash -n`.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=None)
def read(name: str) -> str:
    """The text of idlesteal/guest/<name>."""
    return (resources.files("idlesteal") / "guest" / name).read_text(encoding="utf-8")


def names() -> list[str]:
    """Every guest script in the package (*.sh), sorted."""
    return sorted(p.name for p in (resources.files("idlesteal") / "guest").iterdir()
                  if p.name.endswith(".sh"))
