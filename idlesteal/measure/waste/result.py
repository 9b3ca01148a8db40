"""What the wasted-CPU-time measure gives (the package's doc): `Waste`,
the measure over one window (its JSON and its text), the episode
histogram and percentiles, and the shape of the per-CPU `Timeline`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

LEVELS = ("llc", "node", "machine")
KINDS = ("idle_entry", "arrival")
# Episode length buckets: (upper bound in ns, exclusive; label).
BUCKETS: tuple[tuple[Optional[int], str], ...] = (
    (10_000, "<10us"), (100_000, "10-100us"), (1_000_000, "0.1-1ms"),
    (10_000_000, "1-10ms"), (None, ">=10ms"))
PERCENTILES = (50, 90, 99)
# A waiting-task move undone by the task's next move within this much
# trace time is a bounce (docs/waste.md).
BOUNCE_WINDOW_NS = 5_000_000

# Timeline: per CPU, (start s, end s, "idle" | "run" | "wasted"), in order.
Segment = tuple[float, float, str]
Timeline = dict[int, list[Segment]]


def percentile(sorted_values: list[int], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default):
    rank = q/100 * (n-1)."""
    if not sorted_values:
        return 0.0
    rank = q / 100 * (len(sorted_values) - 1)
    lo = int(rank)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (rank - lo)


def histogram(lengths_ns: Iterable[int]) -> dict[str, int]:
    """Episode counts per BUCKETS label."""
    counts = {label: 0 for _, label in BUCKETS}
    for n in lengths_ns:
        for bound, label in BUCKETS:
            if bound is None or n < bound:
                counts[label] += 1
                break
    return counts


@dataclass
class Waste:
    """The measure over one window; times in seconds of guest time."""
    start: float
    end: float
    cpus: list[int]
    llc_of: dict[int, int]
    idle: dict[int, float]                  # per CPU
    wasted: dict[str, float]                # per level (LEVELS), all CPUs
    wasted_cpu: dict[int, float]            # LLC-wasted per CPU
    run_delay: float
    waits: int                              # times a task started to wait
    episodes: int                           # LLC-wasted episodes
    histogram: dict[str, int]               # episodes per BUCKETS label
    percentiles_us: dict[str, float]        # p50, p90, p99, max of episode length
    began: dict[str, float]                 # LLC-wasted time per KINDS
    began_episodes: dict[str, int]
    events: int
    assumed_idle_cpus: list[int] = field(default_factory=list)
    unknown_start_tasks: int = 0
    inconsistencies: int = 0
    waiters_on_idle_cpus: bool = False
    migrations: int = 0                     # of tasks other than per-CPU kthreads
    migrations_waiting: int = 0             # of those: the task was waiting (a pull/steal)
    bounces: int = 0                        # of those: moved back by its next move, in time

    @property
    def window(self) -> float:
        return self.end - self.start

    @property
    def cpu_time(self) -> float:
        """Online CPUs x window."""
        return len(self.cpus) * self.window

    @property
    def busy(self) -> dict[int, float]:
        return {c: self.window - i for c, i in self.idle.items()}

    @property
    def idle_total(self) -> float:
        return sum(self.idle.values())

    def fraction(self, level: str = "llc") -> float:
        """Wasted time at `level` as a fraction of the CPU time."""
        return self.wasted[level] / self.cpu_time

    @property
    def wasted_llc(self) -> dict[int, float]:
        """LLC-wasted time per LLC id."""
        out: dict[int, float] = {}
        for cpu, w in self.wasted_cpu.items():
            out[self.llc_of[cpu]] = out.get(self.llc_of[cpu], 0.0) + w
        return out

    def llc_fraction(self) -> dict[int, float]:
        """Per LLC: its LLC-wasted time / (its online CPUs x window)."""
        ncpus: dict[int, int] = {}
        for cpu in self.cpus:
            ncpus[self.llc_of[cpu]] = ncpus.get(self.llc_of[cpu], 0) + 1
        return {llc: w / (ncpus[llc] * self.window) for llc, w in sorted(self.wasted_llc.items())}

    def as_dict(self) -> dict:
        """JSON-ready (string keys)."""
        return {
            "start": self.start, "end": self.end, "window": self.window,
            "cpus": self.cpus, "cpu_time": self.cpu_time,
            "idle": {str(c): v for c, v in self.idle.items()},
            "busy": {str(c): v for c, v in self.busy.items()},
            "idle_total": self.idle_total,
            "wasted": dict(self.wasted),
            "fraction": {lv: self.fraction(lv) for lv in LEVELS},
            "wasted_cpu": {str(c): v for c, v in self.wasted_cpu.items()},
            "wasted_llc": {str(k): v for k, v in sorted(self.wasted_llc.items())},
            "llc_fraction": {str(k): v for k, v in self.llc_fraction().items()},
            "run_delay": self.run_delay, "waits": self.waits,
            "episodes": self.episodes, "histogram": dict(self.histogram),
            "percentiles_us": dict(self.percentiles_us),
            "began": dict(self.began), "began_episodes": dict(self.began_episodes),
            "began_fraction": {k: v / self.cpu_time for k, v in self.began.items()},
            "events": self.events, "assumed_idle_cpus": self.assumed_idle_cpus,
            "unknown_start_tasks": self.unknown_start_tasks,
            "inconsistencies": self.inconsistencies,
            "waiters_on_idle_cpus": self.waiters_on_idle_cpus,
            "migrations": self.migrations, "migrations_waiting": self.migrations_waiting,
            "bounces": self.bounces, "bounce_window_ns": BOUNCE_WINDOW_NS,
            "migrations_per_cpu_s": self.migrations / self.cpu_time,
            "migrations_waiting_per_cpu_s": self.migrations_waiting / self.cpu_time,
            "bounces_per_cpu_s": self.bounces / self.cpu_time,
        }

    def format(self) -> str:
        """A few lines of text."""
        pct = 100 / self.cpu_time
        lines = [
            f"window {self.start:.6f}-{self.end:.6f} s ({self.window:.6f} s), "
            f"{len(self.cpus)} CPUs, CPU time {self.cpu_time:.6f} s, {self.events} events",
            f"idle {self.idle_total:.6f} s ({self.idle_total * pct:.1f}%), "
            f"run delay {self.run_delay:.6f} s over {self.waits} waits",
            "wasted: " + ", ".join(f"{lv} {self.wasted[lv]:.6f} s ({self.wasted[lv] * pct:.2f}%)"
                                   for lv in LEVELS),
            "  per LLC: " + ", ".join(f"{k} {100 * v:.2f}%"
                                      for k, v in self.llc_fraction().items()),
            f"  {self.episodes} episodes: " + ", ".join(f"{k} {v}"
                                                       for k, v in self.histogram.items())
            + "; " + ", ".join(f"{k} {v:.1f}" for k, v in self.percentiles_us.items()) + " us",
            "  began by: " + ", ".join(
                f"{k} {self.began[k]:.6f} s ({self.began[k] * pct:.2f}%, "
                f"{self.began_episodes[k]} episodes)" for k in KINDS),
            f"migrations {self.migrations} ({self.migrations / self.cpu_time:.1f}/CPU-s), "
            f"of waiting tasks {self.migrations_waiting} "
            f"({self.migrations_waiting / self.cpu_time:.1f}/CPU-s), bounces {self.bounces} "
            f"({self.bounces / self.cpu_time:.1f}/CPU-s, back within "
            f"{BOUNCE_WINDOW_NS / 1e6:g} ms)",
        ]
        notes = []
        if self.assumed_idle_cpus:
            notes.append(f"CPUs without events, taken as idle: {self.assumed_idle_cpus}")
        if self.unknown_start_tasks:
            notes.append(f"{self.unknown_start_tasks} tasks first seen switched in "
                         "(earlier waiting not counted)")
        if self.inconsistencies:
            notes.append(f"{self.inconsistencies} events contradict the model (events missing?)")
        return "\n".join(lines + [f"  note: {n}" for n in notes]) + "\n"
