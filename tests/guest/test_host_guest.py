"""The guest that plays the server (issue 29, test 5b; docs/host.md): a
kernel boots with this machine's userland shared read-only over virtio-9p
(vm.Share, configs/virtfs.config), chroots into it
(idlesteal/guest/hostroot.sh) and runs host mode's own end-to-end tests,
tests/test_host_run.py, there.

- On the steal kernel (the series, no sched_ext) all of them: the STEAL A/B
  (steals under STEAL only, the waste columns), a run killed with SIGTERM in
  its middle and the machine's state read back, suite --host, and
  side-by-side --host of eevdf and eevdf+steal (the sched_ext schedulers
  left out with their reason).  Two must skip, saying why: the refusal
  (it needs a kernel without the series) and the kill under sched_ext.
- On the scx kernel (the series and sched_ext) the side-by-side ones:
  eevdf, eevdf+steal, scx_idlesteal and scx_bpfland in one run, and a run
  killed while scx_idlesteal is in charge, sched_ext read back disabled."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from idlesteal import image, paths, scx, topology, vm
from idlesteal.guest import read as guest_file

from .conftest import kernel_for

pytestmark = pytest.mark.guest

TAG = "hostroot"


def script(select: str = "") -> str:
    pytest_cmd = ["/usr/bin/python3", "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs",
                  "tests/test_host_run.py", *(["-k", select] if select else [])]
    return "\n".join([guest_file("hostroot.sh"), f"hostroot_mount {TAG}",
                      "section pytest",
                      f"in_hostroot {shlex.quote(str(paths.REPO))} {shlex.join(pytest_cmd)} 2>&1 "
                      "|| fail 'host-mode tests failed inside the guest'", ""])


def boot(kernel: Path, initrd: Path, select: str = "") -> vm.RunResult:
    return vm.run_script(script(select), topology.get("2x2x2"), kernel, initrd,
                         timeout=2400, name="host-guest", shares=(vm.Share(Path("/"), TAG),))


def summary(out: str) -> tuple[int, int]:
    m = re.search(r"(\d+) passed(?:, (\d+) skipped)? in ", out)
    assert m, out[-3000:]
    return int(m.group(1)), int(m.group(2) or 0)


@pytest.fixture(scope="module")
def inside(guest) -> vm.RunResult:
    return boot(guest.kernel, guest.initrd)


@pytest.fixture(scope="module")
def inside_scx() -> vm.RunResult:
    if not scx.binary("scx_idlesteal").exists():
        pytest.fail("scx_idlesteal is not built (make scx)")
    return boot(kernel_for(scx.VARIANT), image.build_base(), select="side_by_side")


def test_host_mode_tests_pass_inside_a_guest_with_the_series(inside):
    out = inside.sections["pytest"]
    passed, skipped = summary(out)
    assert passed >= 6 and skipped == 2, out[-3000:]
    # the refusal needs a kernel without the series, the kill under sched_ext a kernel with it
    assert "this kernel has the series' STEAL feature: nothing to refuse" in out, out[-3000:]
    assert "the running kernel has no sched_ext (the scx guest" in out, out[-3000:]


def test_side_by_side_host_with_sched_ext_inside_the_scx_guest(inside_scx):
    out = inside_scx.sections["pytest"]
    assert summary(out) == (2, 0), out[-3000:]
