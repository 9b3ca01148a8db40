"""KCSAN data-race reports from a guest console, sorted into those that touch
the series and the base kernel's own (Documentation/dev-tools/kcsan.rst):

    BUG: KCSAN: data-race in func_a / func_b

    write to 0xffff... of 4 bytes by task 487 on cpu 0:
     func_a+0x1d/0x30
     ...

    read to 0xffff... of 4 bytes by task 488 on cpu 6:
     func_b+0x10/0x20
     ...

    value changed: 0x... -> 0x...

A report touches the series when a frame of either access is a function the
series adds or changes (SERIES_FUNCTIONS).  Without debug info the frames
name the function an inlined helper ended up in, so the list includes the
callers the series changed (enqueue_task_fair() for update_cfs_overload(),
pick_task_fair() for try_steal(), ...): the sort errs towards blaming the
series, and every such report is listed for a human to read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..util import ParseError

# What the series adds (first group) and the existing functions it changes or
# calls its static helpers from (second group), as they appear in stacks.
SERIES_FUNCTIONS = frozenset({
    "update_cfs_overload", "idle_core_cpu", "cpus_share_smt", "can_steal_task",
    "__detach_task", "task_stuck_here", "steal_victim_stuck", "steal_from",
    "steal_smt_mask", "steal_interrupted", "steal_search", "steal_cost_update",
    "steal_gated", "try_steal", "fair_newidle", "init_sched_steal",
    "update_llc_shared", "alloc_llc_shared", "sched_overload_cpus_show",
    "steal_cpu_overloaded", "cfs_overload_pos", "alloc_cfs_overload", "free_cfs_overload",
    "enqueue_task_fair", "dequeue_entities", "dequeue_task_fair", "pick_task_fair",
    "pick_next_task_fair", "sched_balance_newidle", "detach_task", "select_idle_capacity",
    "cpu_attach_domain", "free_sched_domain_shared", "build_sched_domains", "print_cpu",
})
SERIES_PREFIXES = ("sparsemask_",)

# The one kind of KCSAN report a KCSAN run tolerates (vm.run_script(tolerate=)):
# the others (assertion failures) are errors like any other.
DATA_RACE = re.compile(r"BUG: KCSAN: data-race in ")

_TS = re.compile(r"^\[\s*\d+\.\d+\]\s?")
_TITLE = re.compile(r"BUG: KCSAN: data-race in (.+)$")
_ACCESS = re.compile(r"^(?:race at unknown origin, with )?(read|write)(?: \(marked\))?"
                     r"(?: \(reordered\))? to 0x[0-9a-f]+ of (\d+) bytes by "
                     r"(task \d+|interrupt) on cpu (\d+):$")
_FRAME = re.compile(r"^\s*([A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+")


class KcsanParseError(ParseError):
    pass


@dataclass
class Access:
    kind: str                       # read / write
    size: int
    who: str                        # "task N" or "interrupt"
    cpu: int
    frames: list[str] = field(default_factory=list)


@dataclass
class Report:
    title: str                      # "func_a / func_b"
    accesses: list[Access] = field(default_factory=list)

    def functions(self) -> set[str]:
        return {f for a in self.accesses for f in a.frames} | \
            {t.split("+")[0].strip() for t in self.title.split(" / ")}

    def touches_series(self) -> bool:
        return any(f in SERIES_FUNCTIONS or f.startswith(SERIES_PREFIXES)
                   for f in self.functions())


def parse(console: str) -> list[Report]:
    """Every data-race report in a console log, in order."""
    lines = [_TS.sub("", l.rstrip("\r")) for l in console.splitlines()]
    reports: list[Report] = []
    cur: Report | None = None
    acc: Access | None = None
    for line in lines:
        m = _TITLE.search(line)
        if m:
            cur, acc = Report(m.group(1).strip()), None
            reports.append(cur)
            continue
        if cur is None:
            continue
        if line.startswith("====") or line.startswith("Reported by Kernel Concurrency"):
            cur = acc = None
            continue
        m = _ACCESS.match(line.strip())
        if m:
            acc = Access(m.group(1), int(m.group(2)), m.group(3), int(m.group(4)))
            cur.accesses.append(acc)
            continue
        m = _FRAME.match(line)
        if m and acc is not None:
            acc.frames.append(m.group(1))
        elif not line.strip():
            acc = None
    for r in reports:
        if not r.accesses:
            raise KcsanParseError(f"KCSAN report {r.title!r} has no access lines")
    return reports


def summarize(reports: list[Report]) -> dict:
    """Counts and the distinct races (by title) on each side."""
    def distinct(rs: list[Report]) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in rs:
            out[r.title] = out.get(r.title, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))
    series = [r for r in reports if r.touches_series()]
    base = [r for r in reports if not r.touches_series()]
    return {"reports": len(reports), "series": distinct(series), "base": distinct(base)}
