"""The guest that plays the server (docs/host.md): the scx
kernel (the series and sched_ext) boots with this machine's userland shared
read-only over virtio-9p (vm.Share, configs/virtfs.config), chroots into it
(idlesteal/guest/hostroot.sh) and runs host mode's own end-to-end tests,
tests/test_host_run.py, there: the STEAL A/B (steals under STEAL only, the
waste columns), a run killed with SIGTERM in its middle and the machine's
state read back, suite --host, side-by-side --host of eevdf, eevdf+steal,
scx_idlesteal and scx_bpfland, a run killed with SIGTERM while scx_idlesteal
is in charge (sched_ext read back disabled), and one killed with SIGKILL there
(its script ended by the next run).  One must skip, saying why: the refusal,
which needs a kernel without the series."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from idlesteal.guest import image, topology, tracepins, vm
from idlesteal import paths
from idlesteal.scx import peers, own as scx
from idlesteal.guest import read as guest_file

from .conftest import kernel_for, no_build

pytestmark = pytest.mark.guest

TAG = "hostroot"


def script() -> str:
    pytest_cmd = ["/usr/bin/python3", "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs",
                  "--color=no", "--durations=0", "tests/test_host_run.py"]
    repo = shlex.quote(str(paths.REPO))
    return "\n".join([guest_file("hostroot.sh"), f"hostroot_mount {TAG}",
                      f"hostroot_keep {repo}",      # a checkout under /tmp (CI's clone)
                      "section pytest",
                      f"in_hostroot {repo} {shlex.join(pytest_cmd)} 2>&1 "
                      "|| fail 'host-mode tests failed inside the guest'", ""])


def failures(output: str, limit: int = 15000) -> str:
    """The pytest report's failures, from its FAILURES line on (the first
    `limit` characters): what a failure inside the guest says about itself,
    which the error's 25-line tail would cut (a killed run's process
    stacks, tests/test_host_run.py's _stop())."""
    i = output.find("= FAILURES =")
    return output[output.rfind("\n", 0, i) + 1:][:limit] if i >= 0 else ""


def boot(kernel: Path, initrd: Path) -> vm.RunResult:
    # host mode turns the measure's events on and off in its own instance,
    # run after run: pinned, so that this patches no code (docs/tcg.md)
    try:
        return vm.run_script(script(), topology.get("2x2x2"), kernel, initrd,
                             timeout=2400, name="host-guest", shares=(vm.Share(Path("/"), TAG),),
                             cmdline=tracepins.cmdline())
    except vm.GuestScriptError as e:
        try:
            report = failures((e.run_dir / "output.log").read_text(errors="replace"))
        except OSError:
            report = ""
        if not report:
            raise
        raise vm.GuestScriptError(f"{report}\n(the report's start, from {e.run_dir}/output.log)",
                                  e.console, e.run_dir) from e


@pytest.fixture(scope="module")
def inside() -> vm.RunResult:
    """The loaders are this machine's own (the share): built here first,
    where they are at test_host_run.py's paths."""
    kernel = kernel_for(scx.VARIANT)
    if no_build():
        for path in (scx.binary("scx_idlesteal"), peers.binary("scx_bpfland")):
            if not path.exists():
                pytest.fail(f"{path} is not built (make scx)")
    else:
        scx.build_schedulers(names=("scx_idlesteal",))
        peers.ensure(("scx_bpfland",))
    return boot(kernel, image.build_base())


@pytest.mark.full          # ~8-20 min of TCG: make test-full (docs/timings.md)
def test_host_mode_tests_pass_inside_a_guest_with_the_series_and_sched_ext(inside):
    out = re.sub(r"\x1b\[[0-9;]*m", "", inside.sections["pytest"])
    m = re.search(r"(\d+) passed(?:, (\d+) skipped)? in ", out)
    assert m, out[-3000:]
    # all of tests/test_host_run.py (8 tests) but the refusal
    assert int(m.group(1)) >= 7 and int(m.group(2) or 0) == 1, out[-3000:]
    # the one skip: the refusal needs a kernel without the series
    assert "this kernel has the series' STEAL feature: nothing to refuse" in out, out[-3000:]


def test_a_failure_inside_the_guest_is_reported_from_its_start():
    out = ("....F\n=================== FAILURES ===================\n"
           "_ test_x _\nthe run had not ended 120 s after SIGTERM; its processes:\n"
           "  7 D wchan p9_client_rpc: umount\n" + "x\n" * 40 + "1 failed in 3s\n")
    got = failures(out)
    assert got.startswith("=================== FAILURES") and "p9_client_rpc" in got
    assert failures(out, limit=60) == got[:60]
    assert failures("....\n5 passed in 1s\n") == ""
