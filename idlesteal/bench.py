"""A/B sweeps of one workload (idlesteal/workload.py) in one boot.

`plan()` lays out the runs (for each repetition, for each load level, side
A then B, or B then A on odd repetitions when alternating), `script()` turns
the plan into the guest's /run.sh, and `collect()` turns the guest's
sections back into per-run measurements: the workload's metrics, %busy from
/proc/stat, the /proc/schedstat deltas (steals, their cost, newidle
balancing) and newidle balance's own cost estimate from debugfs.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass, field

from . import procstat, schedstat, topology
from . import workload as wl

# Per CPU and domain: newidle balance's decaying maximum cost (ns), the
# estimate sched_balance_newidle() compares with avg_idle (only there with
# sched/verbose on).
NEWIDLE_COST_GLOB = "/sys/kernel/debug/sched/domains/cpu*/domain*/max_newidle_lb_cost"


@dataclass(frozen=True)
class Side:
    label: str               # "A" or "B"
    features: tuple[str, ...]

    @property
    def name(self) -> str:
        return " ".join(self.features) or "(unchanged)"


@dataclass(frozen=True)
class Run:
    index: int
    rep: int
    level: int
    side: str                # label
    warmup: bool = False

    @property
    def tag(self) -> str:
        return f"r{self.index:03d}"


@dataclass
class BenchSpec:
    a: Side
    b: Side
    levels: list[int]        # hackbench groups, sysbench threads, ...
    size: int                # hackbench loops, sysbench events, ...
    reps: int
    alternate: bool = True
    warmup: int = 1
    extra_args: list[str] = field(default_factory=list)
    workload: str = "hackbench"

    @property
    def wl(self) -> wl.Workload:
        return wl.get(self.workload)

    def side(self, label: str) -> Side:
        return self.a if label == "A" else self.b

    def command(self, level: int) -> list[str]:
        return self.wl.argv(level, self.size, self.extra_args)


def parse_features(text: str) -> tuple[str, ...]:
    """'NO_STEAL' or 'NO_STEAL,NI_RANDOM' or 'NO_STEAL NI_RANDOM' -> words."""
    words = tuple(w for w in re.split(r"[,\s]+", text.strip()) if w)
    for w in words:
        if not re.fullmatch(r"[A-Z0-9_]+", w):
            raise ValueError(f"not a sched feature word: {w!r}")
    return words


def plan(spec: BenchSpec) -> list[Run]:
    runs: list[Run] = []
    for _ in range(spec.warmup):
        runs.append(Run(len(runs), -1, max(spec.levels), "A", warmup=True))
    for rep in range(spec.reps):
        order = ("B", "A") if spec.alternate and rep % 2 else ("A", "B")
        for g in spec.levels:
            for label in order:
                runs.append(Run(len(runs), rep, g, label))
    return runs


def script(spec: BenchSpec, runs: list[Run]) -> str:
    """The guest script: topology, then each run with before/after snapshots."""
    # sched/verbose makes the kernel create sched/domains/ (newidle cost).
    lines = ["echo 1 > /sys/kernel/debug/sched/verbose 2>/dev/null || :",
             "section meta", "uname -a", "cat /proc/cmdline", "nproc",
             "section features.initial", "cat /sys/kernel/debug/sched/features",
             "section topology", topology.GUEST_SNIPPET.strip()]
    w = spec.wl
    lines += [f"command -v {w.binary} >/dev/null || fail '{w.binary} is not in the guest image'"]
    for r in runs:
        side = spec.side(r.side)
        cmd = shlex.join(spec.command(r.level))
        lines += [
            f"# run {r.index}: rep {r.rep} {w.level} {r.level} side {r.side}"
            + (" (warm-up)" if r.warmup else ""),
            f"set_features {' '.join(side.features)}" if side.features else ":",
            f"section {r.tag}.features", "cat /sys/kernel/debug/sched/features",
            f"section {r.tag}.schedstat.before", "cat /proc/schedstat",
            f"section {r.tag}.stat.before", "cat /proc/stat",
            f"section {r.tag}.output",
            f"{cmd} 2>&1 || fail '{w.name} failed in run {r.index}'",
            f"section {r.tag}.stat.after", "cat /proc/stat",
            f"section {r.tag}.schedstat.after", "cat /proc/schedstat",
            f"section {r.tag}.newidle_cost",
            f"for f in {NEWIDLE_COST_GLOB}; do [ -r \"$f\" ] && echo \"$f $(cat \"$f\")\"; done",
        ]
    lines += ["section features.final", "cat /sys/kernel/debug/sched/features"]
    return "\n".join(lines) + "\n"


@dataclass
class Measurement:
    index: int
    rep: int
    level: int
    side: str
    features: list[str]
    value: float          # the workload's primary metric
    metrics: dict[str, float]
    busy: float
    sched: float          # per-CPU averages of the /proc/schedstat deltas
    idle: float
    wake: float
    steal: float
    steal_fail: float
    steal_ns: float       # time spent in try_steal() attempts
    newidle_lb: float
    newidle_gained: float
    newidle_cost_ns: float  # mean over CPUs of newidle's summed per-domain cost
    cpu_ns: float         # CPU time available during the run, per CPU (/proc/stat)

    def to_json(self) -> dict:
        return asdict(self)


class BenchParseError(ValueError):
    pass


def parse_newidle_cost(text: str) -> float:
    """Lines '<path>/cpuN/domainM/max_newidle_lb_cost <ns>' -> mean over CPUs
    of the per-CPU sum over domains (what one newidle balance is expected to
    cost on that CPU); 0.0 when there are none (no debugfs, one CPU)."""
    per_cpu: dict[str, int] = {}
    for line in text.splitlines():
        m = re.search(r"/(cpu\d+)/domain\d+/max_newidle_lb_cost\s+(\d+)\s*$", line)
        if m:
            per_cpu[m.group(1)] = per_cpu.get(m.group(1), 0) + int(m.group(2))
    return sum(per_cpu.values()) / len(per_cpu) if per_cpu else 0.0


def measure(run: Run, spec: BenchSpec, sections: dict[str, str]) -> Measurement:
    t = run.tag
    try:
        out = sections[f"{t}.output"]
        before = schedstat.parse(sections[f"{t}.schedstat.before"])
        after = schedstat.parse(sections[f"{t}.schedstat.after"])
        s0 = procstat.parse(sections[f"{t}.stat.before"])
        s1 = procstat.parse(sections[f"{t}.stat.after"])
    except KeyError as e:
        raise BenchParseError(f"run {run.index}: guest output lacks section {e}") from None
    try:
        metrics = spec.wl.parse(out)
    except wl.WorkloadParseError as e:
        raise BenchParseError(f"run {run.index}: {spec.workload}: {e}") from None
    d = schedstat.delta(before, after)
    feats = sections.get(f"{t}.features", "").split()
    side = spec.side(run.side)
    for w in side.features:
        if w not in feats:
            raise BenchParseError(f"run {run.index}: feature {w} not active "
                                  f"(features: {' '.join(feats)})")
    return Measurement(run.index, run.rep, run.level, run.side, list(side.features),
                       metrics[spec.wl.metric], metrics, procstat.busy(s0, s1),
                       d.per_cpu("sched_count"), d.per_cpu("sched_goidle"),
                       d.per_cpu("ttwu_count"), d.per_cpu("steal"), d.per_cpu("steal_fail"),
                       d.per_cpu("steal_time"),
                       d.newidle_lb / d.ncpus, d.newidle_gained / d.ncpus,
                       parse_newidle_cost(sections.get(f"{t}.newidle_cost", "")),
                       procstat.cpu_ns(s0, s1))


def collect(spec: BenchSpec, runs: list[Run], sections: dict[str, str]) -> list[Measurement]:
    """Measurements of the non-warm-up runs."""
    return [measure(r, spec, sections) for r in runs if not r.warmup]
