"""Parser for /proc/lock_stat (CONFIG_LOCK_STAT), "lock_stat version 0.4"
as printed by Linux 7.2's kernel/locking/lockdep_proc.c (seq_header(),
seq_stats(); Documentation/locking/lockstat.rst), whole or as the guest's
`lockstat_snap NAME` prints it (the header and the classes NAME, NAME/N):

    lock_stat version 0.4
    [*WARNING* lock debugging disabled!! - possibly due to a lockdep warning]
    ------------------------------------------------------------------------
                  class name  con-bounces  contentions  waittime-min ... holdtime-avg
    ------------------------------------------------------------------------

                 &rq->__lock:  <12 numbers>            (rw locks: NAME-W: and NAME-R:)
                 -----------
                 &rq->__lock   <count>  [<ip>] symbol+0x../0x..   up to 4 contention points
                 -----------
                 &rq->__lock   <count>  [<ip>] symbol+0x../0x..   up to 4 contending points

    ........................................................................

Times are in microseconds.  Contention points are where a waiter waited
(the caller's return address in the lock function); contending points are
where the holder it waited for took the lock (the lock's `ip`, which only a
lock_acquired() sets: trylock acquisitions take the lock without it, so a
trylock holder is charged to the previous non-try holder's site).  Only the
first LOCKSTAT_POINTS (4) distinct sites of each kind are kept per class
after a clear: counts at other sites are in `contentions` but in no point.
With lock debugging off (the warning line) lockdep stopped counting.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ..util import ParseError

VERSION = "0.4"
# The run queue lock's class (kernel/sched/core.c sched_init(): rq->__lock);
# double_rq_lock() and double_lock_balance() take the second one as "/1".
RQ_LOCK = "&rq->__lock"
# Sites of the series in a contending (holder) point: the steal itself, and
# raw_spin_rq_trylock(), its way in (the only other caller is RT/DL's
# double_lock_balance()).  See the module doc: lock_stat charges a trylock
# holder to the previous holder's site, so these can only show a holder
# that took the lock with raw_spin_rq_lock() (steal_from()'s wait path).
SERIES_SITES = ("steal_from", "steal_search", "newidle_steal", "raw_spin_rq_trylock")
STAT_FIELDS = ("con_bounces", "contentions", "waittime_min", "waittime_max", "waittime_total",
               "waittime_avg", "acq_bounces", "acquisitions", "holdtime_min", "holdtime_max",
               "holdtime_total", "holdtime_avg")
_COUNTS = {"con_bounces", "contentions", "acq_bounces", "acquisitions"}
_NUM = r"-?\d+(?:\.\d+)?"
_CLASS = re.compile(r"^\s*(?P<name>\S.*?)(?:-(?P<mode>[WR]))?:"
                    + "".join(rf"\s+({_NUM})" for _ in STAT_FIELDS) + r"\s*$")
_POINT = re.compile(r"^\s*(?P<name>\S.*?)\s+(?P<count>\d+)\s+\[<(?P<ip>[0-9a-fA-Fx]+)>\]\s+"
                    r"(?P<symbol>\S.*?)\s*$")
_SEPARATOR = re.compile(r"^\s*-+\s*$")
_DOTS = re.compile(r"^\.+\s*$")
WARNING = "*WARNING* lock debugging disabled"


class LockStatError(ParseError):
    pass


@dataclass(frozen=True)
class Stats:
    """One statistics line: counts, and times in microseconds."""
    con_bounces: int
    contentions: int
    waittime_min: float
    waittime_max: float
    waittime_total: float
    waittime_avg: float
    acq_bounces: int
    acquisitions: int
    holdtime_min: float
    holdtime_max: float
    holdtime_total: float
    holdtime_avg: float


@dataclass(frozen=True)
class Point:
    """A contention or contending point: how often, and the site (%pS)."""
    count: int
    ip: str
    symbol: str              # e.g. "raw_spin_rq_lock_nested+0x2c/0x80"

    @property
    def function(self) -> str:
        return self.symbol.split("+", 1)[0].split(" ", 1)[0]


@dataclass
class LockClass:
    name: str                                   # with its "/N" subclass and "#N" version
    stats: dict[str, Stats] = field(default_factory=dict)   # "" (exclusive), "W", "R"
    contention_points: list[Point] = field(default_factory=list)   # where waiters waited
    contending_points: list[Point] = field(default_factory=list)   # where the holder took it

    @property
    def total(self) -> Stats:
        """The class's lines added up (one line for a spinlock); min and max
        over the lines with a value, averages from the totals."""
        ss = list(self.stats.values())
        cont = sum(s.contentions for s in ss)
        acq = sum(s.acquisitions for s in ss)
        wt = sum(s.waittime_total for s in ss)
        ht = sum(s.holdtime_total for s in ss)
        return Stats(sum(s.con_bounces for s in ss), cont,
                     min((s.waittime_min for s in ss if s.contentions), default=0.0),
                     max((s.waittime_max for s in ss), default=0.0), wt,
                     wt / cont if cont else 0.0, sum(s.acq_bounces for s in ss), acq,
                     min((s.holdtime_min for s in ss if s.acquisitions), default=0.0),
                     max((s.holdtime_max for s in ss), default=0.0), ht,
                     ht / acq if acq else 0.0)


@dataclass
class LockStat:
    version: str
    debug_locks_off: bool                       # the warning line: counting had stopped
    classes: dict[str, LockClass]

    def get(self, name: str) -> LockClass:
        try:
            return self.classes[name]
        except KeyError:
            raise LockStatError(f"/proc/lock_stat has no class {name!r} "
                                f"({len(self.classes)} classes)") from None

    def family(self, name: str) -> list[LockClass]:
        """The class `name` and its subclasses `name/N` (those with any acquisition)."""
        return [c for n, c in self.classes.items() if n == name or n.startswith(name + "/")]


def parse(text: str) -> LockStat:
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("lock_stat version")), None)
    if start is None:
        raise LockStatError("no 'lock_stat version' line: not /proc/lock_stat")
    version = lines[start].split()[-1]
    if version != VERSION:
        raise LockStatError(f"lock_stat version {version}: this parser reads {VERSION}")
    off = False
    classes: dict[str, LockClass] = {}
    cur: LockClass | None = None
    seps = 0                      # separators seen in the current class's block
    for n, ln in enumerate(lines[start + 1:], start + 2):
        if ln.startswith(WARNING):
            off = True
            continue
        if not ln.strip() or _DOTS.match(ln) or "class name" in ln and cur is None:
            continue
        if _SEPARATOR.match(ln):
            if cur is not None:
                seps += 1
            continue
        m = _CLASS.match(ln)
        if m:
            name, mode = m.group("name"), m.group("mode") or ""
            nums = m.groups()[2:]
            vals: dict[str, Any] = {k: int(v) if k in _COUNTS else float(v)
                                    for k, v in zip(STAT_FIELDS, nums)}
            st = Stats(**vals)
            if cur is None or cur.name != name or seps or mode in cur.stats:
                # names are cut at 38 characters: two classes may print alike
                key = name if name not in classes else f"{name} ({len(classes)})"
                cur = classes[key] = LockClass(name)
                seps = 0
            cur.stats[mode] = st
            continue
        p = _POINT.match(ln)
        if p and cur is not None and seps in (1, 2) and p.group("name") == cur.name:
            point = Point(int(p.group("count")), p.group("ip"), p.group("symbol"))
            (cur.contention_points if seps == 1 else cur.contending_points).append(point)
            continue
        raise LockStatError(f"line {n}: not lock_stat {VERSION}: {ln.strip()[:120]!r}")
    return LockStat(version, off, classes)


def site_share(points: list[Point], functions: tuple[str, ...], total: int) -> dict:
    """The points' counts at a function of `functions` (count) and at all of
    them (recorded); share_pct: count per 100 recorded; recorded_pct:
    recorded per 100 of the class's `total` contentions.  The two counts are
    not taken at the same moment: a point counts a waiter when it starts to
    wait (lock_contended()), `contentions` one that got the lock after a
    nonzero measured wait (lock_acquired()), so recorded_pct can pass 100;
    below 100, the rest waited at sites beyond the class's first four."""
    hit = sum(p.count for p in points if p.function in functions)
    rec = sum(p.count for p in points)
    return {"count": hit, "recorded": rec,
            "share_pct": 100.0 * hit / rec if rec else None,
            "recorded_pct": 100.0 * rec / total if total else None}


def record(stat: LockStat, name: str = RQ_LOCK) -> dict:
    """One run's record of a lock (the guest's snapshot after the run, the
    counters cleared before it): the class `name` itself (Stats fields),
    its subclasses added in `nested`, every point by function, and the
    share of contentions whose holder site is the series'."""
    cls = stat.get(name)
    t = cls.total
    nested = [c.total for c in stat.family(name) if c.name != name]
    return {"class": name, **asdict(t),
            "nested": {"classes": [c.name for c in stat.family(name) if c.name != name],
                       "contentions": sum(s.contentions for s in nested),
                       "acquisitions": sum(s.acquisitions for s in nested),
                       "waittime_total": sum(s.waittime_total for s in nested),
                       "holdtime_total": sum(s.holdtime_total for s in nested)},
            "contention_points": [asdict(p) | {"function": p.function}
                                  for p in cls.contention_points],
            "contending_points": [asdict(p) | {"function": p.function}
                                  for p in cls.contending_points],
            "series_holder": site_share(cls.contending_points, SERIES_SITES, t.contentions),
            "series_waiter": site_share(cls.contention_points, SERIES_SITES, t.contentions)}


def window_seconds(text: str) -> float:
    """The guest's `lockstat_window` line, "T0 T1" (/proc/uptime, s): T1 - T0."""
    try:
        t0, t1 = (float(x) for x in text.split())
    except ValueError:
        raise LockStatError(f"not a lock_stat window 'T0 T1': {text.strip()[:80]!r}") from None
    if not t1 > t0:
        raise LockStatError(f"lock_stat window {t0} .. {t1} is empty")
    return t1 - t0
