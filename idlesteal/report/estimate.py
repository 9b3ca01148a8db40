"""How long a bench or suite will take, from the last measured durations.

Every results/<name>.json keeps the guest's total time (boot included) and
its runs; est_seconds() scales the last measured seconds per run of the same
entry (same preset and workload) to the runs planned now.  Without a record
it falls back to the mean seconds per run of every result of the preset,
then to FALLBACK_S_PER_RUN.  Sizes other than the recorded ones are not
scaled: the estimate is a plan, not a promise.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

FALLBACK_S_PER_RUN = 10.0
BOOT_S = 15.0


@dataclass(frozen=True)
class Record:
    name: str
    seconds: float      # guest time of the whole boot
    runs: int           # runs in that boot, warm-up included

    @property
    def per_run(self) -> float:
        return max(self.seconds - BOOT_S, 0.0) / max(self.runs, 1)


def record(path: Path) -> Record | None:
    """The duration record of one results/<name>.json, None if it has none."""
    try:
        data = json.loads(path.read_text())
        meta = data["meta"]
        seconds = float(meta["guest"]["total_seconds"])
        runs = len(data["runs"]) + int(meta.get("warmup", 0))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Record(path.stem, seconds, runs)


def est_seconds(name: str, preset: str, runs: int, outdir: Path) -> tuple[float, str]:
    """(seconds for one boot with `runs` runs, where the figure comes from)."""
    rec = record(outdir / f"{name}.json")
    if rec:
        return BOOT_S + rec.per_run * runs, f"last run of {name}"
    same = [r for r in (record(p) for p in sorted(outdir.glob(f"{preset}-*.json"))) if r]
    if same:
        per_run = sum(r.per_run for r in same) / len(same)
        return BOOT_S + per_run * runs, f"mean of {len(same)} {preset} result(s)"
    return BOOT_S + FALLBACK_S_PER_RUN * runs, "no record: default"


def fmt_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
