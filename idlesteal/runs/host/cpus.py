"""The running machine's CPUs as sysfs describes them (host mode,
idlesteal/runs/host/): read_topology() gives the online CPUs' SMT
siblings, last-level caches, NUMA nodes, packages and capacities as a
SysTopology, which the wasted-time measure models and the offer describes;
check_same() compares it with what the script saw at the end, since CPU
hotplug or a changed LLC during a run make the measure wrong.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from ...guest import topology
from ...measure import waste as wst
from .common import ROOT, HostError, _p, _read

def _groups(by_cpu: dict[int, list[int]]) -> list[list[int]]:
    """Distinct sibling lists, ordered by their first CPU."""
    return [list(g) for g in sorted({tuple(g) for g in by_cpu.values() if g},
                                    key=lambda g: g[0])]


@dataclass
class SysTopology:
    """The running machine's CPUs as sysfs describes them (online CPUs only)."""
    online: list[int]
    smt: list[list[int]]
    llc: list[list[int]]
    nodes: list[list[int]]
    packages: list[list[int]]
    capacity: dict[int, int] = field(default_factory=dict)   # cpu_capacity, where there
    llc_source: str = "cache/index3/shared_cpu_list"

    @property
    def ncpus(self) -> int:
        return len(self.online)

    def waste_topology(self) -> wst.Topology:
        try:
            return wst.Topology.from_groups(self.llc, self.nodes)
        except wst.WasteError as e:
            raise HostError(f"the wasted-time measure cannot model this machine: {e} "
                            "(an LLC spanning NUMA nodes, e.g. sub-NUMA clustering); "
                            "run with --waste off") from None

    def describe(self) -> str:
        def fmt(gs: list[list[int]]) -> str:
            return " | ".join(_cpulist(g) for g in gs)
        smt = "none" if all(len(g) == 1 for g in self.smt) else \
            f"{len(self.smt)} cores of {'/'.join(sorted({str(len(g)) for g in self.smt}))} threads"
        caps = sorted(set(self.capacity.values()))
        cap = ("capacities " + ", ".join(map(str, caps))) if len(caps) > 1 else \
            "capacities equal" + (f" ({caps[0]})" if caps else " (no cpu_capacity)")
        return (f"{self.ncpus} CPUs online ({_cpulist(self.online)}), {len(self.packages)} "
                f"package(s), {len(self.nodes)} node(s) [{fmt(self.nodes)}], "
                f"{len(self.llc)} LLC(s) [{fmt(self.llc)}] from {self.llc_source}, "
                f"SMT {smt}, {cap}")

    def to_json(self) -> dict:
        return asdict(self)


def _cpulist(cpus: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    out: list[str] = []
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out) or "-"


def _llc_of(cpu_dir: Path) -> tuple[Optional[list[int]], str]:
    """(shared_cpu_list of the CPU's last-level cache, where it came from)."""
    idx3 = _read(cpu_dir / "cache/index3/shared_cpu_list")
    if idx3 is not None:
        return topology.parse_cpulist(idx3), "cache/index3/shared_cpu_list"
    best: tuple[int, Optional[list[int]], str] = (-1, None, "")
    for d in sorted(cpu_dir.glob("cache/index[0-9]*")):
        level, shared = _read(d / "level"), _read(d / "shared_cpu_list")
        kind = (_read(d / "type") or "").strip()
        if level is None or shared is None or kind == "Instruction":
            continue
        if int(level) > best[0]:
            best = (int(level), topology.parse_cpulist(shared),
                    f"cache/{d.name}/shared_cpu_list (level {int(level)}: no index3)")
    return best[1], best[2]


def read_topology(root: Path = ROOT) -> SysTopology:
    """The topology of the online CPUs from sysfs: SMT siblings
    (thread_siblings_list), LLCs (cache/index3/shared_cpu_list, else the
    highest cache level, else the package), nodes (node*/cpulist), packages
    and capacities (cpu_capacity, asymmetric machines)."""
    base = _p(root, "sys/devices/system/cpu")
    text = _read(base / "online")
    if text is None:
        raise HostError(f"{base / 'online'}: not readable (no sysfs?)")
    online = topology.parse_cpulist(text)
    on = set(online)
    smt: dict[int, list[int]] = {}
    llc: dict[int, list[int]] = {}
    pkg: dict[int, str] = {}
    cap: dict[int, int] = {}
    sources = set()
    for cpu in online:
        d = base / f"cpu{cpu}"
        sib = _read(d / "topology/thread_siblings_list")
        smt[cpu] = [c for c in topology.parse_cpulist(sib) if c in on] if sib else [cpu]
        pkg[cpu] = (_read(d / "topology/physical_package_id") or "0").strip()
        shared, src = _llc_of(d)
        if shared is not None:
            llc[cpu] = [c for c in shared if c in on]
            sources.add(src)
        c = _read(d / "cpu_capacity")
        if c is not None and c.strip().isdigit():
            cap[cpu] = int(c)
    packages = _groups({c: sorted(x for x in online if pkg[x] == pkg[c]) for c in online})
    if len(llc) < len(online):       # no cache information: the package is the LLC
        llc = {c: next(g for g in packages if c in g) for c in online}
        sources = {"the package (no cache/index*/shared_cpu_list)"}
    nodes: dict[int, list[int]] = {}
    for nd in sorted(_p(root, "sys/devices/system/node").glob("node[0-9]*")):
        cl = _read(nd / "cpulist")
        cpus = [c for c in topology.parse_cpulist(cl)] if cl else []
        cpus = [c for c in cpus if c in on]
        if cpus:
            nodes[int(nd.name[4:])] = cpus
    node_groups = [nodes[n] for n in sorted(nodes)] or [online]
    return SysTopology(online, _groups(smt), _groups(llc), node_groups, packages, cap,
                       "; ".join(sorted(sources)))


def check_same(start: SysTopology, text: str) -> list[str]:
    """Differences between the topology at the start and what the script
    saw (its `topology` section, topology.GUEST_SNIPPET): CPU hotplug or a
    changed LLC during the run make the measure wrong."""
    obs = topology.parse(text)
    problems = []
    if obs.online != start.online:
        problems.append(f"online CPUs {_cpulist(obs.online)}, at the start "
                        f"{_cpulist(start.online)}")
    seen = _groups({c: [x for x in g if x in set(obs.online)] for c, g in obs.llc.items()
                    if c in set(obs.online)})
    if obs.llc and all(obs.llc.values()) and seen != start.llc and \
            start.llc_source.startswith("cache/index3"):
        problems.append(f"LLCs {seen}, at the start {start.llc}")
    return problems
