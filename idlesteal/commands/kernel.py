"""The commands that get, patch and build the kernel and the guest image:
fetch (the Debian source), prepare (the work tree at the base with the
series applied), kernel (prepare and build a variant), check-series (every
prefix of the series builds), export (the tree's commits back to the
series directory), image (the base initramfs), presets (the topology
presets) and package (an installable kernel with the series for a server,
docs/server.md).  Each has its add_*_opts() and cmd_*(); none needs a
check after parsing (commands.common.check_none).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..runs import asym
from .. import paths
from ..kernel import build, fixes, package, source, tree
from ..guest import image, topology
from . import opts
from . import args


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


def add_package_opts(sp: argparse.ArgumentParser) -> None:
    g = sp.add_mutually_exclusive_group()
    g.add_argument("--config", type=args.existing_file, metavar="FILE",
                   help="the configuration to start from: the server's /boot/config-$(uname -r)")
    g.add_argument("--debian-config", nargs="?", const=package.DEBIAN_FLAVOUR, metavar="FLAVOUR",
                   type=args.name,
                   help="start from Debian's configuration of the base (linux-config-BASE), "
                        f"the default; FLAVOUR default {package.DEBIAN_FLAVOUR}")
    sp.add_argument("--lsmod", type=args.existing_file, metavar="FILE",
                    help="localmodconfig: keep only the modules of this `lsmod` listing "
                         "(from the server), for a shorter build")
    sp.add_argument("--format", choices=sorted(package.FORMATS), default="deb",
                    help="deb (bindeb-pkg) or rpm (binrpm-pkg); default deb")
    sp.add_argument("-v", "--verbose", action="store_true", help="show all of make's output")


def cmd_package(a: argparse.Namespace) -> int:
    tree.prepare(False)
    start = Path(a.config) if a.config else \
        package.debian_config(a.debian_config or package.DEBIAN_FLAVOUR)
    pkg = package.make_package(start, Path(a.lsmod) if a.lsmod else None, a.format, a.verbose)
    size = sum(f.stat().st_size for f in pkg.files) >> 20
    print(f"{len(pkg.files)} package(s), {size} MiB, in {pkg.seconds:.0f} s:")
    for f in pkg.files:
        print(f"  {f}")
    for line in pkg.forced:
        print(line)
    print()
    print(package.instructions(pkg, a.format))
    return 0
