"""The series proven on another kernel base that has a series of its own
(7.3's rebase, patches/ports/7.3/): tests/guest/test_steal.py's
boots and checks, run against that base's `steal` kernel
(configs/variants.<base>: the series with its KUnit suites) -- KUnit at
boot, steals with STEAL and none with NO_STEAL, the steal statistics and
the why counters, affinity_check while stealing, every overload mask
empty after the load, the node limit, the memory-only node, the relaxed
LLC and the hot SMT siblings.

Markers `ports` and `proof`: `make test BASE=7.3` (`make test-ports`) runs
it for that base, and the default `make test` (CI) runs it for every port
base of PROOF_BASES (`-m "not ports or proof"`, IDLESTEAL_PROOF_BASES),
after test_steal.py on the default base: that port's steal kernel is built
and proven in CI; test_scx_ports.py, and the proof of
the ports CI leaves out, stay in `make test-ports`.  The bases run
are IDLESTEAL_BASE's when it names one other than the default (skipped
where that base has no series), else every port of PORT_BASES with one.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest

from idlesteal import bases
from idlesteal.guest import image

from .conftest import Guest, kernel_for
# test_steal.py's checks, run against this module's `guest` (pytest collects
# what a module imports under a test_ name; steal_run boots this guest).
from .test_steal import (steal_run, test_affinity_respected_while_stealing,  # noqa: F401
                         test_kunit_suites_pass, test_memory_only_node_does_not_count,
                         test_no_mask_is_kept_while_stealing_is_off, test_no_steal_stops_stealing,
                         test_node_limit, test_overload_masks_empty_after_load,
                         test_relaxed_llc_newidle_means_no_stealing,
                         test_schedstat_stays_at_17_steal_fields_in_debugfs,
                         test_smt_siblings_steal_when_every_task_is_hot,
                         test_steal_is_off_by_default_and_steals_when_on,
                         test_steal_stats_consistent, test_toggle_back_on_at_run_time,
                         test_why_counters_partition_newidle_balancing)
from .test_scx_ports import PORT_BASES

pytestmark = [pytest.mark.guest, pytest.mark.ports, pytest.mark.proof]

VARIANT = "steal"


# The ports the default `make test` (CI) proves: the Makefile's PROOF_BASES,
# space- or comma-separated; unset, every base of PORT_BASES.
PROOF_ENV = "IDLESTEAL_PROOF_BASES"


def bases_under_test() -> list[str]:
    env = os.environ.get(bases.ENV)
    if env and env != bases.DEFAULT:
        names = [env]
    else:
        names = os.environ.get(PROOF_ENV, " ".join(PORT_BASES)).replace(",", " ").split()
        for name in names:
            bases.get(name)      # an unknown base: bases' own error, at collection
    return [n for n in names if bases.get(n).series]


@pytest.fixture(scope="module", params=bases_under_test() or
                [pytest.param(None, marks=pytest.mark.skip(
                    reason="no port base with a series selected (IDLESTEAL_BASE, "
                    "IDLESTEAL_PROOF_BASES)"))])
def port_base(request) -> Iterator[bases.Base]:
    """The base, selected for as long as this module's tests run (the
    guest's runs go to its build directory)."""
    old = os.environ.get(bases.ENV)
    base = bases.select(request.param)
    try:
        yield base
    finally:
        if old is None:
            os.environ.pop(bases.ENV, None)
        else:
            os.environ[bases.ENV] = old


@pytest.fixture(scope="module")
def guest(port_base: bases.Base) -> Guest:
    """The base's steal kernel (built unless IDLESTEAL_TEST_NO_BUILD) and
    its initramfs, in place of conftest's default-base guest."""
    return Guest(kernel_for(VARIANT), image.build_base(), VARIANT)


def test_the_kernel_is_the_bases(steal_run, port_base):
    """The guest ran the base's own kernel (7.3.4 for linux-source-7.3
    7.3.4-1~bpo13+1), not the default base's."""
    upstream = port_base.version.rsplit("-", 1)[0]
    console = steal_run.console.read_text(errors="replace")
    assert re.search(rf"Linux version {re.escape(upstream)}(?![0-9.])", console), console[:2000]
