"""Side by side's summary: the statistics, the table and the plot of one
preset's measurements (idlesteal/runs/sidebyside/ runs the boot and writes
what this renders; `idlesteal collect` re-renders a kept run through it).

summarize() gives, per workload and level, each contender's mean with its
95% interval, its ratio to the baseline (the first contender, `eevdf`) with
a delta-method interval and Welch's p against it, and the call: the
contender with the best mean is "best" only when Welch's test separates it
from every other one (p < 0.05), otherwise the contenders it cannot be told
apart from are listed with it.  Where every run is traced, front() says
which contenders are on the front of wasted time and the workload's metric:
those that no other contender beats on both (a better metric and less
wasted LLC time, each Welch p < 0.05).  A workload's other metrics (wakelat's
wakeup latency percentiles) are kept as each contender's medians over the
repetitions and printed under the cell.  tally() counts the calls per contender,
table() is the text (outdir/<preset>.txt) and plot() its picture.

The records it reads are here, below the run, so that this module imports
no run: Measurement (one measured run) and SideBySideError (also what the
run raises).  Of the run's Spec it reads only the preset, the repetitions,
the contenders' names and the entries' workloads and levels (SpecView).
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence

from ..measure import schedstat, stats
from ..measure import waste as wst
from ..measure.workload import Workload
from ..util import ParseError, pyplot
from . import ab


class SideBySideError(ParseError):
    """A side by side that cannot be read or summarized (the run raises it too)."""


@dataclass
class Measurement:
    """One measured run of one contender (runs/sidebyside/output.py's collect())."""
    tag: str
    rep: int
    contender: str
    workload: str
    level: int
    value: float
    metrics: dict[str, float]
    busy: float
    waste: dict | None = None      # waste.Waste.as_dict() of the run; None untraced
    # the run's STEAL / STEAL_KICK counters (schedstat.COUNTERS), summed over
    # CPUs; None where the guest output has no snapshots
    counters: dict[str, int] | None = None

    def to_json(self) -> dict:
        return asdict(self)


class Named(Protocol):
    @property
    def name(self) -> str: ...


class EntryView(Protocol):
    @property
    def wl(self) -> Workload: ...
    @property
    def levels(self) -> Sequence[int]: ...


class SpecView(Protocol):
    """What the summary reads of a side-by-side Spec (runs/sidebyside/spec.py)."""
    @property
    def preset(self) -> str: ...
    @property
    def reps(self) -> int: ...
    @property
    def contenders(self) -> Sequence[Named]: ...
    @property
    def entries(self) -> Sequence[EntryView]: ...


def summarize(spec: SpecView, ms: list[Measurement]) -> list[dict]:
    """One row per workload and level: every contender's figures and the call."""
    rows = []
    base = spec.contenders[0].name
    for e in spec.entries:
        wl = e.wl
        for lv in e.levels:
            cells = {c.name: [m for m in ms if m.contender == c.name
                              and m.workload == wl.name and m.level == lv]
                     for c in spec.contenders}
            vals = {name: [m.value for m in cell] for name, cell in cells.items()}
            if any(len(v) < 2 for v in vals.values()):
                raise SideBySideError(f"{wl.name} {lv}: fewer than 2 measurements for "
                                      + ", ".join(k for k, v in vals.items() if len(v) < 2))
            traced = {name: [m.waste for m in cell if m.waste is not None]
                      for name, cell in cells.items()}
            wasted = {name: [ab.WASTE_KEYS["llc_pct"][1](w) for w in t]
                      for name, t in traced.items()}
            figs: dict[str, dict[str, Any]] = {}
            for name, v in vals.items():
                s = stats.summarize(v)
                r = stats.ratio(v, vals[base])
                figs[name] = {"n": s.n, "mean": s.mean, "ci95": s.ci95,
                              "ratio": r.value, "ratio_low": r.low, "ratio_high": r.high,
                              "p_vs_base": stats.welch(v, vals[base]).p if name != base else None,
                              "busy": stats.mean([m.busy for m in cells[name]])}
                if len(wasted[name]) == len(v):
                    s = stats.summarize(wasted[name])
                    figs[name]["wasted_llc_pct"] = {"mean": s.mean, "ci95": s.ci95}
                    for key, (_, f) in ab.MIGRATION_KEYS.items():
                        s = stats.summarize([f(w) for w in traced[name]])
                        figs[name][key] = {"mean": s.mean, "ci95": s.ci95}
                    # how the wasted time began (docs/waste.md): the part no
                    # pull at idle entry can see is "arrival"
                    s = stats.summarize([100 * w["began_fraction"].get("arrival", 0.0)
                                         for w in traced[name]])
                    figs[name]["arrival_pct"] = {"mean": s.mean, "ci95": s.ci95}
                    if name != base:
                        figs[name]["wasted_removed_pct"] = ab.removed(wasted[base],
                                                                      wasted[name])
                other = other_metrics(cells[name], wl.metric)
                if other:
                    figs[name]["other"] = other
                cnt = [m.counters for m in cells[name] if m.counters is not None]
                if cnt and len(cnt) == len(v):
                    figs[name]["counters"] = {k: stats.mean([float(c[k]) for c in cnt])
                                              for k in schedstat.COUNTERS}
            pick = max if wl.higher_better else min
            best = pick(vals, key=lambda k: stats.mean(vals[k]))
            ties = [k for k in vals if k != best and not stats.welch(vals[best], vals[k]).significant]
            traced_all = all(len(wasted[k]) == len(vals[k]) for k in vals)
            rows.append({"workload": wl.name, "level": lv, "level_name": wl.level,
                         "metric": wl.metric, "unit": wl.unit,
                         "higher_better": wl.higher_better, "base": base,
                         "contenders": figs, "best": best, "ties": ties,
                         "call": best if not ties else None,
                         "beaten_by": front(vals, wasted, wl.higher_better)
                         if traced_all else None})
    return rows


def front(vals: dict[str, list[float]], wasted: dict[str, list[float]],
          higher_better: bool) -> dict[str, list[str]]:
    """Per contender, the others that beat it on both axes: a better mean
    of the workload's metric and a lower mean wasted LLC %, each separated
    by Welch's test (p < 0.05).  An empty list puts it on the front: no
    other contender was shown both faster and less wasteful."""
    def beats(a: str, b: str) -> bool:
        ma, mb = stats.mean(vals[a]), stats.mean(vals[b])
        better = ma > mb if higher_better else ma < mb
        return (better and stats.welch(vals[a], vals[b]).significant
                and stats.mean(wasted[a]) < stats.mean(wasted[b])
                and stats.welch(wasted[a], wasted[b]).significant)
    return {b: [a for a in vals if a != b and beats(a, b)] for b in vals}


def other_metrics(cell: list[Measurement], primary: str) -> dict[str, float]:
    """The medians of a cell's metrics other than the primary one, over its
    repetitions; a metric some repetition lacks is left out, not medianed
    over fewer."""
    keys = [k for k in dict.fromkeys(k for m in cell for k in m.metrics) if k != primary]
    return {k: statistics.median(m.metrics[k] for m in cell) for k in keys
            if all(k in m.metrics for m in cell)}


def tally(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Per contender: cells it is called best in, cells tied for best,
    cells significantly better / worse than the baseline, and of the traced
    cells (front_cells) those where it is on the wasted-time front."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        for name, f in r["contenders"].items():
            t = out.setdefault(name, {"best": 0, "tied_best": 0, "better": 0, "worse": 0,
                                      "cells": 0, "front": 0, "front_cells": 0})
            t["cells"] += 1
            if r.get("beaten_by") is not None:
                t["front_cells"] += 1
                t["front"] += not r["beaten_by"][name]
            if r["call"] == name:
                t["best"] += 1
            elif r["call"] is None and (name == r["best"] or name in r["ties"]):
                t["tied_best"] += 1
            p = f["p_vs_base"]
            if p is not None and p < 0.05:
                gain = f["ratio"] > 1 if r["higher_better"] else f["ratio"] < 1
                t["better" if gain else "worse"] += 1
    return out


def table(spec: SpecView, rows: list[dict], steals: dict[str, list[int]] | None = None) -> str:
    base = spec.contenders[0].name
    w = max(len(c.name) for c in spec.contenders)
    out = [f"{spec.preset}: {len(spec.contenders)} schedulers, {spec.reps} repetitions "
           f"each, rotated, one boot; ratio = mean / mean of {base}"]
    for r in rows:
        better = "higher" if r["higher_better"] else "lower"
        out.append("")
        out.append(f"{r['workload']} {r['level_name']} {r['level']}: {r['metric']} "
                   f"({r['unit']}, {better} is better)")
        waste = all("wasted_llc_pct" in f for f in r["contenders"].values())
        kicks = any(f.get("counters", {}).get("steal_kicks_sent", 0) or
                    f.get("counters", {}).get("steal_tasks", 0)
                    for f in r["contenders"].values())
        out.append(f"  {'scheduler':<{w}}  {'mean ± 95% CI':>20}  {'ratio [95% CI]':>22}  "
                   f"{'p':>6}  {'%busy':>5}"
                   + (f"  {'wasted LLC %':>14}  {'removes % of ' + base:>20}"
                      f"  {'arrival %':>9}"
                      f"  {'wait-mig/CPU-s':>14}  {'bounce/CPU-s':>12}" if waste else "")
                   + (f"  {'steals':>7}  {'kicks':>7}  {'pulled':>6}" if kicks else ""))
        for name, f in r["contenders"].items():
            p = "" if f["p_vs_base"] is None else f"{f['p_vs_base']:.3f}"
            ratio = "1" if name == base else \
                f"{f['ratio']:.3f} [{f['ratio_low']:.3f}, {f['ratio_high']:.3f}]"
            line = (f"  {name:<{w}}  {f['mean']:>10.4g} ± {f['ci95']:<8.3g} "
                    f"{ratio:>22}  {p:>6}  {f['busy']:5.1f}")
            if waste:
                wl_ = f["wasted_llc_pct"]
                rm = f.get("wasted_removed_pct")
                removes = "" if rm is None else \
                    f"{rm['value']:>6.1f} [{rm['low']:.0f}, {rm['high']:.0f}]" \
                    + (" *" if rm["welch_p"] < 0.05 else "")
                line += f"  {wl_['mean']:>6.2f} ± {wl_['ci95']:<5.2f}  {removes:<20}"
                arr = f.get("arrival_pct")
                line += f"  {arr['mean']:>9.2f}" if arr else f"  {'':>9}"
                if "bounces_per_cpu_s" in f:
                    line += (f"  {f['migrations_waiting_per_cpu_s']['mean']:>14.1f}"
                             f"  {f['bounces_per_cpu_s']['mean']:>12.2f}")
            if kicks:
                c = f.get("counters")
                line += (f"  {c['steal_tasks']:>7.1f}  {c['steal_kicks_sent']:>7.1f}  "
                         f"{c['steal_kick_tasks']:>6.1f}") if c else ""
            out.append(line)
        keys = list(dict.fromkeys(k for f in r["contenders"].values() for k in f.get("other", {})))
        if keys:
            out.append(f"  {'other metrics, medians':<{w + 24}}"
                       + "".join(f"  {k:>10}" for k in keys))
            for name, f in r["contenders"].items():
                o = f.get("other", {})
                out.append(f"  {name:<{w + 24}}"
                           + "".join(f"  {o[k]:>10.6g}" if k in o else f"  {'-':>10}"
                                     for k in keys))
        if r["call"]:
            out.append(f"  best: {r['call']} (Welch p < 0.05 against each other scheduler)")
        else:
            out.append(f"  best mean: {r['best']}; cannot be told apart from: "
                       + ", ".join(r["ties"]))
        if r.get("beaten_by") is not None:
            out.extend(front_lines(r["beaten_by"]))
    out.append("")
    fronts = any(r.get("beaten_by") is not None for r in rows)
    bw = f"better/worse than {base} (p < 0.05)"
    out.append(f"{'scheduler':<{w}}  cells  best  tied-best  {bw}"
               + ("  on the front" if fronts else ""))
    for name, t in tally(rows).items():
        vs = f"{t['better']}/{t['worse']}"
        out.append(f"{name:<{w}}  {t['cells']:>5}  {t['best']:>4}  {t['tied_best']:>9}  "
                   + (f"{vs:<{len(bw)}}  {t['front']}/{t['front_cells']}" if fronts else vs))
    if any("wasted_llc_pct" in f for r in rows for f in r["contenders"].values()):
        out.append("wasted LLC % = CPU time a CPU sat idle while a task allowed on it waited "
                   "on another CPU of its LLC (guest-time scheduler trace, docs/waste.md), "
                   f"mean ± 95% CI; removes = how much of {base}'s wasted time the scheduler "
                   "removes, [95% CI], * = Welch p < 0.05; wait-mig/CPU-s = migrations of "
                   "waiting tasks (queued, not running: pulls, steals, balance moves; not "
                   "wakeup placements) per CPU-second, bounce/CPU-s = such moves undone by "
                   f"the task's next one within {wst.BOUNCE_WINDOW_NS / 1e6:g} ms, means "
                   "(95% CIs in the JSON); arrival % = the part of the wasted time that "
                   "began on a CPU already idle when the task started to wait (of the "
                   "run's CPU time); front = the schedulers no other one beats on both the "
                   "workload's metric and wasted LLC % (Welch p < 0.05 on each), the others "
                   "with those that beat them")
    if any("counters" in f for r in rows for f in r["contenders"].values()):
        out.append("steals = tasks the kernel's pulls from the overload mask took, kicks = "
                   "STEAL_KICK IPIs sent, pulled = kicks that took a task; means per run, "
                   "summed over CPUs (shown where any is non-zero)")
    if steals:
        for name, v in steals.items():
            out.append(f"{name}: steals per load (its own counter): "
                       + " ".join(str(x) for x in v))
    return "\n".join(out) + "\n"


def front_lines(beaten_by: dict[str, list[str]]) -> list[str]:
    """A cell's front: who is on it, and who is off it, beaten by whom."""
    on = [k for k, v in beaten_by.items() if not v]
    out = ["  front (wasted x metric): " + ", ".join(on)]
    off = [f"{k} (by {', '.join(v)})" for k, v in beaten_by.items() if v]
    if off:
        out.append("  off the front: " + "; ".join(off))
    return out


def plot(spec: SpecView, rows: list[dict], path: Path, title: str = "") -> bool:
    """The table's picture (outdir/<preset>.png): per workload and level,
    each scheduler's mean and 95% interval divided by the baseline's mean
    (the baseline at 1 with its own interval).  False when matplotlib is
    missing (util.pyplot() said so, once)."""
    plt = pyplot()
    if plt is None:
        return False
    names = [c.name for c in spec.contenders]
    base = names[0]
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(rows) + 2.5), 4.5))
    for j, name in enumerate(names):
        xs, ys, es = [], [], []
        for i, r in enumerate(rows):
            b = r["contenders"][base]["mean"]
            f = r["contenders"][name]
            xs.append(i + (j - (len(names) - 1) / 2) * width)
            ys.append(f["mean"] / b)
            es.append(f["ci95"] / abs(b))
        ax.errorbar(xs, ys, yerr=es, fmt="o", capsize=3, markersize=4, label=name)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"{r['workload']}\n{r['level_name']} {r['level']}\n"
                        f"{r['metric']}, {'higher' if r['higher_better'] else 'lower'} better"
                        for r in rows], fontsize=7)
    ax.set_ylabel(f"mean / mean of {base} (95% CI)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=min(len(names), 6), loc="upper center",
              bbox_to_anchor=(0.5, -0.2), frameon=False)
    ax.set_title(title or f"{spec.preset}: {len(names)} schedulers, {spec.reps} repetitions, "
                 f"relative to {base}", fontsize=9)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return True
