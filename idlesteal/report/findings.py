"""The bullets that sum the results up (results/README.md) and the README's
five of them: each one figure with its interval and its file, computed
from the same JSONs as the tables in report/tables.py."""
from __future__ import annotations

import math
import re
import statistics
from pathlib import Path

from ..measure import stats
from .tables import (METRIC, Table, TableError, fmt_p, kick_table, load_json, load_name,
                     lockstat_table, mean_beaten, paths_table)

_STRANDED = re.compile(r"(\d+) sched_setaffinity\(\) calls, (\d+) returned with the caller")


def _stranded(root: Path, rel: str) -> tuple[int, int]:
    try:
        text = (root / rel).read_text()
    except FileNotFoundError:
        raise TableError(f"{rel}: missing (a table is built from it)") from None
    found = [(int(a), int(b)) for a, b in _STRANDED.findall(text)]
    if not found:
        raise TableError(f"{rel}: no 'N sched_setaffinity() calls, M returned' line")
    return sum(a for a, _ in found), sum(b for _, b in found)


def fmt_ci(v: dict, unit: str = "%", digits: int = 0) -> str:
    return f"{v['value']:.{digits}f}{unit} [{v['low']:.{digits}f}, {v['high']:.{digits}f}]"


def findings(root: Path) -> Table:
    """results/README.md's bullets: one figure each, with its interval and
    its file, computed like the tables below them."""
    t = Table("findings", [], fenced=False)
    two = load_json(root, "results/v3/threeway-ni2/2x2x2.json")
    hb4 = next(r for r in two["rows"] if r["workload"] == "hackbench" and r["level"] == 4)
    rm = hb4["contenders"]["ni_steal"]["wasted_removed_pct"]
    dirty = (", its kernel built from a tree with uncommitted changes"
             if any(b["tree"].get("dirty") for b in two["meta"]["builds"].values()) else "")
    pp = paths_table(root)
    verdict = next(x for x in pp.lines if x.startswith("newidle - separate"))
    rows = load_json(root, "results/summary.json")["rows"]
    traced = [r for r in rows if r.get("waste_removed")]
    big = [r for r in traced if r["waste_a"] >= 1.0]
    adj = stats.holm([r["waste_removed"]["welch_p"] for r in traced])
    adj_t = stats.holm([r["p"] for r in rows])
    n_el = sum(1 for r in rows if r["p"] < 0.05)
    off = load_json(root, "results/v7/offcost-pipe.json")["ratio"]
    dev = load_json(root, "results/device/device-hackbench.json")["summary"][0]
    lock = load_json(root, "results/v7/lockstat/2x2x2-hackbench.json")["summary"][0]["lock_ratio"]
    scx = {p: load_json(root, f"results/scx/{p}.json") for p in ("1x1x2", "2x2x2", "2x4x2")}
    cells = [(p, r, r["contenders"]) for p, d in scx.items() for r in d["rows"]]
    tests = [(p, r, c[n], n) for p, r, c in cells for n in c if n != "eevdf"]
    adj_s = stats.holm([x[2]["p_vs_base"] for x in tests])
    own = [(x, a) for x, a in zip(tests, adj_s) if x[3] == "scx_idlesteal"]

    def worse(c: dict, r: dict) -> bool:
        return (c["ratio"] < 1) == (r["metric"] == "rps")
    lost = sum(1 for (_, r, c, _), a in own if a < 0.05 and worse(c, r))
    won = sum(1 for (_, r, c, _), a in own if a < 0.05 and not worse(c, r))
    (sp, sr, sc, _), _ = min(own, key=lambda x: x[0][2]["p_vs_base"] if worse(x[0][2], x[0][1])
                             else math.inf)
    fronts = [(p, r) for p, d in scx.items() for r in d["rows"] if r.get("beaten_by")]
    if not fronts:
        raise TableError("results/scx/: no cell with a front (beaten_by); rerun make bench-scx")
    off_front = [(p, r) for p, r in fronts if r["beaten_by"]["scx_idlesteal"]]
    beaters = sorted({b for _, r in off_front for b in r["beaten_by"]["scx_idlesteal"]})
    reps = "/".join(str(n) for n in sorted({f["n"] for _, r in fronts
                                            for f in r["contenders"].values()}))
    lock_verdict = next(x for x in lockstat_table(root).lines if "detected" in x or "told" in x)
    base_calls, base_bad = _stranded(root, "results/fixes/setaffinity-race/mainline-output.log")
    fix_calls, fix_bad = _stranded(root, "results/fixes/setaffinity-race/series-scx-output.log")
    kick = kick_table(root)
    kick_line = next(x for x in kick.lines if x.startswith("STEAL's removal"))
    t.lines += [
        f"* **STEAL removes wasted CPU time**: {fmt_ci(rm)} of the LLC-wasted time at 2x2x2 "
        f"hackbench 4 groups (Welch p {fmt_p(rm['welch_p'])}, "
        f"{hb4['contenders']['ni_steal']['n']} repetitions; the integrated pull of an unposted draft, the code the "
        f"series keeps{dirty}; `results/v3/threeway-ni2/`).",
        f"* **Across the suite** (3 repetitions): a median "
        f"{statistics.median(r['waste_removed']['value'] for r in big):.0f}% of it in the "
        f"{len(big)} cells where NO_STEAL wastes 1% or more; raw p < 0.05 in "
        f"{sum(1 for r in big if r['waste_removed']['welch_p'] < 0.05)}, "
        f"{sum(1 for a in adj if a < 0.05)} after Holm's correction over the "
        f"{len(traced)} traced cells (`results/summary.json`).",
        f"* **Elapsed time**: {n_el} of {len(rows)} suite "
        f"cells {'reaches' if n_el == 1 else 'reach'} raw p < 0.05, {sum(1 for a in adj_t if a < 0.05)} after Holm: no "
        "difference detected on these over-committed guests (`results/summary.txt` has "
        "each interval).",
        "* **One path, not two**: " + verdict[len("newidle - separate (points, 95% CI): "):].rstrip(".")
        + " between the integrated pull and the draft's separate one (`results/v3/threeway-ni2/`).",
        f"* **Nothing paid when off**: the series with STEAL off takes "
        f"{fmt_ci(off, 'x', 3)} the base kernel's time on `perf bench sched pipe` "
        "(`results/v7/offcost-pipe.json`).",
        f"* **Victims' lock**: STEAL/NO_STEAL contentions on rq->__lock "
        f"{fmt_ci(lock['contentions'], 'x', 2)} at 2x2x2 hackbench 1 group; "
        f"{lock_verdict[0].lower() + lock_verdict[1:].rstrip('.')} over the 9 tests "
        "(`results/v7/lockstat/`).",
        f"* **Without over-commit** (8 vCPUs on 16 host CPUs): STEAL removed "
        f"{fmt_ci(dev['waste_removed_pct'])} at hackbench 1 group (p "
        f"{fmt_p(dev['waste_removed_pct']['welch_p'])}), of a waste of only "
        f"{dev['A']['waste']['llc_pct']['mean']:.2f}% (`results/device/`).",
        f"* **The arrival kick** (not in the series): "
        f"{kick_line.split('The kick: ')[1].rstrip('.')} (`results/v7/kick/`).",
        f"* **scx_idlesteal** against EEVDF: slower in {lost} and faster in {won} of its "
        f"{len(own)} cells after Holm over the scx table; its clearest loss "
        f"{sc['ratio']:.2f}x [{sc['ratio_low']:.2f}, {sc['ratio_high']:.2f}] EEVDF's "
        f"{METRIC.get(sr['metric'], sr['metric'])} on {sp} "
        f"{load_name(sr['workload'], sr['level'])} (`results/scx/`).",
        f"* **scx_idlesteal's wasted time**: no other scheduler shown both better on the metric and less "
        f"wasteful (Welch p < 0.05 on each, {reps} repetitions) in "
        f"{len(fronts) - len(off_front)} of {len(fronts)} traced cells"
        + (f"; shown so in {len(off_front)}, by {' and '.join(beaters)}" if off_front else "")
        + "; by the means alone, untested, another is both in "
        f"{sum(1 for _, r in fronts if mean_beaten(r, 'scx_idlesteal'))} (`results/scx/`).",
        f"* **Patch 1** (sent on its own): {base_bad} of {base_calls:,} `sched_setaffinity()` "
        f"calls returned with the task outside its new mask on the base kernel, {fix_bad} of "
        f"{fix_calls:,} with the fix (`results/fixes/`).",
    ]
    t.files = ["results/v3/threeway-ni2/2x2x2.json", "results/summary.json",
               "results/v7/offcost-pipe.json", "results/v7/lockstat/2x2x2-hackbench.json",
               "results/device/device-hackbench.json", "results/scx/1x1x2.json",
               "results/fixes/setaffinity-race/"]
    return t


def headline(root: Path) -> Table:
    """The README's five lines: five of results/README.md's bullets."""
    f = findings(root)
    pick = ("STEAL removes", "Across the suite", "Elapsed time", "Nothing paid", "Patch 1")
    t = Table("headline", [x for x in f.lines if any(x.startswith(f"* **{p}") for p in pick)],
              f.files, fenced=False)
    if len(t.lines) != len(pick):
        raise TableError("headline: a findings bullet it picks is gone")
    return t


