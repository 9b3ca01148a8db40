"""CPU time from /proc/stat and %busy between two snapshots.

    cpu  user nice system idle iowait irq softirq steal guest guest_nice
    cpu0 ...

guest and guest_nice are already included in user and nice, so they are not
added again.  Busy = everything but idle and iowait.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..util import ParseError

COLUMNS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
           "guest", "guest_nice")


class ProcStatError(ParseError):
    pass


@dataclass
class CpuTimes:
    values: dict[str, int]

    @property
    def total(self) -> int:
        return sum(v for k, v in self.values.items() if k not in ("guest", "guest_nice"))

    @property
    def idle(self) -> int:
        return self.values.get("idle", 0) + self.values.get("iowait", 0)


@dataclass
class ProcStat:
    all: CpuTimes
    cpus: dict[int, CpuTimes]
    ctxt: int = 0


def parse(text: str) -> ProcStat:
    agg = None
    cpus: dict[int, CpuTimes] = {}
    ctxt = 0
    for line in text.splitlines():
        tok = line.split()
        if not tok:
            continue
        if tok[0].startswith("cpu"):
            try:
                vals = [int(x) for x in tok[1:]]
            except ValueError:
                raise ProcStatError(f"bad line {line!r}") from None
            times = CpuTimes(dict(zip(COLUMNS, vals)))
            if tok[0] == "cpu":
                agg = times
            else:
                cpus[int(tok[0][3:])] = times
        elif tok[0] == "ctxt":
            ctxt = int(tok[1])
    if agg is None:
        raise ProcStatError("no aggregate 'cpu' line")
    return ProcStat(agg, cpus, ctxt)


def busy_percent(before: CpuTimes, after: CpuTimes) -> float:
    total = after.total - before.total
    if total <= 0:
        return 0.0
    idle = after.idle - before.idle
    return 100.0 * (total - idle) / total


def busy(before: ProcStat, after: ProcStat) -> float:
    """%busy of the whole machine between two snapshots."""
    return busy_percent(before.all, after.all)


USER_HZ = 100   # /proc/stat's unit (clock ticks), fixed at 100 on Linux


def cpu_ns(before: ProcStat, after: ProcStat) -> float:
    """CPU time that passed per CPU between two snapshots, in ns."""
    n = len(after.cpus) or 1
    return (after.all.total - before.all.total) * (1e9 / USER_HZ) / n
