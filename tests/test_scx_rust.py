"""scx_idlesteal's Rust unit tests (`cargo test --release` in
tools/scx_idlesteal: the topology tables on scx_utils' synthetic
topologies), run with the toolchain and target directory its build uses
(idlesteal/scx/peers.py).  Skipped, saying so, where there is no cargo."""
from __future__ import annotations

import re
import subprocess

import pytest

from idlesteal.scx import peers, own as scx
from idlesteal.util import HarnessError


def test_cargo_test_passes():
    try:
        exe, env = peers.toolchain()
    except HarnessError as e:
        pytest.skip(f"no Rust toolchain for scx_idlesteal: {e}")
    env["BPF_CLANG"] = str(peers.CLANG_DIR / "clang")
    res = subprocess.run([str(exe), "test", "--release", "--locked", "--manifest-path",
                          str(scx.OWN_DIR / "Cargo.toml"), "--target-dir", str(peers.target_dir())],
                         capture_output=True, text=True, env=env, timeout=1800)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    m = re.search(r"test result: ok\. (\d+) passed; 0 failed", out)
    assert m and int(m.group(1)) >= 3, out[-4000:]


def _cargo(command: str, *args: str, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    """cargo COMMAND on scx_idlesteal's manifest, then ARGS."""
    try:
        exe, env = peers.toolchain()
    except HarnessError as e:
        pytest.skip(f"no Rust toolchain for scx_idlesteal: {e}")
    env["BPF_CLANG"] = str(peers.CLANG_DIR / "clang")
    return subprocess.run([str(exe), command, "--manifest-path", str(scx.OWN_DIR / "Cargo.toml"),
                           *args], capture_output=True, text=True, env=env, timeout=timeout)


def test_rustfmt_clean():
    """The loader's sources are as `cargo fmt` writes them (the scx
    repository's CI checks the same)."""
    res = _cargo("fmt", "--check")
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]


def test_clippy_clean():
    """`cargo clippy -D warnings`: no lint of this toolchain's clippy."""
    res = _cargo("clippy", "--release", "--locked", "--target-dir", str(peers.target_dir()),
                 "--", "-D", "warnings")
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
