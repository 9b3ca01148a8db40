"""The guest that plays the server (issue 29, test 5b; docs/host.md): the
steal kernel boots with this machine's userland shared read-only over
virtio-9p (vm.Share, configs/virtfs.config), chroots into it
(idlesteal/guest/hostroot.sh) and runs host mode's own end-to-end tests,
tests/test_host_run.py, there: on a kernel with the series they take the
STEAL A/B (NO_STEAL against STEAL, steals under STEAL only, the waste
columns), a run killed with SIGTERM in its middle and the machine's state
read back, side-by-side and suite --host.  The refusal test, which needs a
kernel without the series, must skip saying why."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from idlesteal import paths, topology, vm
from idlesteal.guest import read as guest_file

pytestmark = pytest.mark.guest

TAG = "hostroot"


def script() -> str:
    pytest_cmd = ["/usr/bin/python3", "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs",
                  "tests/test_host_run.py"]
    return "\n".join([guest_file("hostroot.sh"), f"hostroot_mount {TAG}",
                      "section pytest",
                      f"in_hostroot {shlex.quote(str(paths.REPO))} {shlex.join(pytest_cmd)} 2>&1 "
                      "|| fail 'host-mode tests failed inside the guest'", ""])


@pytest.fixture(scope="module")
def inside(guest) -> vm.RunResult:
    return vm.run_script(script(), topology.get("2x2x2"), guest.kernel, guest.initrd,
                         timeout=1800, name="host-guest", shares=(vm.Share(Path("/"), TAG),))


def test_host_mode_tests_pass_inside_a_guest_with_the_series(inside):
    out = inside.sections["pytest"]
    m = re.search(r"(\d+) passed(?:, (\d+) skipped)? in ", out)
    assert m, out[-3000:]
    assert int(m.group(1)) >= 5 and int(m.group(2) or 0) == 1, out[-3000:]
    # the one skip: the refusal needs a kernel without the series
    assert "this kernel has the series' STEAL feature: nothing to refuse" in out, out[-3000:]
    assert "failed" not in out.splitlines()[-1]
