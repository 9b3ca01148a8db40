"""scx_idlesteal as a system service (docs/scx.md, "As a service"):
`make install-scx` lays out the loader, its systemd unit and its options
file under DESTDIR, keeps an options file that is there, refuses bad
PREFIX/DESTDIR and a missing loader; systemd-analyze (Debian's systemd)
accepts the unit it writes, and rejects a broken one (so the check can
fail).  What the unit runs is run in the guest by
tests/guest/test_scx.py::test_runs_as_its_service_would.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from idlesteal import paths

UNIT = Path("usr/lib/systemd/system/scx_idlesteal.service")
OPTIONS = Path("etc/default/scx_idlesteal")


def install(destdir: Path, loader: Path, *extra: str) -> subprocess.CompletedProcess:
    # not the flags and variables of a `make test` this runs under
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "-s", "--no-print-directory", "install-scx",
                           f"DESTDIR={destdir}", f"SCX_IDLESTEAL_BIN={loader}", *extra],
                          cwd=paths.REPO, capture_output=True, text=True, env=env)


@pytest.fixture
def loader(tmp_path: Path) -> Path:
    """A stand-in for the built loader (the unit tests build no kernel)."""
    f = tmp_path / "scx_idlesteal.bin"
    f.write_text("#!/bin/sh\nexit 0\n")
    f.chmod(0o755)
    return f


def test_lays_out_loader_unit_and_options(tmp_path, loader):
    root = tmp_path / "root"
    r = install(root, loader)
    assert r.returncode == 0, r.stderr
    assert (root / "usr/bin/scx_idlesteal").read_bytes() == loader.read_bytes()
    assert (root / "usr/bin/scx_idlesteal").stat().st_mode & 0o777 == 0o755
    unit = (root / UNIT).read_text()
    assert "@" not in unit
    assert "\nExecStart=/usr/bin/scx_idlesteal $SCX_IDLESTEAL_FLAGS\n" in unit
    assert "\nEnvironmentFile=-/etc/default/scx_idlesteal\n" in unit
    assert 'SCX_IDLESTEAL_FLAGS=""' in (root / OPTIONS).read_text()


def test_prefix_reaches_the_unit(tmp_path, loader):
    root = tmp_path / "root"
    assert install(root, loader, "PREFIX=/usr/local").returncode == 0
    unit = (root / "usr/local/lib/systemd/system/scx_idlesteal.service").read_text()
    assert "\nExecStart=/usr/local/bin/scx_idlesteal $SCX_IDLESTEAL_FLAGS\n" in unit
    assert (root / "usr/local/bin/scx_idlesteal").exists()


def test_keeps_an_existing_options_file(tmp_path, loader):
    root = tmp_path / "root"
    (root / OPTIONS).parent.mkdir(parents=True)
    (root / OPTIONS).write_text('SCX_IDLESTEAL_FLAGS="-n"\n')
    r = install(root, loader)
    assert r.returncode == 0, r.stderr
    assert (root / OPTIONS).read_text() == 'SCX_IDLESTEAL_FLAGS="-n"\n'
    assert "kept" in r.stdout


@pytest.mark.parametrize("extra, says", [
    (("PREFIX=usr",), "PREFIX 'usr' is not an absolute path"),
    (("PREFIX=/usr/lo cal",), "may hold only"),
    (("PREFIX=/usr|x",), "may hold only"),
])
def test_refuses_bad_prefix(tmp_path, loader, extra, says):
    r = install(tmp_path / "root", loader, *extra)
    assert r.returncode != 0 and says in r.stderr, r.stderr
    assert not (tmp_path / "root").exists()


def test_refuses_relative_destdir_and_missing_loader(tmp_path, loader):
    r = install(Path("relative/root"), loader)
    assert r.returncode != 0 and "DESTDIR 'relative/root' is not an absolute path" in r.stderr
    r = install(tmp_path / "root", tmp_path / "nothing")
    assert r.returncode != 0 and "no loader at" in r.stderr and "make scx" in r.stderr
    assert not (tmp_path / "root").exists()


def verify(root: Path, unit: Path) -> subprocess.CompletedProcess:
    """systemd-analyze verify inside ROOT, with the host's targets copied in
    (the unit wants multi-user.target and, by default, sysinit.target)."""
    system = root / "usr/lib/systemd/system"
    for target in Path("/lib/systemd/system").glob("*.target"):
        if not (system / target.name).exists():
            shutil.copyfile(target, system / target.name)
    return subprocess.run(["systemd-analyze", "verify", f"--root={root}", str(unit)],
                          capture_output=True, text=True)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None or
                    not Path("/lib/systemd/system/multi-user.target").exists(),
                    reason="no systemd-analyze or systemd units on this host (Debian's systemd package)")
def test_systemd_accepts_the_unit_and_rejects_a_broken_one(tmp_path, loader):
    root = tmp_path / "root"
    assert install(root, loader).returncode == 0
    r = verify(root, root / UNIT)
    assert r.returncode == 0, r.stdout + r.stderr
    broken = root / "etc/systemd/system/scx_broken.service"
    broken.parent.mkdir(parents=True)
    broken.write_text((root / UNIT).read_text().replace("ExecStart=", "ExecStrat="))
    r = verify(root, broken)
    assert r.returncode != 0 and "ExecStrat" in r.stderr, r.stdout + r.stderr
