"""Suite levels written against the machine instead of as fixed numbers.

A level in a suite file is a number (groups, pairs, threads, messengers:
the workload's own unit) or a load in tasks relative to the machine:

    cpus        as many tasks as the machine has CPUs
    cpus*2      twice as many
    llc*0.5     half as many tasks as one last-level cache has CPUs

`llc` is the largest LLC's CPU count.  A relative level becomes the
workload's unit through the tasks one level starts (Workload.tasks: a
hackbench group is 40 tasks, a perf pipe pair 2, a wakelat messenger 5),
rounded to the nearest, at least 1; two words that land on the same
number run once.  A guest suite resolves them against the entry's preset,
`suite --host` against the machine it runs on, so one suite file scales
from an 8-CPU guest to a 128-CPU server.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..guest import topology
from ..measure.workload import Workload
from ..util import HarnessError

_WORD = re.compile(r"(cpus|llc)(?:\*([0-9]+(?:\.[0-9]*)?|\.[0-9]+))?")
FORMS = "a number >= 1, or cpus, llc, cpus*F or llc*F (F > 0: tasks per CPU)"


@dataclass(frozen=True)
class Machine:
    """What relative levels are counted against."""
    cpus: int
    llc: int       # CPUs of the largest last-level cache
    what: str      # "preset 2x2x2", "this machine"

    def describe(self) -> str:
        return f"{self.what}: {self.cpus} CPUs, LLC {self.llc}"


def of_preset(name: str) -> Machine:
    p = topology.get(name)
    return Machine(p.ncpus, max(len(g) for g in p.llc_groups()), f"preset {name}")


def of_groups(online: list[int], llcs: list[list[int]], what: str) -> Machine:
    return Machine(len(online), max((len(g) for g in llcs), default=len(online)), what)


def is_relative(word: str) -> bool:
    return _WORD.fullmatch(word) is not None


def check(words: list[str]) -> None:
    """Each word a level (HarnessError naming the first that is not)."""
    if not words:
        raise HarnessError(f"no levels; want {FORMS}")
    for w in words:
        m = _WORD.fullmatch(w)
        if m:
            if m.group(2) is not None and float(m.group(2)) <= 0:
                raise HarnessError(f"level {w!r}: the factor must be > 0")
            continue
        try:
            n = int(w)
        except ValueError:
            raise HarnessError(f"level {w!r}: want {FORMS}") from None
        if n < 1:
            raise HarnessError(f"level {w!r}: want {FORMS}")


def tasks_of(word: str, m: Machine) -> float:
    g = _WORD.fullmatch(word)
    assert g is not None, word
    return (m.cpus if g.group(1) == "cpus" else m.llc) * float(g.group(2) or 1)


def resolve(words: list[str], wl: Workload, m: Machine) -> list[int]:
    """The levels the words give on `m`, in order, each once."""
    check(words)
    out: list[int] = []
    for w in words:
        n = max(1, round(tasks_of(w, m) / wl.tasks)) if is_relative(w) else int(w)
        if n not in out:
            out.append(n)
    return out


def explain(words: list[str], wl: Workload, m: Machine) -> str:
    """'from cpus = 128, cpus*2 = 256 tasks at 40 tasks a level (this
    machine: 128 CPUs, LLC 16)' for the relative words, '' when every word
    is a number."""
    rel = [w for w in words if is_relative(w)]
    if not rel:
        return ""
    return (f"from {', '.join(f'{w} = {tasks_of(w, m):g}' for w in rel)} tasks at "
            f"{wl.tasks} task{'s' if wl.tasks > 1 else ''} a level ({m.describe()})")
