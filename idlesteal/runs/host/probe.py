"""What the running kernel offers host mode (idlesteal/runs/host/), read
and changing nothing: `offer()` gives the series' STEAL feature,
schedstat, sched_ext, tracefs and the measure's events, BPF, root, the
hypervisor flag and the topology from sysfs as an Offer, printed as one
block (Offer.block()) before any load and kept in the JSON; `sample_load()`
gives the load already running at the start (Load, with the steal time),
above --max-load the run stops unless --force-load.  With the parsers of
the files they read (/proc/loadavg, /proc/stat, sched/features,
trace_clock, /proc/schedstat, /proc/mounts).
"""
from __future__ import annotations

import dataclasses
import os
import platform
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from ...measure import procstat
from .common import (DEBUGFS, EVENTS, FEATURES, ROOT, SCHED_EXT, SCHEDSTATS, STEAL,
                     TRACEFS, HostError, _p, _read, _why)
from .cpus import SysTopology, read_topology

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
