"""scx_idlesteal across LLCs and nodes, in one `4llc` boot of the `scx`
kernel (2 nodes of 2 LLCs of 4 CPUs; docs/scx.md, "Queues and placement").

CPU-bound tasks started in the first LLC (hogs pinned to it), then allowed
on every CPU: at their next slice end each one that waits behind another is
sent to an idle CPU (the arrival push, `remote_idle`), since none of them
ever wakes up to be placed again.

* 7 tasks (3 too many for the LLC): the 3 go to the other LLC of the node,
  where 4 CPUs idle, and at most one is ever seen on the other node (0, 0,
  1 and 1 in four boots: a moment when every LLC of the node had a task
  waiting, a kworker or the hogs' parent beside them).  Before, the push
  took any idle CPU of the task's mask (scx_bpf_pick_idle_cpu()), 8 of
  the 12 idle CPUs the other node's: 3, 4, 4 and 3 tasks there in four
  boots;
* 11 tasks (7 too many; the node has 8 CPUs): the node fills first and
  the rest go to the other node's idle CPUs (`remote_node`): the node comes
  first, it is not a wall.

IDLESTEAL_TEST_SCX_IDLESTEAL=PATH runs it against another build of the
loader (e.g. one of an older commit, to see it fail).
"""
from __future__ import annotations

import pytest

from idlesteal.guest import image, topology, vm
from idlesteal.scx import own as scx

from .conftest import kernel_for
from .test_scx_correctness import HELPERS, lines, loader, still_in_charge

pytestmark = pytest.mark.guest

HOGS_SECONDS = 120   # longer than any phase; the phase kills them
SAMPLES = 4          # reads of each task's CPU, 0.5 s apart, from 2.5 s after the widening
FITS = 7             # 4 in the first LLC, 3 for the other LLC of the node
SPILLS = 11          # 8 fill the node, 3 for the other node
OFF_NODE_MAX = 1     # of FITS, seen on the other node (see above)
REMOTE_NODE_MAX = 2  # pushes across nodes: one such task may cross and come back

# phase N: N hogs pinned to CPU 0's LLC, then allowed everywhere;
# "$TAG cpu PID CPU" per hog and sample.  The hogs run far longer than the
# phase needs and are killed at its end: under a loaded host finding them
# and widening their masks can take seconds, and a hog that ended on its own
# before the last sample would be missing from it.  /proc is read with
# `read`, a shell builtin, not one `cat` process per file.
SCRIPT = f"""
section topology
{topology.GUEST_SNIPPET.strip()}
{HELPERS}
section places
echo "llc0 $(cat /sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list)"
echo "node0 $(cat /sys/devices/system/node/node0/cpulist)"
echo "node1 $(cat /sys/devices/system/node/node1/cpulist)"
all=$(cat /sys/devices/system/cpu/online)
llc0=$(cat /sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list)
# Fields 4 (the parent) and 39 (the CPU) of $1/stat, or empty.
pstat() {{
    _l=; {{ read -r _l < $1/stat; }} 2>/dev/null
    set -- $_l
    _f4=$4; _f39=
    [ $# -ge 39 ] && {{ shift 38; _f39=$1; }}
}}
phase() {{
    taskset -c $llc0 hogs -n $1 -w 1 -d {HOGS_SECONDS} > /dev/null &
    _h=$!
    _n=$1
    # Its children, once all are there (forks are slow under TCG).
    for _w in $(seq 50); do
        sleep 0.2
        _kids=
        for _t in /proc/[0-9]*; do
            pstat $_t
            [ "$_f4" = "$_h" ] && _kids="$_kids ${{_t#/proc/}}"
        done
        [ $(echo $_kids | wc -w) -ge $_n ] && break
    done
    echo "$TAG found $(echo $_kids | wc -w) at $(cut -d' ' -f1 /proc/uptime)"
    for _k in $_kids; do taskset -p -c $all $_k > /dev/null; done
    sleep 2.5
    for _i in $(seq {SAMPLES}); do
        for _k in $_kids; do
            pstat /proc/$_k
            [ -n "$_f39" ] && echo "$TAG cpu $_k $_f39"
        done
        sleep 0.5
    done
    echo "$TAG sampled at $(cut -d' ' -f1 /proc/uptime)"
    kill -9 $_kids 2>/dev/null
    kill $_h 2>/dev/null
    wait $_h 2>/dev/null
}}
# This shell, what it starts and the loader on the last CPU: a CPU of node
# 0 they kept busy would send a task to node 1 with node 0 not full.
taskset -p -c $(cat /sys/devices/system/cpu/online | sed 's/.*-//') $$ > /dev/null
scx_start /tmp/numa.log scx_idlesteal
TAG=fits; phase {FITS}
after
scx_end
cat /tmp/numa.log
section spills
scx_start /tmp/spill.log scx_idlesteal
TAG=spills; phase {SPILLS}
after
scx_end
cat /tmp/spill.log
"""


def cpulist(text: str) -> set[int]:
    """"0-3,8" -> {0, 1, 2, 3, 8}."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


@pytest.fixture(scope="module")
def run() -> vm.RunResult:
    kernel = kernel_for(scx.VARIANT)
    initrd = image.build_base(files=scx.image_files({"scx_idlesteal": loader()}))
    preset = topology.get("4llc")
    res = vm.run_script(SCRIPT, preset, kernel, initrd, timeout=600, name="scx-numa")
    topology.verify(preset, res.sections["topology"])
    return res


def places(res: vm.RunResult) -> dict[str, set[int]]:
    got = dict(l.split(None, 1) for l in lines(res, "places")[:3])
    return {k: cpulist(v) for k, v in got.items()}


def samples(res: vm.RunResult, section: str, tag: str) -> dict[int, list[int]]:
    """Each hog's CPU in every sample: pid -> CPUs."""
    out: dict[int, list[int]] = {}
    for l in lines(res, section):
        w = l.split()
        if len(w) == 4 and w[:2] == [tag, "cpu"]:
            out.setdefault(int(w[2]), []).append(int(w[3]))
    return out


def test_tasks_pushed_out_of_a_full_llc_stay_in_the_node(run):
    where = places(run)
    assert where["llc0"] < where["node0"] and where["node0"].isdisjoint(where["node1"]), where
    got = samples(run, "places", "fits")
    assert len(got) == FITS, lines(run, "places")
    assert all(len(cpus) == SAMPLES for cpus in got.values()), lines(run, "places")
    other_llc = where["node0"] - where["llc0"]
    off_node = {pid: cpus for pid, cpus in got.items() if set(cpus) & where["node1"]}
    moved = {pid for pid, cpus in got.items() if cpus[-1] in other_llc}
    print(f"{FITS} hogs from LLC {sorted(where['llc0'])}: {len(moved)} in the node's other LLC, "
          f"{len(off_node)} seen on the other node")
    assert len(off_node) <= OFF_NODE_MAX, got
    assert len(moved) >= 2, got   # the push took them there (3 expected)
    still_in_charge(run, "places")
    final = scx.final_stats(run.sections["places"])
    assert int(final["remote_idle"]) > 0, final
    assert int(final.get("remote_node", 0)) <= REMOTE_NODE_MAX, final


def test_tasks_go_to_another_node_when_theirs_is_full(run):
    where = places(run)
    got = samples(run, "spills", "spills")
    assert len(got) == SPILLS, lines(run, "spills")
    assert all(len(cpus) == SAMPLES for cpus in got.values()), lines(run, "spills")
    last = [cpus[-1] for cpus in got.values()]
    on_node1 = sum(c in where["node1"] for c in last)
    on_node0 = sum(c in where["node0"] for c in last)
    print(f"{SPILLS} hogs: {on_node0} on node 0 ({len(where['node0'])} CPUs), {on_node1} on node 1")
    assert on_node1 >= 1 and on_node0 >= len(where["node0"]) - 2, got
    still_in_charge(run, "spills")
    final = scx.final_stats(run.sections["spills"])
    assert int(final["remote_node"]) > 0, final
