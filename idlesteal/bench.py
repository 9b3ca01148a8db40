"""A/B hackbench sweeps in one boot.

`plan()` lays out the runs (for each repetition, for each group count, side
A then B, or B then A on odd repetitions when alternating), `script()` turns
the plan into the guest's /run.sh, and `collect()` turns the guest's
sections back into per-run measurements.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass, field

from . import procstat, schedstat, topology

HACKBENCH_TIME_RE = re.compile(r"^Time:\s*([0-9.]+)", re.M)


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
    groups: int
    side: str                # label
    warmup: bool = False

    @property
    def tag(self) -> str:
        return f"r{self.index:03d}"


@dataclass
class BenchSpec:
    a: Side
    b: Side
    groups: list[int]
    loops: int
    reps: int
    alternate: bool = True
    warmup: int = 1
    hackbench_args: list[str] = field(default_factory=list)

    def side(self, label: str) -> Side:
        return self.a if label == "A" else self.b

    def hackbench_cmd(self, groups: int) -> list[str]:
        return ["hackbench", "-g", str(groups), "-l", str(self.loops), *self.hackbench_args]


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
        runs.append(Run(len(runs), -1, max(spec.groups), "A", warmup=True))
    for rep in range(spec.reps):
        order = ("B", "A") if spec.alternate and rep % 2 else ("A", "B")
        for g in spec.groups:
            for label in order:
                runs.append(Run(len(runs), rep, g, label))
    return runs


def script(spec: BenchSpec, runs: list[Run]) -> str:
    """The guest script: topology, then each run with before/after snapshots."""
    lines = ["section meta", "uname -a", "cat /proc/cmdline", "nproc",
             "section features.initial", "cat /sys/kernel/debug/sched/features",
             "section topology", topology.GUEST_SNIPPET.strip()]
    for r in runs:
        side = spec.side(r.side)
        cmd = shlex.join(spec.hackbench_cmd(r.groups))
        lines += [
            f"# run {r.index}: rep {r.rep} groups {r.groups} side {r.side}"
            + (" (warm-up)" if r.warmup else ""),
            f"set_features {' '.join(side.features)}" if side.features else ":",
            f"section {r.tag}.features", "cat /sys/kernel/debug/sched/features",
            f"section {r.tag}.schedstat.before", "cat /proc/schedstat",
            f"section {r.tag}.stat.before", "cat /proc/stat",
            f"section {r.tag}.hackbench",
            f"{cmd} 2>&1 || fail 'hackbench failed in run {r.index}'",
            f"section {r.tag}.stat.after", "cat /proc/stat",
            f"section {r.tag}.schedstat.after", "cat /proc/schedstat",
        ]
    lines += ["section features.final", "cat /sys/kernel/debug/sched/features"]
    return "\n".join(lines) + "\n"


@dataclass
class Measurement:
    index: int
    rep: int
    groups: int
    side: str
    features: list[str]
    time: float
    busy: float
    sched: float          # per-CPU averages of the /proc/schedstat deltas
    idle: float
    wake: float
    steal: float
    newidle_lb: float
    newidle_gained: float

    def to_json(self) -> dict:
        return asdict(self)


class BenchParseError(ValueError):
    pass


def measure(run: Run, spec: BenchSpec, sections: dict[str, str]) -> Measurement:
    t = run.tag
    try:
        hb = sections[f"{t}.hackbench"]
        before = schedstat.parse(sections[f"{t}.schedstat.before"])
        after = schedstat.parse(sections[f"{t}.schedstat.after"])
        s0 = procstat.parse(sections[f"{t}.stat.before"])
        s1 = procstat.parse(sections[f"{t}.stat.after"])
    except KeyError as e:
        raise BenchParseError(f"run {run.index}: guest output lacks section {e}") from None
    m = HACKBENCH_TIME_RE.search(hb)
    if not m:
        raise BenchParseError(f"run {run.index}: no 'Time:' in hackbench output:\n{hb[-500:]}")
    d = schedstat.delta(before, after)
    feats = sections.get(f"{t}.features", "").split()
    side = spec.side(run.side)
    for w in side.features:
        if w not in feats:
            raise BenchParseError(f"run {run.index}: feature {w} not active "
                                  f"(features: {' '.join(feats)})")
    return Measurement(run.index, run.rep, run.groups, run.side, list(side.features),
                       float(m.group(1)), procstat.busy(s0, s1),
                       d.per_cpu("sched_count"), d.per_cpu("sched_goidle"),
                       d.per_cpu("ttwu_count"), d.per_cpu("steal"),
                       d.newidle_lb / d.ncpus, d.newidle_gained / d.ncpus)


def collect(spec: BenchSpec, runs: list[Run], sections: dict[str, str]) -> list[Measurement]:
    """Measurements of the non-warm-up runs."""
    return [measure(r, spec, sections) for r in runs if not r.warmup]
