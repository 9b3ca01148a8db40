"""The latency table (`make bench-latency`): schbench's p99 wakeup latency
at a request sized for TCG, schbench's newidle storm and wakelat, STEAL
against NO_STEAL on 2x2x2, in boots with DELAY_DEQUEUE on and off, each
cell with the wasted LLC time STEAL removes.

Built from the per-cell A/B files the suite writes (results/latency/,
results/latency-nodd/), whose meta names the tree and the features."""
from __future__ import annotations

from pathlib import Path

from ..measure import stats
from .tables import Table, TableError, _ab_meta, _footer, _star, fmt_p, load_json

# (directory, DELAY_DEQUEUE, the workloads the Makefile's bench-latency runs there)
RUNS = (("results/latency", "on", ("schbench", "schbench-storm", "wakelat")),
        ("results/latency-nodd", "off", ("schbench", "schbench-storm")))
PRESET = "2x2x2"
LABEL = {"schbench": ("schbench -m", "p99 us"), "schbench-storm": ("storm -m", "req/s"),
         "wakelat": ("wakelat -m", "req/s")}


def files() -> list[str]:
    return [f"{d}/{PRESET}-{w}.json" for d, _, ws in RUNS for w in ws]


def _features(d: dict, side: str) -> list[str]:
    return [f for f in d["meta"].get(side, []) if f]


def latency_table(root: Path) -> Table:
    t = Table("latency", [], files())
    rows, metas = [], []
    for (dirname, dd, workloads) in RUNS:
        for w in workloads:
            rel = f"{dirname}/{PRESET}-{w}.json"
            d = load_json(root, rel)
            want = "NO_DELAY_DEQUEUE" in _features(d, "A")
            if want != (dd == "off") or "STEAL" not in _features(d, "B"):
                raise TableError(f"{rel}: sides {d['meta'].get('A')} / {d['meta'].get('B')} "
                                 f"are not NO_STEAL / STEAL with DELAY_DEQUEUE {dd}")
            metas.append(_ab_meta(d))
            for s in d["summary"]:
                if "speedup_pct" not in s or "waste_removed_pct" not in s:
                    raise TableError(f"{rel}: level {s['level']} lacks a side or its trace")
                rows.append((w, s, dd))
    adj_t = stats.holm([s["speedup_pct"]["welch_p"] for _, s, _ in rows])
    adj_w = stats.holm([s["waste_removed_pct"]["welch_p"] for _, s, _ in rows])
    t.lines.append(f"{'load':13} {'DD':3} {'unit':7} {'NO_STEAL':>9} {'STEAL':>9}  "
                   f"{'STEAL better by [95% CI]':>25} {'p raw/Holm':>11}   "
                   f"{'wasted A':>8} {'B':>5}  {'removed [95% CI]':>18} {'p raw/Holm':>11}")
    for i, (w, s, dd) in enumerate(rows):
        name, unit = LABEL.get(w, (w, ""))
        sp, rm = s["speedup_pct"], s["waste_removed_pct"]
        a, b = s["A"]["value"]["mean"], s["B"]["value"]["mean"]
        wa, wb = (s[x]["waste"]["llc_pct"]["mean"] for x in ("A", "B"))
        t.lines.append(
            f"{name + ' ' + str(s['level']):13} {dd:3} {unit:7} {a:9.0f} {b:9.0f}  "
            f"{sp['value']:+8.0f}% [{sp['low']:+5.0f}, {sp['high']:+5.0f}] "
            f"{fmt_p(sp['welch_p']):>5}/{fmt_p(adj_t[i]):<5}{_star(adj_t[i])}  "
            f"{wa:7.1f}% {wb:4.1f}%  {rm['value']:5.0f}% [{rm['low']:4.0f}, {rm['high']:4.0f}] "
            f"{fmt_p(rm['welch_p']):>5}/{fmt_p(adj_w[i]):<5}{_star(adj_w[i])}")
    n = sorted({s["A"]["value"]["n"] for _, s, _ in rows})
    told_t = sum(1 for a in adj_t if a < 0.05)
    told_w = sum(1 for a in adj_w if a < 0.05)
    _footer(t, metas, [
        f"A = NO_STEAL, B = STEAL, {'/'.join(map(str, n))} repetitions a side interleaved in "
        "one boot per line; DD: DELAY_DEQUEUE;",
        "STEAL better by: lower p99 latency or more requests/s, ratio of means; wasted: LLC-"
        "wasted CPU time, % of",
        "CPU time; removed: the share of A's B removes; p: Welch, raw/Holm over the table's "
        f"{len(rows)} cells per column (* Holm p < 0.05).",
        f"Latency or throughput told apart in {told_t} of {len(rows)} cells after Holm "
        f"(raw p < 0.05 in {sum(1 for _, s, _ in rows if s['speedup_pct']['welch_p'] < 0.05)}); "
        f"wasted time in {told_w} (raw {sum(1 for _, s, _ in rows if s['waste_removed_pct']['welch_p'] < 0.05)})."])
    return t
