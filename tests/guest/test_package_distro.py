"""The server package from a distribution's whole configuration (docs/server.md,
"How it is tested"): Debian's own linux-config of the base (BASE=6.12 for
the backport), reduced with localmodconfig to the modules the guest needs
to mount this machine's userland (configs/hostroot.lsmod: 9p over virtio),
built by the package command, unpacked as dpkg would install it, and
booted: the initramfs loads those modules from the package, in
modules.dep's order, then the guest runs the same `suite --host` as
test_package.py.

Marker `distro`: tens of minutes of build on the 2-core machine, so not in
`make test`; `make test-package-distro [BASE=6.12]` runs it.
"""
from __future__ import annotations

import lzma
import re
from pathlib import Path

import pytest

from idlesteal import bases, paths
from idlesteal.guest import image, topology, tracepins, vm
from idlesteal.kernel import package
from idlesteal.util import run

from . import test_package as small

pytestmark = [pytest.mark.guest, pytest.mark.distro]

LSMOD = paths.configs_dir() / "hostroot.lsmod"
MODDIR = "/lib/modules/idlesteal"


def load_order(root: Path, release: str, names: list[str]) -> list[Path]:
    """The package's module files for `names` and everything they depend
    on, dependencies first (modules.dep of the unpacked package)."""
    moddir = root / "lib" / "modules" / release
    deps: dict[str, list[str]] = {}
    for line in (moddir / "modules.dep").read_text().splitlines():
        mod, _, rest = line.partition(":")
        deps[mod] = rest.split()

    def name(rel: str) -> str:
        return re.sub(r"\.ko(\.xz|\.zst|\.gz)?$", "", Path(rel).name).replace("-", "_")
    by_name = {name(m): m for m in deps}
    order: list[str] = []

    def visit(rel: str) -> None:
        for d in deps[rel]:
            visit(d)
        if rel not in order:
            order.append(rel)
    for n in names:
        if n.replace("-", "_") not in by_name:
            raise AssertionError(f"the package has no module {n} (modules.dep: {len(deps)})")
        visit(by_name[n.replace("-", "_")])
    return [moddir / rel for rel in order]


def plain(ko: Path, into: Path) -> Path:
    """The module uncompressed (busybox insmod reads it whole)."""
    into.mkdir(parents=True, exist_ok=True)
    out = into / re.sub(r"\.xz$", "", ko.name)
    out.write_bytes(lzma.decompress(ko.read_bytes()) if ko.suffix == ".xz" else ko.read_bytes())
    return out


@pytest.fixture(scope="module")
def pkg() -> package.Package:
    """The package from Debian's configuration; one an earlier run built
    from the same inputs is booted again rather than packaged again."""
    start = package.debian_config()
    return package.existing(start, LSMOD) or package.make_package(start, LSMOD)


@pytest.fixture(scope="module")
def inside(pkg: package.Package, tmp_path_factory: pytest.TempPathFactory) -> vm.RunResult:
    root = tmp_path_factory.mktemp("pkgroot")
    run(["dpkg-deb", "-x", str(package.image_package(pkg)), str(root)])
    kernel = root / "boot" / f"vmlinuz-{pkg.release}"
    assert kernel.is_file(), sorted(p.name for p in (root / "boot").iterdir())
    names = [l.split()[0] for l in LSMOD.read_text().splitlines()[1:] if l.strip()]
    mods = [plain(m, root / "plain") for m in load_order(root, pkg.release, names)]
    load = "\n".join(["section modules"] + [
        f"insmod {MODDIR}/{m.name} || fail 'cannot load {m.name}'" for m in mods] +
        ["cat /proc/modules"])
    script = load + "\n" + small.script()
    initrd = image.build_base(files=[f"{m}:{MODDIR}/{m.name}" for m in mods])
    return vm.run_script(script, topology.get("2x2x2"), kernel, initrd, timeout=2400,
                         name="package-distro-guest", shares=(vm.Share(Path("/"), small.TAG),),
                         cmdline=tracepins.cmdline())


def test_the_package_is_debians_configuration_reduced(pkg):
    base = bases.current()
    assert pkg.config_from.endswith(f"debian-{base.name}-{base.version}-"
                                    f"{package.DEBIAN_FLAVOUR}.config"), pkg.config_from
    assert pkg.lsmod == str(LSMOD) and pkg.release.startswith(base.version.split("-")[0])
    config = (package.out_dir() / f"config-{pkg.release}").read_text()
    for sym in ("CONFIG_9P_FS=m", "CONFIG_NET_9P_VIRTIO=m", "CONFIG_SCHED_CLASS_EXT=y",
                "CONFIG_SCHEDSTATS=y"):
        assert sym in config.splitlines(), sym


def test_the_packaged_kernel_loads_its_modules_and_boots_with_steal_off(pkg, inside):
    assert inside.sections["release"].strip() == pkg.release
    loaded = {l.split()[0] for l in inside.sections["modules"].splitlines() if l.strip()}
    assert {"9p", "9pnet", "9pnet_virtio", "netfs"} <= loaded, loaded
    words = inside.sections["features"].split()
    assert "NO_STEAL" in words and "STEAL" not in words, words


def test_suite_host_switches_steal_and_writes_its_tables(pkg, inside):
    small.test_suite_host_switches_steal_and_writes_its_tables(pkg, inside)
