"""Where things live: the repository, its build dir, and the user cache."""
from __future__ import annotations

import os
from pathlib import Path

from . import bases

REPO: Path = Path(__file__).resolve().parent.parent


def build_root() -> Path:
    """The build directory of the default base; other bases under ports/."""
    return Path(os.environ.get("IDLESTEAL_BUILD") or REPO / "build")


def build_dir() -> Path:
    """Work products (gitignored) of the selected base (bases.py): kernel
    tree, objects, images, runs.  build/ for the default base, build/ports/<base>/
    for the others."""
    sub = bases.build_subdir()
    return build_root() if sub == Path(".") else build_root() / sub


def cache_dir() -> Path:
    """Caches that survive a fresh clone: downloaded .debs, ccache."""
    env = os.environ.get("IDLESTEAL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "idlesteal"


def tree_dir() -> Path:
    return build_dir() / "linux"


def obj_dir(variant: str) -> Path:
    return build_dir() / f"obj-{variant}"


def configs_dir() -> Path:
    return REPO / "configs"


def patches_dir() -> Path:
    """The selected base's series (bases.Base.patches): patches/ for the
    default base, patches/ports/<base>/ for a port; patches/ for a base
    without a series of its own (tree.read_series() reads none there)."""
    return REPO / (bases.current().patches or "patches")


def workloads_dir() -> Path:
    return REPO / "workloads"


def results_dir() -> Path:
    """Measured results (committed); IDLESTEAL_RESULTS puts them elsewhere
    (the argument tests use it to see that a refused command wrote nothing)."""
    env = os.environ.get("IDLESTEAL_RESULTS")
    return Path(env) if env else REPO / "results"


def runs_dir() -> Path:
    return build_dir() / "runs"
