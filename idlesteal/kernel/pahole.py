"""pahole >= 1.26 for kernel BTF, built from vendor/dwarves-1.30.tar.xz.

Debian 12 ships pahole 1.24, whose BTF sched_ext rejects.  The vendored
source is built once into the cache (cmake; Debian's libdw-dev, libelf-dev,
libbpf-dev) and handed to kbuild as PAHOLE= for variants that generate BTF
(vendor/README.md).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from .. import paths
from ..util import HarnessError, Stopwatch, check_vendored, log, output, run

VERSION = "1.30"
TARBALL = paths.REPO / "vendor" / f"dwarves-{VERSION}.tar.xz"
SHA256 = "2426b7e05f6132229ef3031d726998539a6c1926e0e15754c963bf001de54037"


def binary() -> Path:
    return paths.cache_dir() / f"pahole-{VERSION}" / "build" / "pahole"


def needs_btf(fragments: list[Path]) -> bool:
    """Does any of these config fragments ask for CONFIG_DEBUG_INFO_BTF=y?"""
    return any("CONFIG_DEBUG_INFO_BTF=y" in f.read_text().splitlines() for f in fragments)


def version_of(exe: Path) -> str:
    return output([str(exe), "--version"], check=False).strip()


def ensure() -> Path:
    """The pahole binary, built first if the cache does not have it."""
    exe = binary()
    if exe.exists() and version_of(exe) == f"v{VERSION}":
        return exe
    check_vendored(TARBALL, SHA256)
    top = exe.parent.parent
    sw = Stopwatch()
    log(f"building pahole {VERSION} from {TARBALL.name} into {top}")
    if top.exists():
        shutil.rmtree(top)
    top.parent.mkdir(parents=True, exist_ok=True)
    tmp = top.with_name(top.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    run(["tar", "-xf", str(TARBALL), "-C", str(tmp)])
    (src,) = [p for p in tmp.iterdir() if p.is_dir()]
    src.rename(top)
    tmp.rmdir()
    bdir = top / "build"
    bdir.mkdir()
    run(["cmake", "-DLIBBPF_EMBEDDED=OFF", "-DCMAKE_BUILD_TYPE=Release", ".."],
        cwd=bdir, capture=True)
    run(["make", f"-j{(os.cpu_count() or 1) + 1}", "pahole"], cwd=bdir, capture=True)
    got = version_of(exe)
    if got != f"v{VERSION}":
        raise HarnessError(f"built {exe} but it reports {got!r}, expected v{VERSION}")
    log(f"pahole {VERSION} built in {sw.elapsed():.0f} s: {exe}")
    return exe


def make_args(fragments: list[Path]) -> list[str]:
    """PAHOLE=... for kbuild when the variant generates BTF, else nothing."""
    return [f"PAHOLE={ensure()}"] if needs_btf(fragments) else []
