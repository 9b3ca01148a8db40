"""schbench for the guest image, built from vendor/schbench-24e32b8.tar.xz.

schbench (Chris Mason's scheduler benchmark: message threads hand requests
to worker threads and record each worker's wakeup latency) is the benchmark
newidle balancing changes upstream are judged by.  Debian does not package
it; the vendored source (vendor/README.md) is checked against its sha256
and compiled statically, as workloads/*.c are, into the image directory.
"""
from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

from .. import paths
from ..util import check_vendored, log, run

COMMIT = "24e32b8ef67cbafb0761aed68747d90a291767ae"
TARBALL = paths.REPO / "vendor" / f"schbench-{COMMIT[:7]}.tar.xz"
SHA256 = "61bb0df3be8030e54c3898d6a3d71afa24ca1545d1f0699ff4771ec332ecc990"
SOURCE = f"schbench-{COMMIT[:7]}/schbench.c"


def build(out_dir: Path, cc: str = "gcc") -> Path:
    """out_dir/schbench, compiled when missing or older than the tarball."""
    exe = out_dir / "schbench"
    if exe.exists() and TARBALL.exists() and exe.stat().st_mtime >= TARBALL.stat().st_mtime:
        return exe
    check_vendored(TARBALL, SHA256)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / "schbench-src"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    with tarfile.open(TARBALL) as tar:
        tar.extract(SOURCE, tmp)   # the pinned tarball: its one path is known
    log(f"compiling schbench ({TARBALL.name})")
    # schbench's own Makefile's flags, static; -w: glibc's warning that a
    # static getaddrinfo() (its unused network mode) needs the shared NSS.
    run([cc, "-O2", "-static", "-pthread", "-w", "-D_LARGEFILE_SOURCE",
         "-D_FILE_OFFSET_BITS=64", "-o", str(exe), str(tmp / SOURCE), "-lm"], capture=True)
    shutil.rmtree(tmp)
    return exe
