"""STEAL_KICK (series patch 10), proven in a booted 2x2x2 guest.

The kick is sent when a CPU becomes overloaded while its LLC has an idle
CPU.  The constructed case: two CPU hogs pinned to cpu1, then allowed everywhere
one after the other, with the other CPUs idle: each widening puts cpu1 into
the mask again and, with STEAL_KICK, one idle CPU of its LLC (cpus 0-3) is
kicked and pulls a hog (NO_STEAL_HOT: see below).  Ten rounds with the kick
off, ten with it on, in one boot; then hackbench, with the kick off and on.
Every figure is a sum of the schedstat counters over the CPUs.
"""
from __future__ import annotations

import pytest

from idlesteal.measure import schedstat
from idlesteal.guest import topology, vm

pytestmark = pytest.mark.guest

FEATURES = "/sys/kernel/debug/sched/features"
HB = "hackbench -g 1 -l 200 >/dev/null"

# Each round: two busy loops pinned to cpu1, then allowed everywhere one
# after the other.  Widening a queued task dequeues and enqueues it, so each
# widening is a transition of cpu1 into the mask while a task that may move
# waits there (the one widened, or the other once both are), and cpus 0, 2
# and 3 of the LLC are idle.  Pinned first so that no balancer moves one away
# before the transition.
KICK_SCRIPT = f"""
set -e
snap() {{ section "$1"; schedsnap; }}
rounds() {{
    i=0
    while [ $i -lt 10 ]; do
        taskset -c 1 sh -c 'while :; do :; done' >/dev/null 2>&1 & a=$!
        taskset -c 1 sh -c 'while :; do :; done' >/dev/null 2>&1 & b=$!
        sleep 0.3
        taskset -p ff $a >/dev/null; sleep 0.2
        taskset -p ff $b >/dev/null; sleep 0.3
        kill $a $b; wait $a $b 2>/dev/null || :
        sleep 0.2
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
sleep 1
snap end
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
    assert d["steal_kick_tasks"] >= 1, f"no kick pulled a hog: {d}"


def test_kick_under_hackbench(kick_run):
    d = delta(kick_run, "hbon0", "hbon1")
    assert d["steal_kicks_sent"] > 0
    # counted on the kicked CPU, in the same function
    assert d["steal_kick_tasks"] <= d["steal_kicks"]


def test_kicks_sent_and_run_add_up(kick_run):
    """Totals since boot, read a second after the last kick could be sent:
    a snapshot reads the CPUs one after the other, so a delta can count a
    kick's run without its sending; the totals cannot."""
    end = schedstat.parse(kick_run.sections["end"])
    sent, ran, pulled = (end.total(n) for n in schedstat.KICK_FIELDS)
    assert 0 < pulled <= ran <= sent, (sent, ran, pulled)
