"""Host mode (issue 29): the bench on the machine you are on, no VM.

The same script bench.script() writes for a guest runs here under /bin/sh
with the same helpers (idlesteal/guest/helpers.sh), and its output, the
"@@SECTION name@@" protocol between the BEGIN and END markers, is read by
image.parse_output() and measured by the same bench/tracerun/report code.
What differs is only around it:

- `offer()`: what the running kernel offers (the series' STEAL feature,
  schedstat, sched_ext, tracefs and the measure's events, BPF, root, the
  hypervisor flag and steal time, the topology from sysfs), printed as one
  block before any load and kept in the JSON;
- `session()`: a lock so two host runs never overlap, and the machine's
  state (sched features, sched/verbose, the schedstats sysctl, tracing
  on/off, buffer size, clock, overwrite, the measure's events, the debugfs
  and tracefs mounts it made) saved first, also to a file next to the lock,
  and put back on success, failure, Ctrl-C and SIGTERM (a run killed with
  SIGKILL is put back by the next one, from that file); the script traces
  in a tracefs instance of its own (INSTANCE), removed after, so the
  top-level buffer and its settings are left alone;
- `sample_load()`: the load already running at the start; above
  --max-load the run stops unless --force-load;
- `run_script()`: the script under /bin/sh in its own process group, its
  output in build/runs/<id>/output.log, like the guest's.

Every path is under `root` ("/" for real; tests pass a fake tree).
"""
from __future__ import annotations

import dataclasses
import errno
import fcntl
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Optional

from ..guest import image, topology
from .. import paths
from ..measure import procstat
from ..kernel import provenance
from ..measure import waste as wst
from ..guest import read as guest_file
from ..util import HarnessError, log

if TYPE_CHECKING:   # bench imports nothing of host; annotations only
    from . import bench as bench_mod

ROOT = Path("/")
LOCK = "run/lock/idlesteal-host.lock"
# The saved state while a run holds the lock (removed once it is restored).
STATE = "run/lock/idlesteal-host.state.json"
TRACEFS = "sys/kernel/tracing"
# The tracefs instance host mode traces in (helpers.sh's IDLESTEAL_TRACEFS):
# its own ring buffers, clock and events, so the top-level buffer, and any
# tracing someone else does there, is left alone; removed after the run.
INSTANCE = "sys/kernel/tracing/instances/idlesteal"
DEBUGFS = "sys/kernel/debug"
FEATURES = "sys/kernel/debug/sched/features"
VERBOSE = "sys/kernel/debug/sched/verbose"
SCHEDSTATS = "proc/sys/kernel/sched_schedstats"
SCHED_EXT = "sys/kernel/sched_ext"
# The events of the wasted-time measure (helpers.sh trace_setup).
EVENTS = ("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new",
          "sched_migrate_task", "sched_process_exit")
DEFAULT_MAX_LOAD = 0.25
# The series' feature (patches/series, patch 8).
STEAL = "STEAL"


class HostError(HarnessError):
    pass


class Refused(HostError):
    """What this machine or its load cannot do, said before any load: not
    root, the A/B asked for, no measure, the load, a program not installed.
    `suite --host` stops at the first (the next entry would be refused too)."""


class Stopped(KeyboardInterrupt):
    """SIGTERM (or SIGHUP) during a host run: unwinds like Ctrl-C, so every
    `finally` on the way restores what it changed."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


# ---------------------------------------------------------------- small file helpers

def _p(root: Path, rel: str) -> Path:
    return root / rel


def _read(path: Path) -> Optional[str]:
    """The file's text, or None when it is missing or not readable."""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def _why(path: Path) -> str:
    """Why a file cannot be read: 'missing' or the error's text."""
    try:
        path.read_bytes()
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        return e.strerror or str(e)
    return "readable"


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value + "\n")


# ---------------------------------------------------------------- topology from sysfs

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


# ---------------------------------------------------------------- what the kernel offers

@dataclass
class Load:
    """The load on the machine over a short sample."""
    loadavg: list[float]           # 1, 5, 15 min
    runnable: int                  # procs_running, less this process
    tasks: int                     # threads in the system (loadavg's total)
    busy_cpus: float               # CPUs' worth of busy time over the sample
    steal_pct: float               # % of CPU time stolen by the hypervisor
    ncpus: int
    seconds: float

    @property
    def busy_fraction(self) -> float:
        return self.busy_cpus / max(self.ncpus, 1)

    def too_high(self, max_load: float) -> Optional[str]:
        """Why the load is above `max_load` (a fraction of the CPUs), or None."""
        why = []
        if self.busy_fraction > max_load:
            why.append(f"{self.busy_cpus:.2f} of {self.ncpus} CPUs busy over "
                       f"{self.seconds:.0f} s")
        if self.runnable > max_load * self.ncpus:
            why.append(f"{self.runnable} other runnable task(s)")
        if self.loadavg[0] > max_load * self.ncpus:
            why.append(f"load average {self.loadavg[0]:.2f}")
        return "; ".join(why) or None

    def describe(self) -> str:
        la = " ".join(f"{x:.2f}" for x in self.loadavg)
        return (f"load average {la}, {self.runnable} other runnable, {self.tasks} threads, "
                f"{self.busy_cpus:.2f} of {self.ncpus} CPUs busy over {self.seconds:.0f} s"
                + (f", steal {self.steal_pct:.1f}% of CPU time" if self.steal_pct else ""))


def parse_loadavg(text: str) -> tuple[list[float], int, int]:
    """'0.50 0.40 0.30 3/170 1234' -> ([0.5, 0.4, 0.3], running, total)."""
    tok = text.split()
    if len(tok) < 4 or "/" not in tok[3]:
        raise HostError(f"/proc/loadavg: unexpected {text.strip()!r}")
    run, total = tok[3].split("/", 1)
    return [float(x) for x in tok[:3]], int(run), int(total)


def procs_running(stat_text: str) -> Optional[int]:
    m = re.search(r"^procs_running\s+(\d+)", stat_text, re.M)
    return int(m.group(1)) if m else None


def load_between(s0: str, s1: str, loadavg: str, seconds: float) -> Load:
    """The load between two /proc/stat snapshots."""
    a, b = procstat.parse(s0), procstat.parse(s1)
    n = len(b.cpus) or 1
    total = b.all.total - a.all.total
    busy = procstat.busy(a, b) / 100 * n
    stolen = b.all.values.get("steal", 0) - a.all.values.get("steal", 0)
    la, running, tasks = parse_loadavg(loadavg)
    pr = procs_running(s1)
    runnable = max((pr if pr is not None else running) - 1, 0)   # less this process
    return Load(la, runnable, tasks, round(busy, 3),
                round(100 * stolen / total, 2) if total > 0 else 0.0, n, seconds)


def sample_load(root: Path = ROOT, seconds: float = 1.0) -> Load:
    stat = _p(root, "proc/stat")
    s0 = stat.read_text()
    time.sleep(seconds)
    s1 = stat.read_text()
    return load_between(s0, s1, _p(root, "proc/loadavg").read_text(), seconds)


def parse_features(text: str) -> list[str]:
    """sched/features' words ('PLACE_LAG NO_HRTICK STEAL ...')."""
    return text.split()


def feature_names(words: list[str]) -> set[str]:
    """The features a sched/features text defines (on or off)."""
    return {w[3:] if w.startswith("NO_") else w for w in words}


def parse_trace_clock(text: str) -> tuple[str, list[str]]:
    """'[local] global mono' -> ('local', ['local', 'global', 'mono'])."""
    words = text.split()
    sel = next((w.strip("[]") for w in words if w.startswith("[")), "")
    return sel, [w.strip("[]") for w in words]


def parse_schedstat_version(text: Optional[str]) -> Optional[int]:
    m = re.match(r"version (\d+)", text or "")
    return int(m.group(1)) if m else None


@dataclass
class Offer:
    """What the running kernel offers host mode."""
    kernel: str                          # uname -r
    version: str                         # /proc/version
    arch: str
    root: bool
    features: Optional[list[str]]        # sched/features words; None: not readable
    features_note: str                   # why None ("" when readable)
    schedstat_version: Optional[int]     # None: no /proc/schedstat (CONFIG_SCHEDSTATS off)
    schedstats_sysctl: Optional[str]     # kernel.sched_schedstats
    sched_ext: Optional[str]             # /sys/kernel/sched_ext/state; None: no sched_ext
    scx_ops: str
    tracefs: bool                        # mounted or mountable
    tracefs_note: str
    events_missing: list[str]
    trace_clocks: list[str]
    bpf: bool
    btf: bool
    hypervisor: bool
    topology: SysTopology
    load: Optional[Load] = None
    node: str = ""                       # the machine's name (uname -n)

    @property
    def steal(self) -> bool:
        return self.features is not None and STEAL in feature_names(self.features)

    def has_features(self, words: tuple[str, ...]) -> bool:
        return self.features is not None and \
            all((w[3:] if w.startswith("NO_") else w) in feature_names(self.features)
                for w in words)

    def steal_reason(self) -> str:
        """Why the series' STEAL A/B cannot run here ("" when it can)."""
        if self.features is None:
            return (f"/sys/kernel/debug/sched/features is not readable ({self.features_note}), "
                    "so no sched feature can be switched")
        if not self.steal:
            return "sched/features has no STEAL: the running kernel is not built with the series"
        return ""

    def measure_reason(self) -> str:
        """Why the wasted-time measure cannot run here ("" when it can)."""
        if not self.tracefs:
            return f"no tracefs ({self.tracefs_note})"
        if self.events_missing:
            return f"tracefs lacks the events {' '.join(self.events_missing)}"
        if "mono" not in self.trace_clocks:
            return "tracefs has no mono trace clock"
        return ""

    def scx_reason(self) -> str:
        """Why sched_ext schedulers cannot run here ("" when they can)."""
        if self.sched_ext is None:
            return "the running kernel has no sched_ext (/sys/kernel/sched_ext is missing)"
        if not self.btf:
            return "no /sys/kernel/btf/vmlinux (sched_ext schedulers need the kernel's BTF)"
        if self.sched_ext != "disabled":
            return f"a sched_ext scheduler is already loaded ({self.scx_ops or self.sched_ext})"
        return ""

    def block(self) -> str:
        """One block, before any load: what the kernel offers and what host mode
        does with it."""
        yes = lambda b: "yes" if b else "no"          # noqa: E731
        feats = ("not readable (" + self.features_note + ")" if self.features is None
                 else f"{len(self.features)} features, STEAL {yes(self.steal)}"
                 + ("" if self.steal else " (not the series)"))
        ss = (f"version {self.schedstat_version}" if self.schedstat_version is not None
              else "none (/proc/schedstat missing: CONFIG_SCHEDSTATS off; the sched/idle/wake/"
              "steal columns read nan)")
        if self.schedstat_version is not None and self.schedstats_sysctl is not None:
            ss += f", kernel.sched_schedstats={self.schedstats_sysctl} (on for the run)"
        scx = "no (/sys/kernel/sched_ext missing)" if self.sched_ext is None else \
            f"yes, state {self.sched_ext}" + (f", ops {self.scx_ops}" if self.scx_ops else "")
        trace = (f"yes ({self.tracefs_note})" if self.tracefs else f"no ({self.tracefs_note})")
        if self.tracefs:
            trace += (", events " + ("all " + str(len(EVENTS)) if not self.events_missing
                                     else "missing " + " ".join(self.events_missing))
                      + f", mono clock {yes('mono' in self.trace_clocks)}")
        vm = "yes: a VM (cpuinfo has the hypervisor flag)" if self.hypervisor else "no"
        if self.load is not None and self.load.steal_pct:
            vm += f", steal time {self.load.steal_pct:.1f}% of CPU time"
        lines = [f"host: {self.node or platform.node()}, kernel {self.kernel} ({self.arch})",
                 f"  topology: {self.topology.describe()}",
                 f"  hypervisor: {vm}",
                 f"  sched/features: {feats}",
                 f"  schedstat: {ss}",
                 f"  sched_ext: {scx}",
                 f"  tracefs: {trace}",
                 f"  BPF: {yes(self.bpf)}, BTF: {yes(self.btf)}; root: {yes(self.root)}"]
        if self.load is not None:
            lines.append(f"  load at start: {self.load.describe()}")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict:
        d = asdict(self)
        d["steal"] = self.steal
        return d

    @classmethod
    def from_json(cls, d: dict) -> Offer:
        """An Offer as to_json() wrote it (a host run's run.json)."""
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw["topology"] = SysTopology(**d["topology"])
        kw["load"] = Load(**d["load"]) if d.get("load") else None
        return cls(**kw)


def cpuinfo_hypervisor(text: str) -> bool:
    return any(l.startswith("flags") and " hypervisor" in f" {l.split(':', 1)[-1]} "
               for l in text.splitlines())


def mounted(root: Path, target: str) -> Optional[str]:
    """The filesystem type mounted at /target (root/proc/mounts), or None."""
    text = _read(_p(root, "proc/mounts")) or ""
    fs = None
    for line in text.splitlines():
        tok = line.split()
        if len(tok) >= 3 and tok[1] == "/" + target.strip("/"):
            fs = tok[2]        # the last mount at the path wins
    return fs


def offer(root: Path = ROOT, euid: Optional[int] = None, made: tuple[str, ...] = ()) -> Offer:
    """Read what the running kernel offers (nothing is changed: with
    debugfs or tracefs unmounted, what needs them says so; `made`: the
    mounts session() made for the run)."""
    euid = os.geteuid() if euid is None else euid
    feats_path = _p(root, FEATURES)
    ftext = _read(feats_path)
    if ftext is not None:
        features: Optional[list[str]] = parse_features(ftext)
        fnote = ""
    else:
        features = None
        fnote = ("debugfs is not mounted at /sys/kernel/debug" if not mounted(root, DEBUGFS)
                 else _why(feats_path))
        if fnote == "Operation not permitted":
            fnote += ": kernel lockdown or a restricted debugfs"
    ss = _read(_p(root, "proc/schedstat"))
    scx_state = _read(_p(root, SCHED_EXT + "/state"))
    scx = scx_state.strip() if scx_state is not None else \
        ("unknown" if _p(root, SCHED_EXT).exists() else None)
    tfs = _p(root, TRACEFS)
    filesystems = _read(_p(root, "proc/filesystems")) or ""
    if (tfs / "trace").exists():
        tracefs = True
        tnote = "mounted for the run, unmounted after" if TRACEFS in made else "mounted"
    elif re.search(r"\btracefs\b", filesystems):
        tracefs, tnote = True, "not mounted: mounted for the run and unmounted after"
    else:
        tracefs, tnote = False, "the kernel has no tracefs (CONFIG_TRACING off)"
    missing: list[str] = []
    clocks: list[str] = []
    if (tfs / "trace").exists():
        missing = [e for e in EVENTS if not (tfs / f"events/sched/{e}/enable").exists()]
        clocks = parse_trace_clock(_read(tfs / "trace_clock") or "")[1]
    elif tracefs:
        missing, clocks = [], ["mono"]      # checked again once mounted
    return Offer(
        kernel=platform.release(), version=(_read(_p(root, "proc/version")) or "").strip(),
        arch=platform.machine(), root=euid == 0, features=features, features_note=fnote,
        schedstat_version=parse_schedstat_version(ss),
        schedstats_sysctl=(_read(_p(root, SCHEDSTATS)) or "").strip() or None,
        sched_ext=scx, scx_ops=(_read(_p(root, SCHED_EXT + "/root/ops")) or "").strip(),
        tracefs=tracefs, tracefs_note=tnote, events_missing=missing, trace_clocks=clocks,
        bpf=_p(root, "proc/sys/kernel/bpf_stats_enabled").exists(),
        btf=_p(root, "sys/kernel/btf/vmlinux").exists(),
        hypervisor=cpuinfo_hypervisor(_read(_p(root, "proc/cpuinfo")) or ""),
        topology=read_topology(root), node=platform.node())


# ---------------------------------------------------------------- the state host mode changes

def _buffer_kb(text: str) -> str:
    """buffer_size_kb as the size to write back: '7 (expanded: 1408)' ->
    '1408' (a buffer never expanded is allocated at its default size once
    anything traces; it cannot be shrunk back to unexpanded), 'X' when the
    per-CPU sizes differ."""
    m = re.search(r"expanded:\s*(\d+)", text)
    return m.group(1) if m else text.strip()


@dataclass
class State:
    """What host mode may change, as it was.  None: the file was missing or
    not readable (nothing to put back)."""
    mounts_made: list[str] = field(default_factory=list)   # targets, in mount order
    instance_made: Optional[str] = None                     # INSTANCE, once made
    features: Optional[list[str]] = None
    verbose: Optional[str] = None
    schedstats: Optional[str] = None
    tracing_on: Optional[str] = None
    buffer_size_kb: Optional[str] = None
    per_cpu_kb: dict[str, str] = field(default_factory=dict)   # when buffer_size_kb is X
    trace_clock: Optional[str] = None
    overwrite: Optional[str] = None
    events: dict[str, str] = field(default_factory=dict)
    sched_ext: Optional[str] = None                        # /sys/kernel/sched_ext/state
    pid: int = 0
    # the script's process group and run directory, once started: what a
    # run killed with SIGKILL leaves running, for the next run to end
    script_pgid: int = 0
    script_dir: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> State:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def snapshot(root: Path = ROOT) -> State:
    """The current values of everything in State (mounts_made left empty)."""
    s = State(pid=os.getpid())
    f = _read(_p(root, FEATURES))
    s.features = parse_features(f) if f is not None else None
    v = _read(_p(root, VERBOSE))
    s.verbose = v.strip() if v is not None else None
    st = _read(_p(root, SCHEDSTATS))
    s.schedstats = st.strip() if st is not None else None
    sx = _read(_p(root, SCHED_EXT + "/state"))
    s.sched_ext = sx.strip() if sx is not None else None
    t = _p(root, TRACEFS)
    if (t / "trace").exists():
        on = _read(t / "tracing_on")
        s.tracing_on = on.strip() if on is not None else None
        kb = _read(t / "buffer_size_kb")
        s.buffer_size_kb = _buffer_kb(kb) if kb is not None else None
        if s.buffer_size_kb == "X":
            for d in sorted(t.glob("per_cpu/cpu[0-9]*")):
                pk = _read(d / "buffer_size_kb")
                if pk is not None:
                    s.per_cpu_kb[d.name] = _buffer_kb(pk)
        clock = _read(t / "trace_clock")
        s.trace_clock = parse_trace_clock(clock)[0] if clock is not None else None
        ow = _read(t / "options/overwrite")
        s.overwrite = ow.strip() if ow is not None else None
        for e in EVENTS:
            en = _read(t / f"events/sched/{e}/enable")
            if en is not None:
                s.events[e] = en.strip()
    return s


def _same_kb(a: Optional[str], b: Optional[str]) -> bool:
    """Two buffer sizes the kernel treats as one: it rounds a size up to
    whole data pages (4080 bytes of a 4 KiB page), so 1408 reads back 1410."""
    if a is None or b is None or not a.isdigit() or not b.isdigit():
        return a == b
    return -(-int(a) * 1024 // 4080) == -(-int(b) * 1024 // 4080)


def differences(want: State, have: State) -> list[str]:
    """What differs between two states (mounts and pid aside)."""
    out = []
    for f in dataclasses.fields(State):
        if f.name in ("mounts_made", "instance_made", "pid", "script_pgid", "script_dir"):
            continue
        a, b = getattr(want, f.name), getattr(have, f.name)
        if f.name == "features" and a is not None and b is not None:
            a, b = sorted(a), sorted(b)
        if f.name == "buffer_size_kb" and _same_kb(a, b):
            continue
        if f.name == "per_cpu_kb" and set(a) == set(b) and \
                all(_same_kb(a[k], b[k]) for k in a):
            continue
        if a != b:
            out.append(f"{f.name}: {b!r}, was {a!r}")
    return out


Mounter = Callable[[str, Path], None]     # (fstype, target)
Unmounter = Callable[[Path], None]


def real_mount(fstype: str, target: Path) -> None:
    r = subprocess.run(["mount", "-t", fstype, "none", str(target)], capture_output=True,
                       text=True)
    if r.returncode:
        raise HostError(f"cannot mount {fstype} at {target}: {r.stderr.strip()}")


def real_umount(target: Path) -> None:
    r = subprocess.run(["umount", str(target)], capture_output=True, text=True)
    if r.returncode:
        raise HostError(f"cannot unmount {target}: {r.stderr.strip()}")


def _try_write(path: Path, value: str, problems: list[str]) -> None:
    try:
        _write(path, value)
    except OSError as e:
        problems.append(f"{path}: cannot write {value!r}: {e.strerror or e}")


_TRACE_FIELDS = ("tracing_on", "buffer_size_kb", "per_cpu_kb", "trace_clock", "overwrite",
                 "events")


def restore(state: State, root: Path = ROOT, umount: Unmounter = real_umount) -> list[str]:
    """Remove host mode's tracefs instance, write back what differs from
    `state` (nothing else: a value as found is not written again), unmount
    what host mode mounted, and return what could not be put back (empty
    when all is as it was)."""
    problems: list[str] = []
    if state.instance_made:
        inst = _p(root, state.instance_made)
        if inst.exists():
            try:
                os.rmdir(inst)
            except OSError as e:
                problems.append(f"{inst}: cannot remove the tracefs instance: "
                                f"{e.strerror or e}")
    now = snapshot(root)
    differ = {d.split(":")[0] for d in differences(state, now)}
    t = _p(root, TRACEFS)
    if (t / "trace").exists() and state.tracing_on is not None and differ & set(_TRACE_FIELDS):
        # something traced in the top-level buffer: put it back as it was
        _try_write(t / "tracing_on", "0", problems)
        for ev, v in state.events.items():
            if now.events.get(ev) != v:
                _try_write(t / f"events/sched/{ev}/enable", v, problems)
        if state.overwrite is not None and "overwrite" in differ:
            _try_write(t / "options/overwrite", state.overwrite, problems)
        if state.trace_clock and "trace_clock" in differ:
            _try_write(t / "trace_clock", state.trace_clock, problems)
        if state.buffer_size_kb == "X":
            for cpu, kb in state.per_cpu_kb.items():
                _try_write(t / "per_cpu" / cpu / "buffer_size_kb", kb, problems)
        elif state.buffer_size_kb and "buffer_size_kb" in differ:
            _try_write(t / "buffer_size_kb", state.buffer_size_kb, problems)
        _try_write(t / "trace", "", problems)        # the run's events, not left behind
        _try_write(t / "tracing_on", state.tracing_on, problems)
    if state.sched_ext == "disabled" and "sched_ext" in differ:
        scx_off(root, problems)
    if state.features is not None and "features" in differ:
        have = set(now.features or [])
        for w in state.features:
            if w not in have:
                _try_write(_p(root, FEATURES), w, problems)
    if state.verbose is not None and "verbose" in differ:
        _try_write(_p(root, VERBOSE), state.verbose, problems)
    if state.schedstats is not None and "schedstats" in differ:
        _try_write(_p(root, SCHEDSTATS), state.schedstats, problems)
    left = differences(state, snapshot(root))
    # Unmount last: the values above live in the kernel, not in the mount.
    for target in reversed(state.mounts_made):
        try:
            umount(_p(root, target))
        except HarnessError as e:
            problems.append(str(e))
    return problems + [f"not restored: {d}" for d in left
                       if not any(d.split(":")[0] in p for p in problems)]


SYSRQ = "proc/sysrq-trigger"


def _scx_state(root: Path) -> str:
    return (_read(_p(root, SCHED_EXT + "/state")) or "").strip()


def scx_off(root: Path, problems: list[str], grace: float = 5.0, wait: float = 10.0) -> None:
    """A sched_ext scheduler that host mode started is still in charge (its
    loader outlived the run, or the harness was killed before it could stop
    it): give it `grace` s to finish disabling, then SysRq-S, the kernel's
    own way to put every task back in the fair class, and wait for
    "disabled".  Says in `problems` what did not work."""
    for step in ("wait", "sysrq"):
        if step == "sysrq":
            log(f"sched_ext is still {_scx_state(root)!r} after the run; SysRq-S puts the "
                "tasks back in the fair class")
            try:
                _write(_p(root, SYSRQ), "S")
            except OSError as e:
                problems.append(f"{_p(root, SYSRQ)}: cannot write 'S' to disable sched_ext: "
                                f"{e.strerror or e}")
                return
        deadline = time.monotonic() + (grace if step == "wait" else wait)
        while time.monotonic() < deadline:
            if _scx_state(root) in ("disabled", ""):
                return
            time.sleep(0.1)
    problems.append(f"sched_ext still {_scx_state(root)!r} after SysRq-S")


# ---------------------------------------------------------------- the lock and the session

@dataclass
class Session:
    root: Path
    state: State                 # as found (after the mounts host mode made)
    recovered: str = ""          # what an earlier, killed run left and this one put back

    def started(self, pgid: int, run_dir: Path) -> None:
        """run_script()'s on_start: the script's process group, saved with
        the state, so that the next run can end it should this one be
        killed with SIGKILL (its script, workload and loader live on)."""
        self.state.script_pgid, self.state.script_dir = pgid, str(run_dir)
        _p(self.root, STATE).write_text(json.dumps(self.state.to_json(), indent=1) + "\n")


def group_members(pgid: int, proc: Path = Path("/proc")) -> list[int]:
    """The processes of process group `pgid` (field 5 of /proc/PID/stat)."""
    out = []
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 2 and fields[2] == str(pgid):
            out.append(int(d.name))
    return out


def end_leftover(pgid: int, run_dir: str, proc: Path = Path("/proc")) -> str:
    """End what is left of a killed run's script: its process group, if a
    member still works in `run_dir` (the group id may have been reused by
    an unrelated group since, which is left alone).  Returns what it did."""
    if pgid <= 0 or not run_dir:
        return ""
    members = group_members(pgid, proc)
    ours = []
    for pid in members:
        try:
            if os.readlink(proc / str(pid) / "cwd") == os.path.realpath(run_dir):
                ours.append(pid)
        except OSError:
            continue
    if not ours:
        return ""
    end_group(pgid, (5.0, 5.0))
    left = group_members(pgid, proc)
    return (f"its script (process group {pgid}, {len(members)} process(es)) was still "
            f"running: ended" + (f", except {len(left)} that did not exit" if left else ""))


def _lock(root: Path) -> int:
    path = _p(root, LOCK)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        holder = (_read(path) or "").strip() or "?"
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EACCES):
            raise Refused(f"another host run (pid {holder}) holds {path}: host runs do not "
                            "overlap; wait for it to finish") from None
        raise
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _recover(root: Path, mount: Mounter, umount: Unmounter) -> str:
    """Put back the state an earlier run saved and never restored (it was
    killed with SIGKILL, or the machine lost power mid-run)."""
    path = _p(root, STATE)
    text = _read(path)
    if text is None:
        return ""
    try:
        old = State.from_json(json.loads(text))
    except (ValueError, TypeError) as e:
        path.unlink()
        return f"ignored an unreadable saved state {path} ({e})"
    # First its script, which would go on changing things (a sched_ext
    # loader still in charge, features set by the next load).
    ended = end_leftover(old.script_pgid, old.script_dir)
    # The values live in the kernel, not in the mounts: mount what is needed
    # to reach them again, and unmount what that run or this one mounted.
    still = [t for t in old.mounts_made if mounted(root, t)]
    now = []
    for fs, target in (("debugfs", DEBUGFS), ("tracefs", TRACEFS)):
        if target in old.mounts_made and not mounted(root, target) \
                and not (_p(root, target) / "trace").exists():
            try:
                mount(fs, _p(root, target))
                now.append(target)
            except HarnessError:
                pass
    old.mounts_made = still + now
    problems = restore(old, root, umount)
    path.unlink()
    return (f"an earlier host run (pid {old.pid}) ended without restoring the machine; "
            + (ended + "; " if ended else "")
            + "its saved state was put back" + (f" except: {'; '.join(problems)}"
                                                if problems else ""))


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Stopped in the main thread for the duration."""
    def handler(signum: int, frame: object) -> None:
        raise Stopped(signum)
    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextmanager
def session(root: Path = ROOT, *, mount: Mounter = real_mount,
            umount: Unmounter = real_umount, need_tracefs: bool = True) -> Iterator[Session]:
    """Hold the host lock; mount debugfs (and tracefs) where they are not;
    save the state (also to STATE, for the next run should this one be
    killed); turn schedstats on; on the way out, however it goes, put it
    all back.  Raises HostError listing what could not be put back."""
    fd = _lock(root)
    state = State(pid=os.getpid())
    failed = False
    try:
        with _signals_raise():
            recovered = _recover(root, mount, umount)
            if recovered:
                log(recovered)
            try:
                for fs, target, need in (("debugfs", DEBUGFS, True),
                                         ("tracefs", TRACEFS, need_tracefs)):
                    if need and not mounted(root, target) and \
                            not (fs == "tracefs" and (_p(root, target) / "trace").exists()) \
                            and re.search(rf"\b{fs}\b", _read(_p(root, "proc/filesystems")) or ""):
                        mount(fs, _p(root, target))
                        state.mounts_made.append(target)
                        # saved at once: a kill from here on leaves a record
                        _p(root, STATE).write_text(json.dumps(state.to_json()))
                found = snapshot(root)
                found.mounts_made, found.pid = state.mounts_made, state.pid
                state = found
                _p(root, STATE).write_text(json.dumps(state.to_json(), indent=1) + "\n")
                inst = _p(root, INSTANCE)
                if need_tracefs and inst.parent.is_dir():
                    if inst.exists():
                        raise HostError(f"the tracefs instance {inst} exists already (another "
                                        "tool's, or left by a host run killed before it saved "
                                        f"its state): `rmdir {inst}` if it is not in use")
                    state.instance_made = INSTANCE
                    _p(root, STATE).write_text(json.dumps(state.to_json(), indent=1) + "\n")
                    os.mkdir(inst)
                if state.schedstats == "0":
                    _write(_p(root, SCHEDSTATS), "1")
                yield Session(root, state, recovered)
            except BaseException:
                failed = True
                raise
            finally:
                # No second signal in the middle of putting things back.
                blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT,
                                                                     signal.SIGTERM,
                                                                     signal.SIGHUP})
                try:
                    problems = restore(state, root, umount)
                    if not problems:
                        _p(root, STATE).unlink(missing_ok=True)
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                if problems:
                    msg = ("the machine's state was not all put back: " + "; ".join(problems)
                           + f" (saved state kept in {_p(root, STATE)})")
                    if failed:          # the run's own error goes on up; this one is said
                        log(msg)
                    else:
                        raise HostError(msg)
    finally:
        os.close(fd)


# ---------------------------------------------------------------- running the script

HELPERS = "helpers.sh"


@dataclass
class HostResult:
    """vm.RunResult's fields that bench reads."""
    run_dir: Path
    output: image.GuestOutput
    seconds: float

    @property
    def sections(self) -> dict[str, str]:
        return self.output.sections


def script_path(extra: list[Path]) -> str:
    """PATH for the script: the directories of --file programs first."""
    dirs = list(dict.fromkeys(str(p) for p in extra))
    return ":".join([*dirs, os.environ.get("PATH", ""),
                     "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])


def run_script(script: str, *, name: str = "host", timeout: float = 600,
               meta: dict | None = None, path_dirs: list[Path] | None = None,
               quiet: bool = False, tracefs: Optional[Path] = None,
               on_start: Optional[Callable[[int, Path], None]] = None) -> HostResult:
    """Run `script` with the guest helpers under /bin/sh on this machine, in
    its own process group; its output, between image.parse_output()'s
    markers, goes to build/runs/<id>/output.log.  A script that fails or
    outlives `timeout` is a HostError naming that log.  `on_start` gets the
    process group and the run directory once it runs (Session.started)."""
    from ..guest import vm
    rd = vm.new_run_dir(f"{name}-host")
    out = rd / "output.log"
    (rd / "run.sh").write_text(script)
    (rd / HELPERS).write_text(guest_file(HELPERS))
    if meta is not None:
        (rd / vm.RUN_META).write_text(json.dumps(meta, indent=2) + "\n")
    env = dict(os.environ, PATH=script_path(path_dirs or []), LC_ALL="C")
    if tracefs is not None:          # helpers.sh traces there
        env["IDLESTEAL_TRACEFS"] = str(tracefs)
    say = (lambda m: None) if quiet else log
    say(f"running the script on this machine -> {rd}")
    t0 = time.monotonic()
    with open(out, "w") as f:
        f.write(image.BEGIN + "\n")
        f.flush()
        proc = subprocess.Popen(["/bin/sh", "-c", f". ./{HELPERS}; . ./run.sh"], cwd=rd,
                                stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
        try:
            if on_start is not None:
                on_start(proc.pid, rd)
            deadline, next_note = t0 + timeout, t0 + 60
            while proc.poll() is None:
                time.sleep(0.1)
                now = time.monotonic()
                if now > deadline:
                    raise HostError(f"the script did not finish within {timeout:.0f} s; "
                                    f"output: {out}")
                if now > next_note:
                    next_note = now + 60
                    say(f"  ... {now - t0:.0f} s")
        finally:
            if proc.poll() is None:
                _kill_group(proc)
        f.write(f"@@IDLESTEAL END rc={proc.returncode}@@\n")
    total = time.monotonic() - t0
    parsed = image.parse_output(out.read_text(errors="replace"))
    if parsed is None:
        raise HostError(f"{out}: no BEGIN/END markers")
    if parsed.rc != 0:
        tail = "\n".join("    | " + l for l in parsed.text.splitlines()[-25:])
        raise HostError(f"the script exited with rc={parsed.rc}; output: {out}\n{tail}")
    say(f"  done in {total:.1f} s")
    return HostResult(rd, parsed, total)


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the script's process group (the workload's processes
    too), SIGKILL to what is left after 5 s; returns once the group is empty
    (or after 15 s more)."""
    end_group(proc.pid, (5.0, 15.0), reap=proc.poll)
    proc.wait()


def end_group(pgid: int, waits: tuple[float, float],
              reap: Callable[[], object] = lambda: None) -> None:
    """SIGTERM to process group `pgid`, up to waits[0] s for it to be
    empty, then SIGKILL and up to waits[1] s more; `reap` is called while
    waiting (a member that is our child must be reaped to go)."""
    for sig, wait in zip((signal.SIGTERM, signal.SIGKILL), waits):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            reap()
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


def provenance_record(o: Offer) -> dict:
    """The build record of a host run: the running kernel, not a build."""
    return {"variant": "host", "kernel_release": o.kernel, "kernel_version": o.version,
            "arch": o.arch, "host": provenance.host_info()}


def paths_of_files(files: list[str]) -> list[Path]:
    """The directories of --file programs (FileSpec text 'HOST:GUEST')."""
    out = []
    for f in files:
        spec = image.parse_file_spec(f)
        out.append(spec.host if spec.host.is_dir() else spec.host.parent)
    return out


# ---------------------------------------------------------------- bench on the host

def sides(spec: "bench_mod.BenchSpec", o: Offer, explicit: bool
          ) -> tuple["bench_mod.BenchSpec", str]:
    """The A/B the running kernel can do.  Feature words it has: as asked.
    Otherwise: refused (HostError, one line) when --a/--b were given; with
    the default NO_STEAL/STEAL on a kernel without the series, both sides
    run the kernel as it is (an A/A run) and the note says why."""
    words = spec.a.features + spec.b.features
    if o.has_features(words):
        return spec, ""
    if STEAL in feature_names(list(words)) and o.features is not None and not o.steal:
        reason = o.steal_reason()
    elif o.features is None:
        reason = o.steal_reason()
    else:
        missing = sorted(feature_names(list(words)) - feature_names(o.features))
        reason = f"sched/features has no {' '.join(missing)}"
    if explicit:
        raise Refused(f"--host: the A/B {spec.a.name} against {spec.b.name} cannot run on "
                        f"this kernel: {reason}; without --a/--b host mode runs the kernel as "
                        "it is on both sides (A/A) with the wasted-time measure")
    spec = dataclasses.replace(spec, a=dataclasses.replace(spec.a, features=()),
                               b=dataclasses.replace(spec.b, features=()))
    return spec, skip_note(reason)


def skip_note(reason: str) -> str:
    """The line that says the STEAL A/B was skipped, and why."""
    return (f"STEAL A/B skipped: {reason}; both sides run the kernel as it is (A/A): "
            "%speedup and 'B removes' are then this machine's run-to-run noise")


# Per-CPU trace buffer on the host (KB): every task of the machine is traced,
# not only the workload (a hackbench -g 1 run on a 2-CPU VM at load 30 filled
# the guest's 8 MB); at most TRACE_MEM_SHARE of the memory in all.
TRACE_KB, TRACE_MEM_SHARE = 65536, 1 / 16


def trace_kb(ncpus: int, mem: int) -> int:
    """TRACE_KB per CPU, less where that would take over TRACE_MEM_SHARE of
    `mem` (MB); never under tracerun's guest size."""
    from ..measure import tracerun
    return max(tracerun.DEFAULT_KB,
               min(TRACE_KB, int(mem * 1024 * TRACE_MEM_SHARE) // max(ncpus, 1)))


def mem_mb(root: Path = ROOT) -> int:
    m = re.search(r"^MemTotal:\s+(\d+) kB", _read(_p(root, "proc/meminfo")) or "", re.M)
    return int(m.group(1)) // 1024 if m else 1024


def _stub_schedstat(sections: dict[str, str], runs: list, cpus: list[int]) -> dict[str, str]:
    """Sections with an all-zero /proc/schedstat in place of the missing one,
    so bench.measure() reads the rest; the schedstat fields are then set
    to nan (no_schedstat())."""
    stub = "version 17\ntimestamp 0\n" + "".join(f"cpu{c}" + " 0" * 9 + "\n" for c in cpus)
    out = dict(sections)
    for r in runs:
        for w in ("before", "after"):
            out[f"{r.tag}.schedstat.{w}"] = stub
    return out


# Measurement fields that come from /proc/schedstat or sched/debug.
SCHEDSTAT_FIELDS = ("sched", "idle", "wake", "steal", "steal_fail", "steal_ns", "newidle_lb",
                    "newidle_gained")


def no_schedstat(ms: list) -> None:
    """A kernel without /proc/schedstat: its fields are nan, not 0."""
    for m in ms:
        for f in SCHEDSTAT_FIELDS:
            setattr(m, f, float("nan"))
        if hasattr(m, "split"):
            m.split = None


def bench(spec: "bench_mod.BenchSpec", name: str, outdir: Path, *, explicit_ab: bool,
          max_load: float = DEFAULT_MAX_LOAD, force_load: bool = False, timeout: float = 0,
          show: Callable[[str], None] = print, root: Path = ROOT) -> dict:
    """One A/B sweep on this machine: the lock, the state saved, the kernel's
    offer shown, the sides it can do, the load checked, bench.script() run
    under /bin/sh, the same measurements and results as a guest run
    (bench.finish()), the state put back.  Returns bench.finish()'s paths
    and table; refusals are HostError (one line)."""
    if os.geteuid() != 0 and root == ROOT:
        raise Refused("--host needs root (sched features, tracefs, the schedstats sysctl, "
                        "mounting debugfs/tracefs); run it with sudo")
    try:
        return _bench(spec, name, outdir, explicit_ab=explicit_ab, max_load=max_load,
                      force_load=force_load, timeout=timeout, show=show, root=root)
    except Stopped as e:            # session() has put the state back by now
        log(f"{e}: the run is abandoned; the machine's state was put back")
        raise


def _bench(spec: "bench_mod.BenchSpec", name: str, outdir: Path, *, explicit_ab: bool,
           max_load: float, force_load: bool, timeout: float,
           show: Callable[[str], None], root: Path) -> dict:
    from . import bench as bench_mod
    with session(root, need_tracefs=spec.waste != "off") as s:
        o = offer(root, made=tuple(s.state.mounts_made))
        o.load = sample_load(root)
        show(o.block())
        spec, note = sides(spec, o, explicit_ab)
        if note:
            show(note)
        why = o.measure_reason()
        if spec.waste != "off" and why:
            raise Refused(f"--host: no wasted-time measure here: {why}; run with --waste off")
        too = o.load.too_high(max_load)
        if too and not force_load:
            raise Refused(f"--host: the machine is already loaded ({too}; above --max-load "
                            f"{max_load:g} of its CPUs): the figures would measure that load "
                            "too; wait until it is quiet or pass --force-load (the load is "
                            "recorded in the results)")
        if too:
            log(f"going on under load (--force-load): {too}")
        w = spec.wl
        runs = bench_mod.plan(spec)
        log(f"bench {name} on this machine: {len(runs)} {w.name} runs ({w.level} "
            f"{','.join(map(str, spec.levels))}, {w.size_name} {spec.size}); "
            f"A = {spec.a.name}, B = {spec.b.name}")
        extra = paths_of_files(spec.files)
        missing = program_missing(spec, extra)
        if missing:
            raise Refused(f"--host: {missing}; --file PROG puts your own program's "
                            "directory on the PATH")
        if w.binary in {p.stem for p in _workload_exes()}:      # wakelat: built here
            extra += [p.parent for p in image.compile_workloads()[:1]]
        topo = o.topology
        script = bench_mod.script(spec, runs, topo.ncpus, mem_mb(root),
                                  trace_kb=trace_kb(topo.ncpus, mem_mb(root)))
        res = run_script(script, name="bench", timeout=timeout or 120 + 240 * len(runs),
                         path_dirs=extra, tracefs=_p(root, s.state.instance_made)
                         if s.state.instance_made else None, on_start=s.started,
                         meta={"kind": RUN_KIND, "name": name, "spec": spec.to_json(),
                               "offer": o.to_json(), "skipped": note,
                               "forced_under_load": bool(too)})
        end = sample_load(root)
        return results(spec, res.sections, o, name, outdir, res.run_dir,
                       seconds=res.seconds, note=note, end=end, forced=bool(too))


# run.json's kind of a host bench run (collect.py reads it back)
RUN_KIND = "host-bench"


def results(spec: "bench_mod.BenchSpec", sections: dict[str, str], o: Offer, name: str,
            outdir: Path, run_dir: Path, *, seconds: Optional[float], note: str,
            end: Optional[Load], forced: bool, collected: bool = False) -> dict:
    """The results of a host run's output: its sections measured as a
    guest's are, with the host's topology (checked against the script's),
    schedstat fields nan on a kernel without /proc/schedstat, the offer and
    the loads in the JSON and beside the table.  Used by the run itself and
    by `collect` of its run directory (`end` None: not recorded there)."""
    from . import bench as bench_mod
    from ..report import ab as report
    topo = o.topology
    runs = bench_mod.plan(spec)
    changed = check_same(topo, sections.get("topology", ""))
    if changed:
        raise HostError("the machine's CPUs changed during the run: " + "; ".join(changed))
    wtopo = topo.waste_topology()
    has_ss = o.schedstat_version is not None
    if not has_ss:
        sections = _stub_schedstat(sections, runs, topo.online)
    ms = bench_mod.collect(spec, runs, sections, wtopo)
    if has_ss:
        bench_mod.check_schedstat(sections, runs, topo.ncpus)
    else:
        no_schedstat(ms)
    overload = sections.get("overload.after", "")
    info = {"uname": sections.get("meta", "").strip(), "run_dir": str(run_dir),
            "boot_seconds": 0.0,
            "total_seconds": None if seconds is None else round(seconds, 1),
            "possible_cpus": sections.get("possible", "").strip(),
            "overload_after": overload.splitlines()}
    if collected:
        info["collected"] = True
    meta = report.metadata(spec, "host", provenance_record(o), "none (host mode)", info)
    meta["kernel_label"] = f"the running kernel {o.kernel}"
    meta["host_mode"] = {"offer": o.to_json(),
                         "load_start": asdict(o.load) if o.load else None,
                         "load_end": asdict(end) if end else None, "forced_under_load": forced,
                         "skipped": note, "topology": topo.to_json()}
    out = bench_mod.finish(spec, runs, ms, sections, wtopo, name, outdir, meta, run_dir)
    beside = ("\n" + o.block() + (note + "\n" if note else "")
              + (f"  load at end: {end.describe()}\n" if end else
                 "  load at end: not recorded in the run directory\n"))
    with open(out["txt"], "a") as f:
        f.write(beside)
    out["table"] += beside
    return out


def program_missing(spec: "bench_mod.BenchSpec", extra: list[Path]) -> str:
    """Why the workload's program cannot run here ("" when it can): not on
    the PATH (with `extra`, the --file directories, first).  The programs of
    workloads/ count as there: they are built here before the run."""
    b = spec.wl.binary
    if b in {p.stem for p in _workload_exes()} or shutil.which(b, path=script_path(extra)):
        return ""
    pkg = image.TOOLS.get(b, ("", "rt-tests" if b == "hackbench" else ""))[1]
    return f"{b} is not installed on this machine" + (f" (Debian package {pkg})" if pkg else "")


def _workload_exes() -> list[Path]:
    """workloads/*.c by name (built on demand by image.compile_workloads())."""
    return sorted(paths.workloads_dir().glob("*.c"))


# ---------------------------------------------------------------- suite on the host

@dataclass
class SuiteResult:
    """What `suite --host` did: entry names done, failed (with why) and
    skipped (with why); `stopped`: the refusal that ended it, "" if none."""
    done: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stopped: str = ""


def suite(specs: list[tuple[str, "bench_mod.BenchSpec"]], outdir: Path, *, explicit_ab: bool,
          max_load: float = DEFAULT_MAX_LOAD, force_load: bool = False,
          show: Callable[[str], None] = print, root: Path = ROOT) -> SuiteResult:
    """`suite --host`: each (name, spec) as `bench --host` runs it, one after
    the other, each in its own session (the state put back after each).  A
    workload whose program is not installed is skipped with one line; a
    refusal (Refused: not root, the A/B asked for, the load, no measure,
    another host run) ends the suite, since every later entry would meet it
    too; a run that fails is counted and the next entry runs.  The kernel's
    offer and the skipped A/B's line are shown once, for the first entry."""
    from . import bench as bench_mod
    from ..util import Stopwatch
    if os.geteuid() != 0 and root == ROOT:
        return SuiteResult(stopped="--host needs root (sched features, tracefs, the schedstats "
                           "sysctl, mounting debugfs/tracefs); run it with sudo")
    res = SuiteResult()
    todo = []
    for name, spec in specs:
        why = program_missing(spec, paths_of_files(spec.files))
        if why:
            res.skipped.append((name, why))
            show(f"suite --host: {name} skipped: {why}")
        else:
            todo.append((name, spec))
    shown: set[str] = set()

    def once(text: str) -> None:
        key = "offer" if text.startswith("host: ") else text
        if key not in shown:
            shown.add(key)
            show(text)
    sw = Stopwatch()
    for i, (name, spec) in enumerate(todo, 1):
        log(f"suite entry {i}/{len(todo)}: {name} ({len(bench_mod.plan(spec))} runs)")
        try:
            out = bench(spec, name, outdir, explicit_ab=explicit_ab, max_load=max_load,
                        force_load=force_load, show=once, root=root)
        except Refused as e:
            res.stopped = str(e)
            break
        except HarnessError as e:        # keep going: one broken entry must not lose the rest
            log(f"suite entry {name} FAILED: {e}")
            res.failed.append((name, str(e)))
        else:
            show(f"== {name}\n{out['table']}".rstrip("\n"))
            res.done.append(name)
        log(f"suite --host: {i}/{len(todo)} done, {len(res.failed)} failed, "
            f"{sw.elapsed():.0f} s elapsed")
    return res

