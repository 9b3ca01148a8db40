"""Where a waiter could run, for the wasted-CPU-time measure (the
package's doc, "Affinity"): the `Topology` (CPU -> LLC, CPU -> NUMA node)
and each task's allowed set (`Affinity`: by thread id, by name, per-CPU
kthreads by name; `AFFINITY_MARK` lines change a thread's set mid-trace)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from ...guest.topology import Preset, parse_cpulist
from ...util import ParseError
from .trace import WasteError


@dataclass(frozen=True, eq=False)
class Topology:
    """cpu -> LLC id and cpu -> NUMA node id.  Every LLC lies in one node."""
    llc: Mapping[int, int]
    node: Mapping[int, int]

    def __post_init__(self) -> None:
        if set(self.llc) != set(self.node):
            raise WasteError("topology: llc and node maps name different CPUs")
        node_of_llc: dict[int, int] = {}
        for cpu, llc in self.llc.items():
            if node_of_llc.setdefault(llc, self.node[cpu]) != self.node[cpu]:
                raise WasteError(f"topology: LLC {llc} spans NUMA nodes")

    @property
    def cpus(self) -> list[int]:
        return sorted(self.llc)

    @classmethod
    def from_groups(cls, llcs: Iterable[Iterable[int]],
                    nodes: Optional[Iterable[Iterable[int]]] = None) -> Topology:
        """LLC i = the i-th group of CPUs; node j likewise (default: one node)."""
        llc = {cpu: i for i, group in enumerate(llcs) for cpu in group}
        node = ({cpu: j for j, group in enumerate(nodes) for cpu in group}
                if nodes is not None else {cpu: 0 for cpu in llc})
        return cls(llc, node)


def from_preset(preset: Preset) -> Topology:
    """The topology a `topology.Preset` promises (QEMU's CPU numbering:
    consecutive CPUs fill a core, then a die = LLC, then a socket; sockets
    spread evenly over the nodes): 2x2x2 is CPUs 0-3 in LLC 0, 4-7 in LLC 1."""
    return Topology.from_groups(preset.llc_groups(), preset.node_groups())


# ---------------------------------------------------------------- affinity

_PERCPU_KTHREAD = re.compile(r"^(?:ksoftirqd|migration|cpuhp|idle_inject|rcuc)/(\d+)$"
                             r"|^kworker/(\d+):")


def kthread_cpu(comm: str) -> Optional[int]:
    """The CPU a per-CPU kernel thread is bound to, by its name, or None."""
    m = _PERCPU_KTHREAD.match(comm)
    if m is None:
        return None
    return int(m.group(1) if m.group(1) is not None else m.group(2))


@dataclass
class Affinity:
    """Allowed CPUs by pid (a thread id), then by comm; then per-CPU
    kthreads by name; anything else: every CPU (None)."""
    by_pid: dict[int, frozenset[int]] = field(default_factory=dict)
    by_comm: dict[str, frozenset[int]] = field(default_factory=dict)

    def mask(self, pid: int, comm: str) -> Optional[frozenset[int]]:
        if pid in self.by_pid:
            return self.by_pid[pid]
        if comm in self.by_comm:
            return self.by_comm[comm]
        cpu = kthread_cpu(comm)
        return frozenset((cpu,)) if cpu is not None else None


# A guest shell snippet printing the format parse_affinity() reads, one
# line per thread (run it while the workload's threads exist); a thread
# that exits while it runs is left out.
AFFINITY_SNIPPET = r"""for d in /proc/[0-9]*/task/[0-9]*; do
  l=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' $d/status 2>/dev/null) || continue
  c=$(cat $d/comm 2>/dev/null) || continue
  [ -n "$l" ] && [ -n "$c" ] && echo "${d##*/} $c $l"
done"""


def parse_affinity(text: str) -> Affinity:
    """Read lines ``TID COMM CPULIST`` (e.g. ``339 hackbench 0-7``; COMM may
    hold spaces: the first word is the thread id, the last the
    Cpus_allowed_list) and ``* COMM CPULIST`` (every thread of that name).
    Blank lines and lines starting with # are skipped."""
    aff = Affinity()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if len(words) < 3:
            raise ParseError(f"affinity line {n}: want 'TID COMM CPULIST', got {raw!r}")
        try:
            cpus = frozenset(parse_cpulist(words[-1]))
        except ValueError:
            raise ParseError(f"affinity line {n}: bad CPU list {words[-1]!r}") from None
        comm = " ".join(words[1:-1])
        if words[0] == "*":
            aff.by_comm[comm] = cpus
        elif words[0].isdigit():
            aff.by_pid[int(words[0])] = cpus
        else:
            raise ParseError(f"affinity line {n}: want a thread id or '*', got {words[0]!r}")
    return aff


# A trace_marker line giving a thread a new allowed set mid-trace:
# "idlesteal affinity TID CPULIST".
AFFINITY_MARK = "idlesteal affinity "


def parse_affinity_mark(text: str) -> tuple[int, frozenset[int]]:
    """(tid, cpus) of an AFFINITY_MARK line's text; ParseError if malformed."""
    words = text.split()[2:]
    if len(words) != 2 or not words[0].isdigit():
        raise ParseError(f"affinity marker: want '{AFFINITY_MARK}TID CPULIST', got {text!r}")
    try:
        cpus = frozenset(parse_cpulist(words[1]))
    except ValueError:
        raise ParseError(f"affinity marker: bad CPU list in {text!r}") from None
    if not cpus:
        raise ParseError(f"affinity marker: empty CPU list in {text!r}")
    return int(words[0]), cpus
