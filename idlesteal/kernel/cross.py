"""arm64 cross pieces: the toolchain (Debian's gcc-aarch64-linux-gnu and
libc6-dev-arm64-cross, installed by `make deps`) and Debian's arm64
busybox-static for the guest image.

The .deb is fetched with a private apt configuration like source.py's (its
own sources list, lists and cache under build/apt-arm64, APT::Architecture
"arm64"), so the host's dpkg architectures are never changed.  The verified
.deb is kept in the user cache (~/.cache/idlesteal/debs) and extracted with
dpkg-deb -x into build/cross/.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .. import paths
from . import source
from ..util import HarnessError, log, output, run

CROSS_PREFIX = "aarch64-linux-gnu-"
BUSYBOX_PACKAGE = "busybox-static"
ARCH = "arm64"


def cc() -> str:
    gcc = CROSS_PREFIX + "gcc"
    if shutil.which(gcc) is None:
        raise HarnessError(f"{gcc} not found; run `make deps` "
                           "(gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)")
    return gcc


def apt_dir() -> Path:
    return paths.build_dir() / "apt-arm64"


def write_apt_config() -> Path:
    sources = (f"deb [arch={ARCH} signed-by={source.KEYRING}] {source.debian_mirror()} "
               f"{source.SUITE} main\n")
    return source.write_private_apt(apt_dir(), ARCH, sources, [
        f'APT::Architectures {{ "{ARCH}"; }};\n',
        'Acquire::Languages "none";\n',
    ])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["APT_CONFIG"] = str(write_apt_config())
    return env


def _show(package: str) -> dict[str, str]:
    proc = run(["apt-cache", "show", f"{package}:{ARCH}"], env=_env(), capture=True, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        log(f"apt-get update (private {source.SUITE} {ARCH} lists under {apt_dir()})")
        run(["apt-get", "update", "-q"], env=_env(), capture=True)
        proc = run(["apt-cache", "show", f"{package}:{ARCH}"], env=_env(), capture=True,
                   check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise HarnessError(f"{package}:{ARCH} is not in the private {source.SUITE} lists")
    return source.parse_control(proc.stdout.split("\n\n")[0])


def fetch_deb(package: str) -> Path:
    """The verified arm64 .deb of `package` in the user cache.

    A cached file is reused without asking apt when one is present (its hash
    was checked when it was downloaded)."""
    cache = source.deb_cache()
    cached = sorted(cache.glob(f"{package}_*_{ARCH}.deb"))
    if cached:
        return cached[-1]
    fields = _show(package)
    version, sha = fields.get("Version", ""), fields.get("SHA256", "")
    if not version or not sha:
        raise HarnessError(f"apt-cache show {package}:{ARCH} gave no Version/SHA256")
    log(f"downloading {package}:{ARCH}={version}")
    return source.download_deb(f"{package}:{ARCH}={version}", sha, _env())


def busybox() -> Path:
    """Path of the extracted arm64 busybox (static, aarch64 ELF)."""
    deb = fetch_deb(BUSYBOX_PACKAGE)
    root = paths.build_dir() / "cross" / deb.stem
    if not root.exists():
        root.mkdir(parents=True)
        run(["dpkg-deb", "-x", str(deb), str(root)], capture=True)
    # /bin/busybox before the /usr merge, /usr/bin/busybox after it.
    exe = next((p for p in (root / "usr/bin/busybox", root / "bin/busybox") if p.is_file()), None)
    if exe is None:
        raise HarnessError(f"{deb.name} has neither usr/bin/busybox nor bin/busybox")
    head = exe.read_bytes()[:20]
    # ELF, 64-bit, e_machine 183 (AArch64).
    if head[:4] != b"\x7fELF" or head[4] != 2 or int.from_bytes(head[18:20], "little") != 183:
        raise HarnessError(f"{exe} is not an aarch64 ELF executable")
    return exe


def toolchain_version() -> str:
    try:
        return output([cc(), "--version"]).splitlines()[0]
    except (HarnessError, IndexError, subprocess.SubprocessError):
        return "missing"
