"""What a command needs from the Python that runs it, checked at start.

The harness runs on Debian's /usr/bin/python3 with Debian's packages (the
Makefile's DEB_PACKAGES).  Another python3 first on PATH (pyenv, a venv)
may lack them; a command that needs one stops before any work with one line
that says what is missing and the command that works, instead of a
traceback after the kernel build or a result without its PNG.
"""
from __future__ import annotations

import importlib.util
import shlex
import sys
from typing import Callable, Sequence

DEBIAN_PYTHON = "/usr/bin/python3"

# module -> (Debian package, what the harness uses it for)
MODULES: dict[str, tuple[str, str]] = {
    "scipy": ("python3-scipy", "the statistics"),
    "matplotlib": ("python3-matplotlib", "the PNG of each result"),
}

# command -> the modules it needs beyond the standard library (a --dry-run,
# or suite --summary-only, computes and draws nothing: it needs none).
COMMANDS: dict[str, tuple[str, ...]] = {
    "bench": ("scipy", "matplotlib"),
    "suite": ("scipy", "matplotlib"),
    "side-by-side": ("scipy", "matplotlib"),
    "collect": ("scipy", "matplotlib"),
    "kernels": ("scipy",),
    "asym-bench": ("scipy",),
    "tables": ("scipy",),
}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def problem(command: str, argv: Sequence[str], *, computes: bool = True,
            executable: str | None = None,
            importable: Callable[[str], bool] = _importable) -> str | None:
    """None when this interpreter has what `command` needs; else the one
    line to print: what is missing, for what, and the command that works."""
    missing = [m for m in (COMMANDS.get(command, ()) if computes else ()) if not importable(m)]
    if not missing:
        return None
    exe = executable or sys.executable or "python3"
    what = ", ".join(f"{m} ({MODULES[m][1]})" for m in missing)
    pkgs = " ".join(MODULES[m][0] for m in missing)
    again = shlex.join([DEBIAN_PYTHON, "-m", "idlesteal", *argv])
    return (f"idlesteal {command}: error: {exe} cannot import {what}; run it with Debian's "
            f"python3 and its {pkgs}: {again} (`make deps` or `sudo apt-get install -y "
            f"{pkgs}` installs them; the make targets use {DEBIAN_PYTHON})")
