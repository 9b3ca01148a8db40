"""The asymmetric-capacity arm64 guest (idlesteal/asym.py): one boot of the
default preset with the series kernel; capacities, SMT siblings and the
SD_ASYM_CPUCAPACITY domain are verified, a short placement run completes
while sched features (static keys) are flipped under multi-threaded TCG.

IDLESTEAL_TEST_NO_BUILD=1 uses the arm64 kernel already built.
"""
from __future__ import annotations

import os

import pytest

from idlesteal import asym, build, image, tree, vm

pytestmark = pytest.mark.guest

ROUNDS = 30


@pytest.fixture(scope="module")
def asym_run():
    preset = asym.get(asym.DEFAULT_PRESET)
    if os.environ.get("IDLESTEAL_TEST_NO_BUILD"):
        kernel = build.kernel_image(asym.VARIANT, arch="arm64")
    else:
        tree.prepare()
        kernel = build.build(asym.VARIANT, arch="arm64")
    initrd = image.build_base("arm64")
    res = vm.run_script(asym.smoke_script(preset, preset.big, ROUNDS,
                                          race=preset.race_cpus()), preset, kernel, initrd,
                        timeout=400, name="asym-test")
    return preset, res


def test_asym_topology_verified(asym_run):
    preset, res = asym_run
    obs = asym.verify(preset, res.sections["topology"])
    assert sorted(set(obs.cap.values())) == [512, 1024]
    assert obs.smt[0] == [0, 1] and obs.smt[7] == [6, 7]
    assert [name for name, _ in obs.domains[0]] == ["SMT", "MC"]


def test_asym_placement_round(asym_run):
    preset, res = asym_run
    out = res.sections["placement"]
    got = asym.parse_results(out)
    assert len(got) == 1, out
    r = got[0]
    assert r["rounds"] == ROUNDS and r["threads"] == preset.big
    assert r["cores"] == preset.cores and r["smt"] == preset.threads
    assert r["unknown_cpus"] == 0
    assert 0 <= r["stacked_rounds"] <= ROUNDS
    assert "flips-done" in out, "the sched_feat flipper did not finish"
    assert "aarch64" in res.sections["uname"]


def test_asym_concurrent_wakers_round(asym_run):
    preset, res = asym_run
    got = asym.parse_results(res.sections["placement-wakers"])
    assert len(got) == 1, res.sections["placement-wakers"]
    r = got[0]
    assert r["wakers"] == 2 and r["parks"] == 2 and r["rounds"] == ROUNDS
    assert r["unknown_cpus"] == 0 and 0 <= r["stacked_rounds"] <= ROUNDS
