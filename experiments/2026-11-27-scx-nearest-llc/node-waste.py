#!/usr/bin/env python3
"""Per cell: wasted LLC %, node % and node - LLC % (what only a pull
across LLCs could use) of each contender, mean +- 95% CI, and Welch p of
the last between the two (results/scx/nearest-llc/README.md)."""
import json, statistics as st
from scipy import stats
d = json.load(open("results/scx/nearest-llc/4llc.json"))
cells = {}
for m in d["measurements"]:
    w = m["waste"]["fraction"]
    cells.setdefault((m["workload"], m["level"], m["contender"]), []).append(
        (100 * w["llc"], 100 * w["node"], 100 * (w["node"] - w["llc"])))
def ci(xs):
    return st.mean(xs), stats.t.ppf(0.975, len(xs) - 1) * st.stdev(xs) / len(xs) ** 0.5
for (wl, lvl, c), v in sorted(cells.items()):
    cols = [ci([x[i] for x in v]) for i in range(3)]
    print(f"{wl:17} {lvl:>3} {c:20} n={len(v)} " + "  ".join(f"{a:5.2f} ± {b:4.2f}" for a, b in cols))
for wl, lvl in sorted({(k[0], k[1]) for k in cells}):
    a = [x[2] for x in cells[(wl, lvl, "scx_idlesteal")]]
    b = [x[2] for x in cells[(wl, lvl, "scx_idlesteal-node")]]
    print(wl, lvl, "cross-LLC-only waste, Welch p =", round(stats.ttest_ind(a, b, equal_var=False).pvalue, 4))
