"""STEAL_KICK (series patch 10), proven in a booted 2x2x2 guest.

The kick is sent when a CPU becomes overloaded while its LLC has an idle
CPU.  The constructed case: a CPU hog started on cpu1 (pinned there, then
allowed everywhere), and a second one started on cpu1 the same way, with the
other CPUs idle: cpu1 goes into the mask and, with STEAL_KICK, one idle CPU
of its LLC (cpus 0-3) is kicked and pulls a hog (NO_STEAL_HOT: see below).  Ten rounds with the kick
off, ten with it on, in one boot; then hackbench, with the kick off and on.
Every figure is a sum of the schedstat counters over the CPUs.
"""
from __future__ import annotations

import pytest

from idlesteal import schedstat, topology, vm

pytestmark = pytest.mark.guest

FEATURES = "/sys/kernel/debug/sched/features"
HB = "hackbench -g 1 -l 200 >/dev/null"

# hog: a busy loop started on cpu1 (pinned so it starts there), then allowed
# everywhere: it stays on cpu1 until something moves it.
KICK_SCRIPT = f"""
set -e
snap() {{ section "$1"; schedsnap; }}
hog() {{ taskset -c 1 sh -c 'while :; do :; done' >/dev/null 2>&1 & h=$!; sleep 0.05; taskset -p ff $h >/dev/null; echo $h; }}
rounds() {{
    i=0
    while [ $i -lt 10 ]; do
        a=$(hog); sleep 0.3
        b=$(hog); sleep 0.5
        kill $a $b; wait $a $b 2>/dev/null || :
        sleep 0.3
        i=$((i + 1))
    done
}}
section topology
{topology.GUEST_SNIPPET.strip()}
echo 1 > /proc/sys/kernel/sched_schedstats
echo STEAL > {FEATURES}
section features
cat {FEATURES}
# The hogs share cpu1 in turns of a slice, so the one just widened ran
# less than sched_migration_cost_ns ago: without NO_STEAL_HOT it is hot
# and stays (can_steal_task()'s policy, tested on its own elsewhere).
echo NO_STEAL_HOT > {FEATURES}
snap off0; rounds; snap off1
echo STEAL_KICK > {FEATURES}
snap on0; rounds; snap on1
echo NO_STEAL_KICK > {FEATURES}
echo STEAL_HOT > {FEATURES}
snap hboff0; {HB}; snap hboff1
echo STEAL_KICK > {FEATURES}
snap hbon0; {HB}; snap hbon1
echo NO_STEAL_KICK > {FEATURES}
"""


@pytest.fixture(scope="module")
def kick_run(guest):
    preset = topology.get("2x2x2")
    res = vm.run_script(KICK_SCRIPT, preset, guest.kernel, guest.initrd, timeout=600,
                        name="kick")
    topology.verify(preset, res.sections["topology"])
    return res


def delta(res: vm.RunResult, a: str, b: str) -> dict[str, int]:
    return schedstat.delta(schedstat.parse(res.sections[a]),
                           schedstat.parse(res.sections[b])).totals


def test_kick_is_off_by_default_and_never_fires_off(kick_run):
    feats = kick_run.sections["features"].split()
    assert "NO_STEAL_KICK" in feats and "STEAL" in feats
    for a, b in (("off0", "off1"), ("hboff0", "hboff1")):
        d = delta(kick_run, a, b)
        assert (d["steal_kicks_sent"], d["steal_kicks"], d["steal_kick_tasks"]) == (0, 0, 0), \
            f"{a}..{b}: kicks with STEAL_KICK off: {d}"


def test_kick_fires_on_the_overload_transition_and_pulls(kick_run):
    d = delta(kick_run, "on0", "on1")
    # Ten transitions of cpu1 into the mask with cpus 0, 2 and 3 idle.
    assert d["steal_kicks_sent"] >= 5, f"kicks sent in 10 rounds: {d['steal_kicks_sent']}"
    assert d["steal_kicks"] <= d["steal_kicks_sent"]
    assert d["steal_kick_tasks"] >= 1, f"no kick pulled a hog: {d}"


def test_kick_under_hackbench(kick_run):
    d = delta(kick_run, "hbon0", "hbon1")
    assert d["steal_kicks_sent"] > 0
    # a kick sent just before the last snapshot may run just after it
    assert d["steal_kick_tasks"] <= d["steal_kicks"] <= d["steal_kicks_sent"] + 1
