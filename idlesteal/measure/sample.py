"""What one A/B sweep is (BenchSpec, its two Sides) and what each of its
runs yields (Measurement): the records idlesteal/runs/bench.py fills and
idlesteal/report/ab.py summarizes, kept below both so that neither
imports the other."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import tracerun
from . import workload as wl
from ..util import HarnessError, ParseError


@dataclass(frozen=True)
class Side:
    label: str               # "A" or "B"
    features: tuple[str, ...]

    @property
    def name(self) -> str:
        return " ".join(self.features) or "(unchanged)"


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
    workload: str = "hackbench"   # a builtin's name; for a custom one, custom["name"]
    # A custom workload's definition (workload.custom()'s arguments, as
    # Workload.to_json() gives them); None for a builtin workload.
    custom: dict | None = None
    # Host files for the guest image, "HOST:GUEST" (image.parse_file_spec()).
    files: list[str] = field(default_factory=list)
    # Which sides are traced for the wasted-CPU-time measure (tracerun.MODES).
    waste: str = "both"
    # /proc/lock_stat cleared before each run and its rq->__lock classes read
    # after it (a kernel with CONFIG_LOCK_STAT: variant lockstat).
    lock_stat: bool = False

    def __post_init__(self) -> None:
        if self.waste not in tracerun.MODES:
            raise HarnessError(f"waste mode {self.waste!r}: one of {', '.join(tracerun.MODES)}")
        if self.custom is not None:
            self.workload = wl.from_json(self.custom).name   # checks the definition

    @property
    def wl(self) -> wl.Workload:
        return wl.from_json(self.custom) if self.custom is not None else wl.get(self.workload)

    def side(self, label: str) -> Side:
        return self.a if label == "A" else self.b

    def command(self, level: int) -> list[str]:
        return self.wl.argv(level, self.size, self.extra_args)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> BenchSpec:
        """The inverse of to_json() (a kept run's run.json)."""
        try:
            return cls(a=Side(d["a"]["label"], tuple(d["a"]["features"])),
                       b=Side(d["b"]["label"], tuple(d["b"]["features"])),
                       levels=list(d["levels"]), size=int(d["size"]), reps=int(d["reps"]),
                       alternate=bool(d["alternate"]), warmup=int(d["warmup"]),
                       extra_args=list(d["extra_args"]), workload=d["workload"],
                       custom=dict(d["custom"]) if d.get("custom") is not None else None,
                       files=[str(f) for f in d.get("files", [])],
                       # runs kept before the measure existed traced nothing
                       waste=str(d.get("waste", "off")),
                       lock_stat=bool(d.get("lock_stat", False)))
        except (KeyError, TypeError, ValueError, HarnessError) as e:
            raise BenchParseError(f"not a bench spec ({type(e).__name__}: {e}): {d!r}") from None


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
    # waste.Waste.as_dict() of the run's window; None when it was not traced
    waste: dict | None = None
    # What idle entries led to (idle_split()): per CPU, from schedstat
    split: dict | None = None
    # lockstat.record() of the run queue lock over the run; None without lock_stat
    lock_stat: dict | None = None

    def to_json(self) -> dict:
        return asdict(self)


class BenchParseError(ParseError):
    pass
