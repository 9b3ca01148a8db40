"""The commands that get, patch and build the kernel and the guest image:
fetch (the Debian source), prepare (the work tree at the base with the
series applied), kernel (prepare and build a variant), check-series (every
prefix of the series builds), export (the tree's commits back to the
series directory), image (the base initramfs) and presets (the topology
presets).  Each has its add_*_opts() and cmd_*(); none needs a check after
parsing (commands.common.check_none).
"""
from __future__ import annotations

import argparse

from ..runs import asym
from .. import paths
from ..kernel import build, fixes, source, tree
from ..guest import image, topology
from . import opts


def cmd_fetch(a: argparse.Namespace) -> int:
    info = source.fetch()
    print(f"{info.package} {info.version} sha256 {info.sha256}\n  deb: {info.deb}\n  tarball: {info.tarball}")
    return 0


def add_prepare_opts(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--force", action="store_true",
                    help="reset the tree to base + series even if that discards commits")


def cmd_prepare(a: argparse.Namespace) -> int:
    tree.prepare(a.force)
    return 0


def add_kernel_opts(sp: argparse.ArgumentParser) -> None:
    opts.variant(sp, "base")
    sp.add_argument("--force", action="store_true", help="prepare --force")
    sp.add_argument("--no-prepare", action="store_true", help="build the tree as it is")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all of make's output")


def cmd_kernel(a: argparse.Namespace) -> int:
    if not a.no_prepare:
        tree.prepare(a.force)
    print(build.build(a.variant, verbose=a.verbose))
    return 0


def add_check_series_opts(sp: argparse.ArgumentParser) -> None:
    opts.variant(sp, "base")
    sp.add_argument("-v", "--verbose", action="store_true")


def cmd_check_series(a: argparse.Namespace) -> int:
    tree.create_tree(source.fetch())
    results = build.check_series(a.variant, a.verbose)
    for i, (subj, ok, msg) in enumerate(results, 1):
        print(f"{i:3d} {'ok  ' if ok else 'FAIL'} {subj}" + ("" if ok else f"\n      {msg}"))
    total = len(tree.read_series())
    if any(not ok for _, ok, _ in results):
        return 1
    print(f"all {total} prefix(es) of the series build")
    return 0


def add_image_opts(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--arch", default="x86_64", choices=["x86_64", "arm64"])
    opts.files(sp)


def cmd_image(a: argparse.Namespace) -> int:
    print(image.build_base(a.arch, files=tuple(a.file)))
    return 0


def cmd_presets(a: argparse.Namespace) -> int:
    for p in topology.PRESETS.values():
        print(p.describe())
    for ap in asym.PRESETS.values():
        print(f"{ap.describe()} [asym-boot/asym-bench]")
    return 0


def cmd_export(a: argparse.Namespace) -> int:
    series = tree.export()
    print(f"exported {len(series)} patch(es) to {paths.patches_dir()}")
    for s in series:
        print(f"  {s}")
    for f in fixes.export():
        print(f"exported the fix sent on its own: {f.relative_to(paths.REPO)}")
    return 0
