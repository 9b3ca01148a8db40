"""Short stress run on the debug kernel (KASAN, lockdep, PROVE_RCU), both
topologies: the same suite as `make stress`, IDLESTEAL_STRESS_SECONDS of load
per preset (default 60; the Makefile passes STRESS_SHORT_SECONDS).  Minimums
scale with the duration (stress.THRESHOLDS); summaries go to build/stress/, not
to the tracked results/stress/ (that is `make stress`'s).
"""
from __future__ import annotations

import os

import pytest

from idlesteal.kernel import build
from idlesteal import paths
from idlesteal.runs import stress

# The debug kernel (KASAN, lockdep) costs ~12 min cold on the 2-core host
# and the two runs ~4 more: make test-full (or make stress-short), not CI.
pytestmark = [pytest.mark.guest, pytest.mark.full]


@pytest.fixture(scope="session")
def debug_kernel(guest):
    """The debug variant, built after the session's prepare (guest fixture)."""
    if os.environ.get("IDLESTEAL_TEST_NO_BUILD"):
        return build.bzimage(stress.VARIANT)
    return build.build(stress.VARIANT)


@pytest.mark.parametrize("preset", ["2x2x2", "2node"])
def test_short_stress(guest, debug_kernel, preset):
    seconds = int(os.environ.get("IDLESTEAL_STRESS_SECONDS", "60"))
    s, path = stress.run(preset, seconds, debug_kernel, guest.initrd,
                         outdir=paths.build_dir() / "stress")
    assert paths.results_dir() not in path.parents
    assert s["passed"], f"{path}\n" + stress.report(s)
