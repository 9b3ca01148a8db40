"""The published sched_ext schedulers, built from crates.io at pinned versions.

scx_p2dq, scx_bpfland, scx_cosmos, scx_beerland and scx_lavd are Rust loaders (scx_utils,
libbpf-rs) with BPF C sides compiled by clang.  `cargo install --locked
--version V` builds each one with the lock file it was published with;
the binaries go to build/scx-peers/bin and cargo's target directory lives
in the cache (like ccache: a fresh clone rebuilds from the cached
artifacts in seconds, a cold cache takes minutes).  Debian 12's rustc is
too old (the crates want >= 1.91): the rustup toolchain is used, found on
PATH or in ~/.cargo/bin.

Guest side: each binary goes to /usr/bin with its shared libraries
(image.file_entries() resolves them), and is run with no arguments: the
default policy each scheduler ships with.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from ..kernel import build
from .. import paths
from ..util import HarnessError, Stopwatch, log, output, step

# Pinned: the latest releases the crates.io index serves here (read
# 2026-12-03: each one's last line in index.crates.io), all on scx_utils
# 1.1.4 and libbpf-rs 0.27.2.  scx_beerland is the closest design (a
# per-CPU busy map, ops.dispatch() takes the earliest task in vtime from
# another CPU), scx_lavd the most actively developed.
PEERS: dict[str, str] = {
    "scx_p2dq": "1.1.4",
    "scx_bpfland": "1.1.4",
    "scx_cosmos": "1.1.7",
    "scx_beerland": "1.1.4",
    "scx_lavd": "1.1.4",
}
# The name each one registers with sched_ext (/sys/kernel/sched_ext/root/ops).
OPS_NAMES: dict[str, str] = {"scx_p2dq": "p2dq", "scx_bpfland": "bpfland",
                             "scx_cosmos": "cosmos", "scx_beerland": "beerland",
                             "scx_lavd": "lavd"}
RUST_MIN = (1, 91)
CLANG_DIR = Path("/usr/lib/llvm-19/bin")      # Debian's clang-19, as `clang`

COMPILING = re.compile(r"^(Compiling|Building|Finished|Installing) ")


def root() -> Path:
    return paths.build_dir() / "scx-peers"


def target_dir() -> Path:
    return paths.cache_dir() / "cargo-target"


def binary(name: str) -> Path:
    return root() / "bin" / name


def cargo() -> Path:
    found = shutil.which("cargo")
    if found:
        return Path(found)
    home = Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo") / "bin" / "cargo"
    if home.exists():
        return home
    raise HarnessError("cargo not found (PATH, ~/.cargo/bin): the peers need a Rust "
                       f"toolchain >= {RUST_MIN[0]}.{RUST_MIN[1]} (rustup)")


def parse_rust_version(text: str) -> tuple[int, int]:
    """'cargo 1.95.0 (f2d3ce0bd 2026-03-21)' -> (1, 95)."""
    m = re.match(r"\s*(?:cargo|rustc) (\d+)\.(\d+)\.", text)
    if not m:
        raise HarnessError(f"cannot read a version from {text.strip()!r}")
    return int(m.group(1)), int(m.group(2))


def toolchain() -> tuple[Path, dict[str, str]]:
    """cargo (>= RUST_MIN) and an environment with clang-19 first on PATH:
    for the peers and for scx_idlesteal (idlesteal/scx/own.py)."""
    exe = cargo()
    ver = parse_rust_version(output([str(exe), "--version"]))
    if ver < RUST_MIN:
        raise HarnessError(f"{exe} is {ver[0]}.{ver[1]}; the Rust schedulers need >= "
                           f"{RUST_MIN[0]}.{RUST_MIN[1]} (rustup update)")
    if not (CLANG_DIR / "clang").exists():
        raise HarnessError(f"{CLANG_DIR}/clang not found; run `make deps` (clang-19)")
    env = dict(os.environ)
    env["PATH"] = f"{CLANG_DIR}:{exe.parent}:{env.get('PATH', '')}"
    return exe, env


def installed(crates2: str) -> dict[str, str]:
    """cargo's <root>/.crates2.json text -> {crate: version}."""
    try:
        installs = json.loads(crates2)["installs"]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise HarnessError(f".crates2.json: {e}") from None
    out = {}
    for key in installs:
        name, version, *_ = key.split()
        out[name] = version
    return out


def installed_versions() -> dict[str, str]:
    f = root() / ".crates2.json"
    return installed(f.read_text()) if f.exists() else {}


def check_names(names: tuple[str, ...]) -> None:
    unknown = [n for n in names if n not in PEERS]
    if unknown:
        raise HarnessError(f"unknown peer(s) {', '.join(unknown)}; known: {', '.join(PEERS)}")


def ensure(names: tuple[str, ...] = tuple(PEERS), verbose: bool = False) -> dict[str, Path]:
    """Each peer at its pinned version, built if missing; name -> binary."""
    check_names(names)
    have = installed_versions()
    todo = [n for n in names if have.get(n) != PEERS[n] or not binary(n).exists()]
    if todo:
        exe, env = toolchain()
        root().mkdir(parents=True, exist_ok=True)
        target_dir().mkdir(parents=True, exist_ok=True)
        for n in todo:
            sw = Stopwatch()
            logfile = root() / f"build-{n}.log"
            log(f"cargo install {n} {PEERS[n]} (target dir {target_dir()}), log {logfile}")
            with step(f"peer {n}"):
                build.run_make([str(exe), "install", "--locked", "--force", "--version",
                                PEERS[n], "--root", str(root()), "--target-dir",
                                str(target_dir()), n],
                               env, logfile, verbose, step=COMPILING)
            log(f"{n} {PEERS[n]} ready in {sw.elapsed():.0f} s")
    bins = {n: binary(n) for n in names}
    have = installed_versions()
    for n, b in bins.items():
        if not b.exists() or have.get(n) != PEERS[n]:
            raise HarnessError(f"{b}: not installed at {PEERS[n]} (have {have.get(n)}); "
                               f"log: {root()}/build-{n}.log")
    return bins


def versions(names: tuple[str, ...] = tuple(PEERS)) -> dict[str, str]:
    """What goes into a result's metadata: the installed version of each."""
    have = installed_versions()
    return {n: have.get(n, "missing") for n in names}
