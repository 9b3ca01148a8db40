from pathlib import Path

import pytest

from idlesteal.guest import topology
from idlesteal.util import HarnessError


def guest_text(preset: topology.Preset, llc_override=None) -> str:
    """What GUEST_SNIPPET prints on a guest that matches the preset."""
    lines = []
    smt = {c: g for g in preset.smt_groups() for c in g}
    llc = {c: g for g in preset.llc_groups() for c in g}
    for cpu in range(preset.ncpus):
        l = llc_override(cpu) if llc_override else llc[cpu]
        lines.append(f"cpu {cpu} smt={fmt(smt[cpu])} llc={fmt(l)} pkg={cpu // (preset.cores * preset.threads)}")
    for n, g in enumerate(preset.node_groups()):
        lines.append(f"node {n} cpus={fmt(g)}")
    for n in range(preset.mem_nodes):                 # memory only: empty cpulist
        lines.append(f"node {preset.nodes + n} cpus=")
    lines.append(f"online 0-{preset.ncpus - 1}")
    return "\n".join(lines) + "\n"


def fmt(cpus):
    if not cpus:
        return "-"
    return f"{cpus[0]}-{cpus[-1]}" if len(cpus) > 1 else str(cpus[0])


def test_required_presets_exist():
    for name in ["1x1x2", "2x2x2", "2x4x2", "seed160", "4node"]:
        assert name in topology.PRESETS
    assert topology.get("seed160").ncpus == 160
    assert topology.get("seed160").nodes == 2
    assert topology.get("4node").nodes == 4


def test_unknown_preset_lists_known_ones():
    with pytest.raises(HarnessError) as e:
        topology.get("3x3x3")
    for name in topology.PRESETS:
        assert name in str(e.value)


def test_groups_2x2x2():
    p = topology.get("2x2x2")
    assert p.smt_groups() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert p.llc_groups() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert p.node_groups() == [list(range(8))]


def test_qemu_args_numa():
    args = topology.get("4node").qemu_args()
    assert "16,sockets=4,dies=1,cores=2,threads=2" in args
    assert args.count("-numa") == 8     # 4 nodes + 4 socket mappings
    assert "cpu,node-id=3,socket-id=3" in args
    assert "-numa" not in topology.get("2x2x2").qemu_args()


def test_parse_cpulist():
    assert topology.parse_cpulist("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert topology.parse_cpulist("5") == [5]
    assert topology.parse_cpulist("-") == []


@pytest.mark.parametrize("name", list(topology.PRESETS))
def test_matching_guest_passes(name):
    p = topology.get(name)
    obs = topology.verify(p, guest_text(p))
    assert len(obs.online) == p.ncpus


def test_missing_l3_is_reported():
    p = topology.get("2x2x2")
    with pytest.raises(topology.TopologyError) as e:
        topology.verify(p, guest_text(p, llc_override=lambda c: []))
    assert "LLC (L3) siblings: 8 CPU(s) differ" in str(e.value)


def test_l3_per_machine_instead_of_per_socket_is_reported():
    p = topology.get("2x2x2")
    problems = topology.check(p, topology.parse(guest_text(p, llc_override=lambda c: list(range(8)))))
    assert len(problems) == 1 and "cpu0 has 0,1,2,3,4,5,6,7, expected 0,1,2,3" in problems[0]


def test_wrong_node_count_is_reported():
    p = topology.get("seed160")
    text = guest_text(p).replace("node 1 cpus=80-159\n", "").replace("node 0 cpus=0-79", "node 0 cpus=0-159")
    problems = topology.check(p, topology.parse(text))
    assert any("NUMA nodes: guest has 1" in x for x in problems)


def test_many_small_llc_preset_has_one_llc_per_die():
    p = topology.get("8llc")
    assert (p.ncpus, len(p.llc_groups()), len(p.node_groups())) == (64, 8, 2)
    assert p.llc_groups()[5] == list(range(40, 48))
    assert "-smp" in p.qemu_args() and "64,sockets=2,dies=4,cores=4,threads=2" in p.qemu_args()
    # node 1 is socket 1: its four dies
    assert p.node_groups()[1] == list(range(32, 64))
    topology.verify(p, guest_text(p))
    # A guest that saw one L3 per socket (dies ignored) is caught.
    wrong = guest_text(p, lambda cpu: list(range(cpu // 32 * 32, cpu // 32 * 32 + 32)))
    with pytest.raises(topology.TopologyError, match="LLC"):
        topology.verify(p, wrong)


def test_scaled_down_many_llc_preset():
    """4llc: 8llc's shape (an L3 per die, two nodes) at 16 CPUs."""
    p = topology.get("4llc")
    assert (p.ncpus, len(p.llc_groups()), len(p.node_groups())) == (16, 4, 2)
    assert p.llc_groups()[2] == [8, 9, 10, 11]
    assert "16,sockets=2,dies=2,cores=2,threads=2" in p.qemu_args()
    assert p.node_groups()[1] == list(range(8, 16))
    topology.verify(p, guest_text(p))


@pytest.mark.parametrize("name", ["seed160", "8llc"])
def test_big_presets_skip_the_delay_loop_calibration(name):
    """Every secondary CPU would run calibrate_delay_direct() for seconds under
    TCG (seed160 had not booted after 10 minutes)."""
    p = topology.get(name)
    cmd = p.qemu_command(Path("/k"), Path("/i"), Path("/c"), Path("/o"), [])
    append = cmd[cmd.index("-append") + 1]
    assert any(w.startswith("lpj=") and int(w[4:]) > 0 for w in append.split())


def test_memory_only_node_preset():
    p = topology.get("2node+mem")
    args = p.qemu_args()
    assert "node,nodeid=2,memdev=mem2" in args and "cpu,node-id=2,socket-id=1" not in args
    assert [a for a in args if a.startswith("cpu,node-id=")] == [
        "cpu,node-id=0,socket-id=0", "cpu,node-id=1,socket-id=1"]
    topology.verify(p, guest_text(p))
    with pytest.raises(topology.TopologyError, match="memory only: guest has 0, expected 1"):
        topology.verify(p, guest_text(p).replace("node 2 cpus=\n", ""))
