"""The server package end to end (docs/server.md): the package command
builds a .deb from the guest's configuration (the scx variant's .config,
so that ccache has almost every object), the kernel package is unpacked
into a scratch root as dpkg would install it, and its kernel boots with
this machine's userland shared in (idlesteal/guest/hostroot.sh, as in
test_host_guest.py).  There `suite --host` runs a short suite: the
release is the package's, STEAL is there and off as booted, the A/B
switches it (steals under STEAL only), and the suite's tables and each
run's trace are written."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from idlesteal import paths
from idlesteal.guest import image, topology, tracepins, vm
from idlesteal.guest import read as guest_file
from idlesteal.kernel import build, package
from idlesteal.scx import own as scx
from idlesteal.util import run

from .conftest import kernel_for

pytestmark = pytest.mark.guest

TAG = "hostroot"
OUT = "/tmp/suite-out"
SUITE = "2x2x2 hackbench 1 200\n"


def script() -> str:
    repo = shlex.quote(str(paths.REPO))
    suite = ["/usr/bin/python3", "-m", "idlesteal", "suite", "--host", "--force-load",
             "--reps", "2", "--suite-file", "/tmp/server.suite", "--outdir", OUT]
    return "\n".join([
        guest_file("hostroot.sh"), f"hostroot_mount {TAG}", f"hostroot_keep {repo}",
        f"printf %s {shlex.quote(SUITE)} > /host/tmp/server.suite",
        "section release", "uname -r",
        "section features", "mount -t debugfs none /sys/kernel/debug 2>/dev/null",
        "cat /sys/kernel/debug/sched/features", "umount /sys/kernel/debug",
        "section suite",
        f"in_hostroot {repo} env IDLESTEAL_BUILD=/tmp/build {shlex.join(suite)} 2>&1 "
        "|| fail 'suite --host failed inside the packaged kernel'",
        "section summary", f"cat /host{OUT}/summary.txt",
        "section json", f"cat /host{OUT}/host-hackbench.json",
        "section tables", f"cat /host{OUT}/cover-tables.txt",
        "section traces", f"ls /host{OUT}/host-hackbench-traces", ""])


@pytest.fixture(scope="module")
def pkg() -> package.Package:
    kernel_for(scx.VARIANT)                  # its .config is the package's start
    return package.make_package(build.obj_for(scx.VARIANT) / ".config")


@pytest.fixture(scope="module")
def inside(pkg: package.Package, tmp_path_factory: pytest.TempPathFactory) -> vm.RunResult:
    root = tmp_path_factory.mktemp("pkgroot")
    run(["dpkg-deb", "-x", str(package.image_package(pkg)), str(root)])
    kernel = root / "boot" / f"vmlinuz-{pkg.release}"
    assert kernel.is_file(), sorted(p.name for p in (root / "boot").iterdir())
    return vm.run_script(script(), topology.get("2x2x2"), kernel, image.build_base(),
                         timeout=1500, name="package-guest",
                         shares=(vm.Share(Path("/"), TAG),), cmdline=tracepins.cmdline())


def test_the_package_names_the_series_and_its_commit(pkg):
    assert re.fullmatch(r"7\.2\.\d+-idlesteal-v6-[0-9a-f]{12}", pkg.release), pkg.release
    assert pkg.commit[:12] in pkg.version and pkg.version.startswith("7.2.")
    names = [f.name for f in pkg.files]
    assert any(n.startswith(f"linux-image-{pkg.release}_") for n in names), names
    rec = json.loads(package.record(pkg.release, "deb").read_text())
    assert rec["release"] == pkg.release and not rec["tree"]["dirty"]
    assert (package.out_dir() / f"config-{pkg.release}").exists()


def test_the_packaged_kernel_boots_with_steal_off(pkg, inside):
    assert inside.sections["release"].strip() == pkg.release
    words = inside.sections["features"].split()
    assert "NO_STEAL" in words and "STEAL" not in words, words


def test_suite_host_switches_steal_and_writes_its_tables(pkg, inside):
    out = inside.sections["suite"]
    assert re.search(r"features, STEAL yes\b", out) and "== host-hackbench" in out, out[-3000:]
    data = json.loads(inside.sections["json"])
    assert data["meta"]["A"] == ["NO_STEAL"] and data["meta"]["B"] == ["STEAL"]
    side = {s: [r for r in data["runs"] if r["side"] == s and r["rep"] >= 0] for s in "AB"}
    assert len(side["A"]) == 2 == len(side["B"])
    assert all(r["steal"] == 0 for r in side["A"]), side["A"]
    assert sum(r["steal"] for r in side["B"]) > 0, "no steal under STEAL"
    assert all(r["waste"] is not None for r in data["runs"])
    # each measured run's trace, for Perfetto
    assert sorted(inside.sections["traces"].split()) == [
        f"{side}-groups1-rep{rep}.trace.gz" for side in "AB" for rep in (0, 1)]
    summary = inside.sections["summary"]
    assert "hackbench" in summary and "host" in summary, summary
    # the cover letter's tables, ready for a reply on the list
    tables = inside.sections["tables"].splitlines()
    assert f"  Kernel: {pkg.release}" in tables, tables
    assert "  A = NO_STEAL, B = STEAL, 2 repetitions a side, interleaved" in tables, tables
    assert any(l.startswith("  hackbench -g 1 ") for l in tables), tables
