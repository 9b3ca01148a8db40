"""KTAP results (Documentation/dev-tools/ktap.rst) from a kernel console log.

KUnit suites built into the kernel print KTAP at boot, interleaved with other
console lines and prefixed by printk timestamps.  This reads the suites and
their cases:

    KTAP version 1
    1..1
        KTAP version 1
        # Subtest: sched_sparsemask
        1..18
        ok 1 sparsemask_test_size_exact_multiple
        not ok 2 sparsemask_test_size_partial_chunk
    ok 1 sched_sparsemask

Only the two levels KUnit uses at boot (suite, case) are read; parameterised
sub-cases are folded into their case's own result line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..util import ParseError

_STAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
_RESULT = re.compile(r"^(?P<indent>\s*)(?P<not>not )?ok (?P<num>\d+) (?P<name>[^#]*?)\s*"
                     r"(?:#\s*(?P<directive>\S+).*)?$")
_SUBTEST = re.compile(r"^(?P<indent>\s*)# Subtest: (?P<name>\S+)")
_PLAN = re.compile(r"^(?P<indent>\s*)1\.\.(?P<n>\d+)\s*$")


class KtapError(ParseError):
    pass


@dataclass
class Case:
    name: str
    status: str  # "ok", "fail" or "skip"


@dataclass
class Suite:
    name: str
    planned: int | None = None
    cases: list[Case] = field(default_factory=list)
    status: str | None = None  # the suite's own result line; None if missing

    @property
    def failed(self) -> list[Case]:
        return [c for c in self.cases if c.status == "fail"]

    def problems(self) -> list[str]:
        out = [f"{self.name}: case {c.name} failed" for c in self.failed]
        if self.status is None:
            out.append(f"{self.name}: no result line (crashed or cut short?)")
        elif self.status == "fail" and not self.failed:
            out.append(f"{self.name}: suite reported failure")
        if self.planned is not None and len(self.cases) != self.planned:
            out.append(f"{self.name}: planned {self.planned} cases, saw {len(self.cases)}")
        return out


def _status(m: re.Match) -> str:
    if m.group("directive") and m.group("directive").upper() == "SKIP":
        return "skip"
    return "fail" if m.group("not") else "ok"


def parse(console: str) -> dict[str, Suite]:
    """Suites by name, in the order they appear."""
    suites: dict[str, Suite] = {}
    current: Suite | None = None
    for raw in console.replace("\r", "").splitlines():
        line = _STAMP.sub("", raw)
        m = _SUBTEST.match(line)
        if m:
            current = suites.setdefault(m.group("name"), Suite(m.group("name")))
            continue
        m = _PLAN.match(line)
        if m and current is not None and m.group("indent") and current.planned is None:
            current.planned = int(m.group("n"))
            continue
        m = _RESULT.match(line)
        if not m:
            continue
        name = m.group("name").strip()
        if m.group("indent"):
            if current is not None:
                current.cases.append(Case(name, _status(m)))
        elif name in suites:
            suites[name].status = _status(m)
            current = None
    return suites


def check(console: str, required: list[str]) -> dict[str, Suite]:
    """Parse and raise KtapError listing every problem with the required suites."""
    suites = parse(console)
    problems = []
    for name in required:
        if name not in suites:
            problems.append(f"{name}: suite did not run (not built in, or boot died first)")
        else:
            problems += suites[name].problems()
    if problems:
        raise KtapError("KUnit: " + "; ".join(problems))
    return suites
