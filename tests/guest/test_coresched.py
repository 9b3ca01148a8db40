"""Task stealing under core scheduling (the `scx` variant: the series with
CONFIG_SCHED_CORE), one 2x2x2 boot per base, STEAL on, EEVDF.

Two cookies in one LLC: cookie A runs a CPU hog on CPU 0 and a sleep loop
on its SMT sibling CPU 1, which so goes idle all the time; cookie B runs
three CPU hogs on CPU 2 that are also allowed on CPU 1.  A B task pulled
onto CPU 1 would force CPU 0 or CPU 1 idle whenever the other runs, which
is why task_hot() refuses it to the load balancer.  Then the same tasks
under one cookie, where CPU 1 may take a hog.

On 7.2 and 7.3 a CPU with core scheduling enabled does no newidle balancing
(pick_task_fair() returns first), so nothing is stolen anywhere while a
cookie exists.  6.12 still balances there (pick_next_task() calls
prev_balance(), balance_fair() sched_balance_newidle()), so its
can_steal_task() tests the cookie as task_hot() does: CPU 1 searches and
takes no B task, and takes one once the cookies match.  On 6.12 without
the test CPU 1 stole 32 B tasks in 5 s and failed once; with it, 0 and
256 refused, and 22 steals once the cookies matched.

The default base runs in `make test`; the ports (marker `ports`) in
`make test-ports`.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest

from idlesteal import bases
from idlesteal.guest import image, topology, vm
from idlesteal.measure import schedstat

from .conftest import kernel_for

pytestmark = pytest.mark.guest

VARIANT = "scx"
SECONDS = 5

HOG = 'sh -c "while :; do :; done"'
SLEEPER = 'sh -c "while :; do usleep 300; done"'

# Each phase's tasks write their PIDs to /tmp/cs.pids; B's hogs start on
# CPU 2 and are then allowed on CPUs 1 and 2 (mask 6).  A shell started
# by coresched, and what it forks, share that coresched's cookie.
SCRIPT = f"""
section cs_topology
cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list
cat /sys/devices/system/cpu/cpu2/topology/thread_siblings_list
cat > /tmp/cs_a.sh <<'EOF'
taskset -c 0 {HOG} & echo $! >> /tmp/cs.pids
taskset -c 1 {SLEEPER} & echo $! >> /tmp/cs.pids
EOF
cat > /tmp/cs_b.sh <<'EOF'
for i in 1 2 3; do
    taskset -c 2 {HOG} & echo $! >> /tmp/cs.pids
    taskset -p 6 $! > /dev/null
done
EOF
cs_phase() {{
    sleep 1
    section cs.$1.cookies
    for p in $(cat /tmp/cs.pids); do coresched -g $p; done
    section cs.$1.0
    schedsnap
    sleep {SECONDS}
    section cs.$1.1
    schedsnap
    kill $(cat /tmp/cs.pids)
    sleep 1
}}
echo STEAL > /sys/kernel/debug/sched/features
: > /tmp/cs.pids
coresched sh /tmp/cs_a.sh
coresched sh /tmp/cs_b.sh
cs_phase mismatch
: > /tmp/cs.pids
coresched sh -c 'sh /tmp/cs_a.sh; sh /tmp/cs_b.sh'
cs_phase match
echo NO_STEAL > /sys/kernel/debug/sched/features
"""


def bases_under_test() -> list[pytest.param]:
    env = os.environ.get(bases.ENV)
    default = [pytest.param(bases.DEFAULT, id=bases.DEFAULT)]
    if env and env != bases.DEFAULT:
        return [pytest.param(env, id=env, marks=pytest.mark.ports)]
    return default + [pytest.param("6.12", id="6.12", marks=pytest.mark.ports)]


@pytest.fixture(scope="module", params=bases_under_test())
def cs_run(request) -> Iterator[tuple[str, vm.RunResult]]:
    name = request.param
    old = os.environ.get(bases.ENV)
    bases.select(name)
    try:
        kernel = kernel_for(VARIANT)
        preset = topology.get("2x2x2")
        res = vm.run_script(SCRIPT, preset, kernel, image.build_base(), timeout=300,
                            name=f"coresched-{name}")
        yield name, res
    finally:
        if old is None:
            os.environ.pop(bases.ENV, None)
        else:
            os.environ[bases.ENV] = old


COOKIE = re.compile(r"^cookie (\d+) (0x[0-9a-f]+)$", re.M)


def cookies(res: vm.RunResult, phase: str) -> list[str]:
    return [c for _, c in COOKIE.findall(res.sections[f"cs.{phase}.cookies"])]


def steals(res: vm.RunResult, phase: str) -> dict[str, dict[int, int]]:
    a = schedstat.parse(res.sections[f"cs.{phase}.0"])
    b = schedstat.parse(res.sections[f"cs.{phase}.1"])
    return {k: {c: b.cpus[c].get(k) - a.cpus[c].get(k) for c in b.cpus}
            for k in ("steal_tasks", "steal_failed")}


def test_the_tasks_have_the_cookies_meant(cs_run):
    _, res = cs_run
    assert res.sections["cs_topology"].split()[:2] == ["0-1", "2-3"], res.sections["cs_topology"]
    mismatch, match = cookies(res, "mismatch"), cookies(res, "match")
    assert len(mismatch) == 5 and len(match) == 5, (mismatch, match)
    assert "0x0" not in mismatch + match
    assert len(set(mismatch[:2])) == 1 and len(set(mismatch[2:])) == 1
    assert mismatch[0] != mismatch[2], mismatch
    assert len(set(match)) == 1, match


# The bases whose CPUs still balance as they go idle under core scheduling.
BALANCES_UNDER_CORE_SCHED = {"6.12"}


def test_no_task_stolen_onto_a_core_of_another_cookie(cs_run):
    base, res = cs_run
    mm, m = steals(res, "mismatch"), steals(res, "match")
    if base not in BALANCES_UNDER_CORE_SCHED:
        # No newidle balancing while core scheduling is enabled.
        for phase, s in (("mismatch", mm), ("match", m)):
            assert sum(s["steal_tasks"].values()) == 0, (phase, s)
            assert sum(s["steal_failed"].values()) == 0, (phase, s)
        return
    assert mm["steal_failed"][1] > 0, f"CPU 1 never searched: {mm}"
    assert mm["steal_tasks"][1] == 0, f"CPU 1 took a task of another cookie: {mm}"
    assert m["steal_tasks"][1] > 0, f"CPU 1 took no task of its own cookie: {m}"
