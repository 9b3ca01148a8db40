"""The benchmark image: perf, sysbench, wakelat and schbench run in the guest
and their output parses (idlesteal/measure/workload.py), with a tiny amount of
work each."""
from __future__ import annotations

import shlex

import pytest

from idlesteal.guest import image, topology, vm
from idlesteal.measure import workload

pytestmark = pytest.mark.guest

# (workload, level, size): small enough for a few seconds under TCG.
SMALL = [("hackbench-thread-pipe", 1, 20), ("perf-messaging", 1, 10), ("perf-pipe", 2, 200),
         ("sysbench-threads", 4, 10), ("sysbench-mutex", 4, 2000), ("wakelat", 2, 1),
         ("schbench", 2, 2), ("schbench-storm", 1, 2)]


@pytest.fixture(scope="module")
def tools_run(guest):
    initrd = image.build_base(tools=tuple(image.TOOLS))
    lines = []
    for name, level, size in SMALL:
        w = workload.get(name)
        lines += [f"section {name}", f"{shlex.join(w.argv(level, size))} 2>&1 || fail '{name}'"]
    return vm.run_script("\n".join(lines) + "\n", topology.get("2x2x2"), guest.kernel, initrd,
                         timeout=600, name="workloads")


@pytest.mark.parametrize("name,level,size", SMALL)
def test_workload_runs_and_parses(tools_run, name, level, size):
    w = workload.get(name)
    metrics = w.parse(tools_run.sections[name])
    assert metrics[w.metric] > 0
