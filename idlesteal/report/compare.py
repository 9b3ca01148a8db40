"""Two runs of the benchmark suite side by side: did the second reproduce the first?

Input: two results/summary.json files (idlesteal/runs/suite.py).  A file can also be
named as `REV:path` (e.g. `HEAD:results/summary.json`) and is then read with
`git show`, so a fresh `make bench` can be checked against the committed
figures it has just overwritten.

Per cell (preset, workload, level) three questions, from strict to lenient:
  * inside:     the new point estimate lies in the old 95% interval (what
                "reproduces within the stated spread" means for a reader of
                the README's tables);
  * consistent: the difference of the two estimates is within its own 95%
                interval, sqrt(h_old^2 + h_new^2) for half-widths h (both runs
                measured the same thing, allowing for the noise of each);
  * same call:  both significant in the same direction, or both not.
"""
from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..util import HarnessError

Key = tuple[str, str, int]


@dataclass
class Cell:
    key: Key
    old: dict
    new: dict

    @property
    def inside(self) -> bool:
        return self.old["low"] <= self.new["speedup"] <= self.old["high"]

    @property
    def diff(self) -> float:
        return self.new["speedup"] - self.old["speedup"]

    @property
    def diff_half_width(self) -> float:
        h_old = (self.old["high"] - self.old["low"]) / 2
        h_new = (self.new["high"] - self.new["low"]) / 2
        return math.hypot(h_old, h_new)

    @property
    def consistent(self) -> bool:
        return abs(self.diff) <= self.diff_half_width

    @staticmethod
    def _call(row: dict) -> str:
        if not row["significant"]:
            return "ns"
        return "+" if row["speedup"] > 0 else "-"

    @property
    def same_call(self) -> bool:
        return self._call(self.old) == self._call(self.new)


def read_text(spec: str, cwd: Path | None = None) -> str:
    """A file's text; `REV:path` that is not a file is read with git show."""
    p = Path(spec)
    if p.is_dir():
        p = p / "summary.json"
    if p.exists():
        return p.read_text()
    if ":" in spec:
        r = subprocess.run(["git", "show", spec], cwd=cwd, capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout
        raise HarnessError(f"git show {spec}: {r.stderr.strip()}")
    raise HarnessError(f"{spec}: no such file (a summary.json, a results directory, "
                       "or REV:path)")


def rows_by_key(text: str, where: str = "summary") -> dict[Key, dict]:
    try:
        data = json.loads(text)
        rows = data["rows"]
    except (ValueError, KeyError, TypeError) as e:
        raise HarnessError(f"{where}: not a suite summary.json ({e})") from None
    return {(r["preset"], r["workload"], int(r["level"])): r for r in rows}


def compare(old: dict[Key, dict], new: dict[Key, dict]) -> tuple[list[Cell], list[Key], list[Key]]:
    """Cells in both (in the old file's order), keys only in old, only in new."""
    cells = [Cell(k, old[k], new[k]) for k in old if k in new]
    return cells, [k for k in old if k not in new], [k for k in new if k not in old]


def _ci(r: dict) -> str:
    return f"{r['speedup']:+6.1f} [{r['low']:6.1f},{r['high']:6.1f}]{'*' if r['significant'] else ' '}"


def table(cells: list[Cell], only_old: list[Key], only_new: list[Key],
          old_name: str = "old", new_name: str = "new") -> str:
    out = [f"{'preset':<7} {'workload':<22} {'lvl':>4} {'%speedup ' + old_name:>25} "
           f"{'%speedup ' + new_name:>25} {'diff ± 95%':>14}  inside consistent same-call"]
    for c in cells:
        preset, workload, level = c.key
        out.append(f"{preset:<7} {workload:<22} {level:>4} {_ci(c.old):>25} {_ci(c.new):>25} "
                   f"{c.diff:+6.1f} ± {c.diff_half_width:5.1f}  "
                   f"{'yes' if c.inside else 'NO':>6} {'yes' if c.consistent else 'NO':>10} "
                   f"{'yes' if c.same_call else 'NO':>9}")
    n = len(cells)
    out.append("")
    if n:
        sig_old = [c for c in cells if c.old["significant"]]
        out.append(
            f"{n} cells: new estimate inside the {old_name} 95% interval in "
            f"{sum(c.inside for c in cells)}, consistent (difference within its 95% "
            f"interval) in {sum(c.consistent for c in cells)}, same call in "
            f"{sum(c.same_call for c in cells)}; significant in {old_name}: {len(sig_old)}, "
            f"of which significant the same way in {new_name}: "
            f"{sum(c.same_call for c in sig_old)}; significant only in {new_name}: "
            f"{sum(1 for c in cells if c.new['significant'] and not c.old['significant'])}")
    else:
        out.append("no cell in common")
    if only_old:
        out.append(f"only in {old_name}: " + ", ".join("/".join(map(str, k)) for k in only_old))
    if only_new:
        out.append(f"only in {new_name}: " + ", ".join("/".join(map(str, k)) for k in only_new))
    return "\n".join(out) + "\n"
