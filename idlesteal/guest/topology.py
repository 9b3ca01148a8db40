"""Named guest topologies (SOCKETSxCORESxTHREADS, optionally with several
dies per socket), the QEMU options for them, and the check that the guest
sees what the preset promises.

CPU numbering follows QEMU's: cpu = ((socket * dies + die) * cores + core) *
threads + thread, which is also the order Linux enumerates them from the
ACPI MADT.  Each die is one LLC (QEMU's "max" CPU reports the L3 as shared
by the die; one die per socket unless the preset says otherwise); sockets
are spread evenly over the NUMA nodes.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from . import read as guest_file
from ..util import HarnessError


# TCG's default qemu64 model has no L3 descriptor in CPUID leaf 4 on this
# QEMU; "max" (all TCG features, Intel-style leaf 4 with an L3 shared by the
# die) does, and Linux's LLC / MC domain follow it.
CPU_MODEL = os.environ.get("IDLESTEAL_QEMU_CPU", "max")
# Kernel parameters every guest gets (schedstats for /proc/schedstat).
BASE_CMDLINE = ("panic=-1", "printk.time=1", "schedstats=enable")


@dataclass(frozen=True)
class Preset:
    """An x86-64 guest machine (vm.Machine): QEMU -smp topology, NUMA
    nodes, memory, boot timeout and extra kernel parameters."""
    name: str
    sockets: int
    cores: int
    threads: int
    nodes: int = 1
    mem_mb: int = 1024
    boot_timeout: int = 120      # seconds until the guest must be running /run.sh
    cmdline: tuple[str, ...] = ()
    about: str = ""
    dies: int = 1                # dies per socket, each its own L3 (see cpu_model)
    cpu_model: str = ""          # QEMU -cpu; default CPU_MODEL
    mem_nodes: int = 0           # NUMA nodes of memory only (CXL-like), after the others
    qemu: ClassVar[str] = "qemu-system-x86_64"

    @property
    def ncpus(self) -> int:
        return self.sockets * self.dies * self.cores * self.threads

    @property
    def check_script(self) -> str:
        """Guest shell lines whose output verify() reads."""
        return GUEST_SNIPPET

    def verify(self, text: str) -> Observed:
        return verify(self, text)

    def qemu_command(self, kernel: Path, initrd: Path, console: Path, out: Path,
                     cmdline: list[str]) -> list[str]:
        """Console on the first serial port, the script's output on the second."""
        append = ["console=ttyS0", *BASE_CMDLINE, *self.cmdline, *cmdline]
        return [self.qemu, "-accel", "tcg,thread=multi", "-machine", "pc",
                "-cpu", self.cpu_model or CPU_MODEL,
                *self.qemu_args(),
                "-kernel", str(kernel), "-initrd", str(initrd), "-append", " ".join(append),
                "-nodefaults", "-display", "none", "-no-reboot",
                "-serial", f"file:{console}", "-serial", f"file:{out}"]

    def _groups(self, size: int) -> list[list[int]]:
        return [list(range(i, i + size)) for i in range(0, self.ncpus, size)]

    def smt_groups(self) -> list[list[int]]:
        return self._groups(self.threads)

    def llc_groups(self) -> list[list[int]]:
        return self._groups(self.cores * self.threads)

    def node_groups(self) -> list[list[int]]:
        return self._groups(self.ncpus // self.nodes)

    def qemu_args(self) -> list[str]:
        args = ["-smp", f"{self.ncpus},sockets={self.sockets},dies={self.dies},cores={self.cores},"
                        f"threads={self.threads}",
                "-m", f"{self.mem_mb}M"]
        if self.nodes + self.mem_nodes > 1:
            per_node = self.mem_mb // (self.nodes + self.mem_nodes)
            per_sock = self.sockets // self.nodes
            # The nodes with CPUs first, then the memory-only ones (no -numa cpu).
            for n in range(self.nodes + self.mem_nodes):
                args += ["-object", f"memory-backend-ram,id=mem{n},size={per_node}M",
                         "-numa", f"node,nodeid={n},memdev=mem{n}"]
            for s in range(self.sockets):
                args += ["-numa", f"cpu,node-id={s // per_sock},socket-id={s}"]
        return args

    def describe(self) -> str:
        dies = f"{self.dies} dies (LLCs) x " if self.dies > 1 else ""
        return (f"{self.name}: {self.sockets} socket(s) x {dies}{self.cores} core(s) x "
                f"{self.threads} thread(s) = {self.ncpus} CPUs, {self.nodes} NUMA node(s)"
                + (f" + {self.mem_nodes} of memory only" if self.mem_nodes else "") + ", "
                f"{self.mem_mb} MiB" + (f" — {self.about}" if self.about else ""))


# Big guests.  lpj=: TCG's CPU model has no CONSTANT_TSC and the guest marks
# its TSCs unsynchronized, so calibrate_delay_is_known() gives up and every
# secondary CPU runs calibrate_delay_direct(), which fails under TCG on a
# loaded host after seconds of trying ("Probably due to long platform
# interrupts. Consider using lpj=").  A preset value skips it on every CPU.
# The value does not matter for timing: x86 delays with the TSC (delay_tsc,
# tsc_enable_sched_clock()); it is the boot CPU's own figure on a 2.6 GHz
# host (lpj = tsc_khz at HZ=1000).  Measured on 8llc and seed160: docs/scale.md.
_QUIET_BIG = ("nowatchdog", "rcupdate.rcu_cpu_stall_suppress=1", "lpj=2598097")

PRESETS: dict[str, Preset] = {p.name: p for p in [
    Preset("1x1x2", 1, 1, 2, about="one SMT core"),
    Preset("2x2x2", 2, 2, 2, about="2 LLCs x 2 cores x 2 threads, one node"),
    Preset("2x4x2", 2, 4, 2, mem_mb=2048, about="2 LLCs x 4 cores x 2 threads, one node"),
    Preset("2node", 2, 2, 2, nodes=2, about="2 NUMA nodes x 1 LLC x 2 cores x 2 threads"),
    Preset("4node", 4, 2, 2, nodes=4, mem_mb=2048, about="4 NUMA nodes, one LLC each"),
    Preset("2node+mem", 2, 2, 2, nodes=2, mem_nodes=1, mem_mb=1536,
           about="2node plus a NUMA node of memory only (CXL-like): 3 possible nodes"),
    # An L3 per die needs Intel's cache leaf: QEMU's leaf 4 shares the L3 by
    # the die, while with the host's AMD vendor string TCG's CPU is family 0xf
    # and Linux puts the LLC at the socket (cacheinfo_amd_init_llc_id()).
    Preset("8llc", 2, 4, 2, dies=4, nodes=2, mem_mb=2048, boot_timeout=600,
           cmdline=_QUIET_BIG, cpu_model="max,vendor=GenuineIntel",
           about="many small LLCs, AMD-style: 2 sockets x 4 dies (one L3 each) x 4 cores x "
           "2 threads, 2 nodes"),
    # 8llc scaled to what a 2-core host runs in minutes: more LLCs than
    # nodes, small ones (the many-LLC cell of the kick's measure).
    Preset("4llc", 2, 2, 2, dies=2, nodes=2, mem_mb=2048,
           cpu_model="max,vendor=GenuineIntel",
           about="8llc scaled down: 2 sockets x 2 dies (one L3 each) x 2 cores x 2 threads, "
           "2 nodes"),
    Preset("seed160", 2, 40, 2, nodes=2, mem_mb=4096, boot_timeout=600, cmdline=_QUIET_BIG,
           about="the seeds' X6-2: 2 sockets x 40 cores x 2 threads, 2 nodes"),
]}


def get(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise HarnessError(f"unknown topology preset {name!r}; known presets:\n"
                           + "\n".join(f"  {p.describe()}" for p in PRESETS.values())) from None


# The guest prints one line per CPU and per node; `verify` reads it back.
GUEST_SNIPPET = guest_file("topology.sh")


def parse_cpulist(text: str) -> list[int]:
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]; '' or '-' -> []."""
    text = text.strip()
    out: list[int] = []
    if text in ("", "-"):
        return out
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


@dataclass
class Observed:
    smt: dict[int, list[int]] = field(default_factory=dict)
    llc: dict[int, list[int]] = field(default_factory=dict)
    pkg: dict[int, str] = field(default_factory=dict)
    nodes: dict[int, list[int]] = field(default_factory=dict)
    online: list[int] = field(default_factory=list)


def parse(text: str) -> Observed:
    obs = Observed()
    for line in text.splitlines():
        m = re.match(r"^cpu (\d+) smt=(\S+) llc=(\S+) pkg=(\S+)", line)
        if m:
            cpu = int(m.group(1))
            obs.smt[cpu] = parse_cpulist(m.group(2))
            obs.llc[cpu] = parse_cpulist(m.group(3))
            obs.pkg[cpu] = m.group(4)
            continue
        m = re.match(r"^node (\d+) cpus=(\S*)", line)
        if m:
            obs.nodes[int(m.group(1))] = parse_cpulist(m.group(2))
            continue
        m = re.match(r"^online (\S+)", line)
        if m:
            obs.online = parse_cpulist(m.group(1))
    return obs


def _by_cpu(groups: list[list[int]]) -> dict[int, list[int]]:
    return {cpu: g for g in groups for cpu in g}


def _fmt(cpus: list[int]) -> str:
    return ",".join(map(str, cpus)) or "(none)"


def check_cpus(ncpus: int, online: list[int],
               groups: list[tuple[str, dict[int, list[int]], list[list[int]]]]) -> list[str]:
    """The checks every machine shares: all `ncpus` CPUs online, and each
    (kind, observed cpu -> siblings, expected sibling groups) matching."""
    problems: list[str] = []
    want_cpus = list(range(ncpus))
    if online != want_cpus:
        problems.append(f"online CPUs {_fmt(online)}, expected 0-{ncpus - 1}")
    for kind, seen, expected in groups:
        want = _by_cpu(expected)
        bad = [c for c in want_cpus if seen.get(c) != want[c]]
        if bad:
            c = bad[0]
            problems.append(f"{kind}: {len(bad)} CPU(s) differ, e.g. cpu{c} has "
                            f"{_fmt(seen.get(c, []))}, expected {_fmt(want[c])}")
    return problems


def check(preset: Preset, obs: Observed) -> list[str]:
    """Differences between what the preset promises and what the guest saw."""
    problems = check_cpus(preset.ncpus, obs.online,
                          [("SMT siblings", obs.smt, preset.smt_groups()),
                           ("LLC (L3) siblings", obs.llc, preset.llc_groups())])
    want_nodes = preset.node_groups()
    got_nodes = [obs.nodes[n] for n in sorted(obs.nodes) if obs.nodes[n]]
    if got_nodes != want_nodes:
        problems.append(f"NUMA nodes: guest has {len(got_nodes)} "
                        f"({'; '.join(map(_fmt, got_nodes))}), expected {len(want_nodes)} "
                        f"({'; '.join(map(_fmt, want_nodes))})")
    mem_only = [n for n in sorted(obs.nodes) if not obs.nodes[n]]
    if len(mem_only) != preset.mem_nodes:
        problems.append(f"NUMA nodes of memory only: guest has {len(mem_only)}, "
                        f"expected {preset.mem_nodes}")
    return problems


class TopologyError(HarnessError):
    pass


def verify(preset: Preset, text: str) -> Observed:
    obs = parse(text)
    problems = check(preset, obs)
    if problems:
        raise TopologyError(f"guest topology does not match preset {preset.name}:\n"
                            + "\n".join(f"  {p}" for p in problems))
    return obs
