"""The results tables that documents quote, built from the committed JSONs.

Every table of results/README.md and of the cover letter is one of the
functions below (report/generated.py lists them by name): it reads the
files it names (paths relative to the repository) and returns plain text.  `idlesteal tables` writes them into
the documents (report/generated.py) and `idlesteal tables --check`, run by
the unit tests, fails when a document's copy differs, so a figure cannot
drift from its data.

Significance: where a table tests several cells, the raw Welch p and the
Holm-adjusted p over the table's tests stand side by side, and `*` marks
only an adjusted p below 0.05.  Where nothing is shown, a table says "no
difference detected" with the interval's half-width (its resolution).
"""
from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from ..measure import stats
from ..util import HarnessError

COMMAND = "python3 -m idlesteal tables"


class TableError(HarnessError):
    """A results file a table needs is missing or has not the expected shape."""


@dataclass
class Table:
    name: str
    lines: list[str]
    files: list[str] = field(default_factory=list)
    fenced: bool = True        # Markdown: in a code block (False: the lines are Markdown)

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.lines) + "\n"


def load_json(root: Path, rel: str) -> Any:
    path = root / rel
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise TableError(f"{rel}: missing (a table is built from it)") from None
    except json.JSONDecodeError as e:
        raise TableError(f"{rel}: not JSON ({e})") from None


def fmt_p(p: float | None) -> str:
    if p is None or math.isnan(p):
        return "  -"
    if p < 0.001:
        return "<.001"
    return f"{p:.3f}".lstrip("0") if p < 1 else "1"


def _star(adj: float) -> str:
    return "*" if not math.isnan(adj) and adj < 0.05 else " "


SHORT = {"hackbench": "hackbench -g", "hackbench-thread": "hb -T -g",
         "hackbench-pipe": "hb -p -g", "hackbench-thread-pipe": "hb -T -p -g",
         "perf-messaging": "messaging -g", "perf-pipe": "perf pipe",
         "sysbench-threads": "sysb threads", "sysbench-mutex": "sysb mutex",
         "wakelat": "wakelat -m"}


def load_name(workload: str, level: int) -> str:
    return f"{SHORT.get(workload, workload)} {level}"


def _provenance(metas: list[dict]) -> str:
    """One line: the trees the kernels were built from (a dirty one named as
    such), the dates, the host CPUs."""
    heads: dict[str, bool] = {}
    for m in metas:
        for h, dirty in m.get("trees", []):
            heads[h[:7]] = heads.get(h[:7], False) or dirty
    trees = ", ".join(f"{h} (dirty: uncommitted changes on top)" if d else h
                      for h, d in sorted(heads.items()))
    built = f"Built from tree {trees}; run" if trees else "Run"
    dates = sorted({m["date"][:10] for m in metas if m.get("date")})
    hosts = sorted({m["host"] for m in metas if m.get("host")})
    span = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    return f"{built} {span} on {' / '.join(hosts)}."


def _host(m: dict) -> str:
    """The machine the guests ran on: the staging host's, unless the run
    was booted elsewhere (meta.guest.booted_on: its CPUs online)."""
    booted = str(m.get("guest", {}).get("booted_on") or "")
    cpus = re.search(r"(\d+) CPUs online", booted)
    if cpus:
        return f"a {cpus.group(1)}-CPU machine (booted there, staged here)"
    return f"{m['host']['cores']}-core {m['host']['cpu_model']}"


def _sbs_meta(d: dict) -> dict:
    m = d["meta"]
    trees = [(b["tree"]["head"], bool(b["tree"].get("dirty"))) for b in m["builds"].values()]
    return {"trees": trees, "date": m.get("date", ""),
            "host": _host(m)}


def _ab_meta(d: dict) -> dict:
    m = d["meta"]
    return {"trees": [(m["tree_head"], bool(m.get("tree_dirty")))], "date": m.get("date", ""),
            "host": _host(m)}


def _sbs_rows(root: Path, files: list[str], metas: list[dict],
              contender: str, figure: str) -> Iterator[tuple[dict, dict]]:
    """(file, row) of each side-by-side file's rows where @contender has
    @figure (the traced ones); each file's provenance goes to @metas."""
    for rel in files:
        d = load_json(root, rel)
        metas.append(_sbs_meta(d))
        for r in d["rows"]:
            if figure in r["contenders"][contender]:
                yield d, r


def _per_run(d: dict, r: dict, contender: str, figure: Callable[[dict], float]) -> list[float]:
    """@figure of each traced run of @contender in row @r (from its waste record)."""
    return [figure(m["waste"]) for m in d["measurements"]
            if m["contender"] == contender and m["workload"] == r["workload"]
            and m["level"] == r["level"] and m.get("waste")]


def _waste(w: dict) -> float:
    return 100 * w["fraction"]["llc"]


def _bounces(w: dict) -> float:
    return w["bounces_per_cpu_s"]


def _arrival(w: dict) -> float:
    return 100 * w["began_fraction"].get("arrival", 0.0)


def _footer(t: Table, metas: list[dict], notes: list[str]) -> None:
    t.lines += ["", *notes, _provenance(metas),
                f"Data: {', '.join(t.files)}.  Made by `{COMMAND}`."]


def paths_table(root: Path) -> Table:
    """The two pull paths of an unposted draft in one boot: base, the pull
    inside newidle balancing (the draft's NI_STEAL, the series' STEAL) and
    the separate path after a failed newidle pass (the draft's STEAL)."""
    t = Table("pull-paths", [], [f"results/v3/threeway-ni2/{p}.json" for p in ("2x2x2", "2x4x2")])
    rows, ps = [], []
    metas: list[dict] = []
    for d, r in _sbs_rows(root, t.files, metas, "base", "wasted_llc_pct"):
        c = r["contenders"]
        cols = []
        for name in ("ni_steal", "steal"):
            rm = c[name]["wasted_removed_pct"]
            cols.append((c[name]["wasted_llc_pct"], rm["value"], rm["welch_p"]))
            ps.append(rm["welch_p"])
        diff = stats.difference(_per_run(d, r, "ni_steal", _waste),
                                _per_run(d, r, "steal", _waste))
        rows.append((d["spec"]["preset"], load_name(r["workload"], r["level"]),
                     c["base"]["wasted_llc_pct"], cols, diff, c["base"]["n"]))
    adj = stats.holm(ps)
    t.lines.append(f"{'preset':6} {'load':15} {'base':>10}  {'STEAL in newidle':<26}"
                   f"  {'separate path':<26}  newidle - separate")
    i = 0
    for preset, load, base, cols, diff, _ in rows:
        cells = []
        for w, rm, p in cols:
            cells.append(f"{w['mean']:4.1f}+-{w['ci95']:3.1f} {rm:3.0f}% "
                         f"{fmt_p(p)}/{fmt_p(adj[i])}{_star(adj[i])}")
            i += 1
        t.lines.append(f"{preset:6} {load:15} {base['mean']:4.1f}+-{base['ci95']:3.1f}  "
                       f"{cells[0]:<26}  {cells[1]:<26}  {diff.value:+4.1f}+-{diff.half_width:3.1f}")
    told = [r for r in rows if r[4].p < 0.05]
    hw = [r[4].half_width for r in rows]
    times = [(d_["spec"]["preset"], r_, n) for d_ in (load_json(root, f) for f in t.files)
             for r_ in d_["rows"] for n in ("ni_steal", "steal")]
    low = min(times, key=lambda x: x[1]["contenders"][x[2]]["p_vs_base"])
    lc = low[1]["contenders"][low[2]]
    elapsed = (f"Elapsed time against base: raw p < 0.05 in "
               f"{sum(1 for _, r_, n in times if r_['contenders'][n]['p_vs_base'] < 0.05)} of "
               f"{len(times)} tests; the lowest p, {fmt_p(lc['p_vs_base'])}: {low[0]} "
               f"{load_name(low[1]['workload'], low[1]['level'])} ({low[1]['metric']}), "
               f"{'in newidle' if low[2] == 'ni_steal' else 'separate path'} "
               f"{lc['ratio']:.2f}x base [{lc['ratio_low']:.2f}, {lc['ratio_high']:.2f}].")
    verdict = (f"newidle - separate (points, 95% CI): no difference detected in any of the {len(rows)} "
               f"cells (half-widths {min(hw):.1f}-{max(hw):.1f} points)" if not told else
               f"newidle - separate: told apart (Welch p < 0.05) in {len(told)} of {len(rows)} cells")
    _footer(t, metas, [
        f"Wasted LLC time, % of CPU time, mean +- 95% CI over {rows[0][5]} repetitions;",
        "then the share of base's waste removed and Welch's p against base,",
        f"raw/Holm-adjusted over the table's {len(ps)} tests (* adjusted p < 0.05).",
        verdict + ".", elapsed])
    return t


def kick_table(root: Path) -> Table:
    """v7 (patch 8) and the arrival kick (patches/separate/) in one boot per
    preset: what STEAL removes from base, split by how the waste began, and
    whether the kick reduced the arrival part."""
    t = Table("kick", [], ["results/v7/kick/2x2x2.json", "results/v7/kick/2x4x2.json",
                           "results/v7/kick-4llc/4llc.json"])
    rows = []
    metas: list[dict] = []
    for d, r in _sbs_rows(root, t.files, metas, "base", "arrival_pct"):
        arr = stats.difference(_per_run(d, r, "kick", _arrival),
                               _per_run(d, r, "steal", _arrival))
        rows.append((d["spec"]["preset"], load_name(r["workload"], r["level"]),
                     r["contenders"], arr))
    p_steal = stats.holm([r[2]["steal"]["wasted_removed_pct"]["welch_p"] for r in rows])
    p_kick = stats.holm([r[3].p for r in rows])
    t.lines.append(f"{'preset':6} {'load':15} {'base':>5} {'STEAL':>5} {'removed':>7} "
                   f"{'p raw/Holm':>12}  {'idle-entry part':>15}  {'arrival: kick-STEAL':>21} "
                   f"{'p raw/Holm':>11}")
    for i, (preset, load, c, arr) in enumerate(rows):
        b, s = c["base"], c["steal"]
        rm = s["wasted_removed_pct"]
        ie_b = b["wasted_llc_pct"]["mean"] - b["arrival_pct"]["mean"]
        ie_s = s["wasted_llc_pct"]["mean"] - s["arrival_pct"]["mean"]
        ie = f"{ie_b:4.2f} > {ie_s:4.2f}"
        t.lines.append(f"{preset:6} {load:15} {b['wasted_llc_pct']['mean']:5.2f} "
                       f"{s['wasted_llc_pct']['mean']:5.2f} {rm['value']:6.0f}% "
                       f"{fmt_p(rm['welch_p']):>5}/{fmt_p(p_steal[i]):<5}{_star(p_steal[i])} "
                       f"{ie:>15}  {arr.value:+6.2f} +- {arr.half_width:4.2f}    "
                       f"{fmt_p(arr.p):>5}/{fmt_p(p_kick[i]):<5}{_star(p_kick[i])}")
    n_sig = sum(1 for p in p_steal if p < 0.05)
    n_raw = sum(1 for r in rows if r[2]["steal"]["wasted_removed_pct"]["welch_p"] < 0.05)
    kick_raw = sum(1 for r in rows if r[3].p < 0.05)
    kick_sig = sum(1 for p in p_kick if p < 0.05)
    reps = rows[0][2]["base"]["n"]
    el = sum(1 for r in rows if r[2]["steal"]["p_vs_base"] < 0.05)
    _footer(t, metas, [
        f"Wasted LLC time, % of CPU time, means of {reps} repetitions; removed: the share of",
        "base's removed by STEAL, Welch's p raw/Holm over the table's cells (* adjusted",
        "p < 0.05); idle-entry part: base > STEAL (waste that began when a CPU went idle",
        "while a task waited); arrival: the kick's arrival part less STEAL's, points +- 95% CI.",
        f"STEAL's removal: p < 0.05 in {n_raw} of {len(rows)} cells, {n_sig} after Holm.  "
        f"The kick: {'no difference detected' if not kick_raw else f'{kick_raw} raw, {kick_sig} Holm'}"
        f" in the arrival part.",
        f"Elapsed time (wakelat: requests/s), STEAL against base: raw p < 0.05 in {el} of "
        f"{len(rows)} cells.",
    ])
    return t


def offcost_table(root: Path) -> Table:
    """The series with STEAL off against the base kernel (`make offcost`)."""
    t = Table("offcost", [], ["results/v7/offcost-pipe.json", "results/v7/offcost-messaging.json"])
    metas = []
    t.lines.append(f"{'workload':34} {'series/base, means':>22}  {'medians (bootstrap)':>22}  "
                   f"{'Mann-Whitney p':>14}")
    for rel in t.files:
        d = load_json(root, rel)
        b = d["builds"]
        metas.append({"trees": [(v["tree"]["head"], bool(v["tree"].get("dirty"))) for v in b.values()],
                      "date": d["date"], "host": f"{d['host']['cores']}-core {d['host']['cpu_model']}"})
        r, m = d["ratio"], d["median_ratio"]
        cmd = " ".join(d["command"]).replace("perf bench sched ", "perf ")
        t.lines.append(f"{cmd:34} {r['value']:.3f} [{r['low']:.3f}, {r['high']:.3f}]  "
                       f"{m['value']:.3f} [{m['low']:.3f}, {m['high']:.3f}]  {fmt_p(m['p']):>14}")
    boots = len(d["values"]["mainline"])
    _footer(t, metas, [
        f"One boot per sample, alternating, {boots} boots a side, each the median of "
        f"{d['runs_per_boot']} runs;",
        "the ratio of means with its delta-method interval, the ratio of medians with a",
        "bootstrap interval.  A ratio below 1: the series took less."])
    return t


def hot_table(root: Path) -> Table:
    """STEAL_HOT on and off (patch 7): bounces and the waste removed."""
    t = Table("hot", [], ["results/v3/fourway/2x2x2.json", "results/v3/fourway/2x4x2.json"])
    rows, ps = [], []
    metas: list[dict] = []
    for d, r in _sbs_rows(root, t.files, metas, "steal", "bounces_per_cpu_s"):
        diff = stats.difference(_per_run(d, r, "steal-nohot", _bounces),
                                _per_run(d, r, "steal", _bounces))
        ps.append(diff.p)
        rows.append((d["spec"]["preset"], load_name(r["workload"], r["level"]),
                     r["contenders"], diff))
    adj = stats.holm(ps)
    t.lines.append(f"{'preset':6} {'load':15} {'bounces/CPU-s hot':>17} {'no-hot':>6} "
                   f"{'p raw/Holm':>11}  {'removed hot':>11} {'no-hot':>6}")
    for i, (preset, load, c, diff) in enumerate(rows):
        h, n = c["steal"], c["steal-nohot"]
        t.lines.append(f"{preset:6} {load:15} {h['bounces_per_cpu_s']['mean']:17.2f} "
                       f"{n['bounces_per_cpu_s']['mean']:6.2f} {fmt_p(diff.p):>5}/{fmt_p(adj[i]):<5}"
                       f"{_star(adj[i])} {h['wasted_removed_pct']['value']:10.0f}% "
                       f"{n['wasted_removed_pct']['value']:5.0f}%")
    told = sum(1 for p in adj if p < 0.05)
    _footer(t, metas, [
        f"Means of {rows[0][2]['steal']['n']} repetitions; a bounce: a task moved back to the "
        "CPU it was stolen",
        "from within 5 ms; p: Welch on bounces, raw/Holm over the table's cells.",
        "Bounces, no-hot against hot: " + ("no difference detected in any cell"
                                           if not told else f"told apart in {told} cells") + "."])
    return t


METRIC = {"time": "time", "rps": "rps", "usecs_op": "us/op"}

LOCK_KEYS = (("contentions", "contentions"), ("acquisitions", "acquisitions"),
             ("holdtime_total", "hold time"))


def lockstat_table(root: Path) -> Table:
    """rq->__lock under lock_stat, STEAL against NO_STEAL (patch 8's victims)."""
    t = Table("lockstat", [], ["results/v7/lockstat/2x2x2-hackbench.json",
                               "results/v7/lockstat/2x4x2-hackbench.json"])
    rows, ps, metas = [], [], []
    for rel in t.files:
        d = load_json(root, rel)
        metas.append(_ab_meta(d))
        for s in d["summary"]:
            rows.append((d["meta"]["preset"], s["level"], s["lock_ratio"]))
            ps += [s["lock_ratio"][k]["welch_p"] for k, _ in LOCK_KEYS]
    adj = stats.holm(ps)
    t.lines.append(f"{'preset':6} {'groups':>6}  " + "  ".join(f"{h:>24}" for _, h in LOCK_KEYS))
    hws = []
    for i, (preset, level, lr) in enumerate(rows):
        cells = []
        for j, (k, _) in enumerate(LOCK_KEYS):
            x = lr[k]
            hws.append((x["high"] - x["low"]) / 2)
            cells.append(f"{x['value']:.2f} [{x['low']:.2f}, {x['high']:.2f}]"
                         f"{_star(adj[3 * i + j])}")
        t.lines.append(f"{preset:6} {level:>6}  " + "  ".join(f"{c:>24}" for c in cells))
    told = sum(1 for p in adj if p < 0.05)
    _footer(t, metas, [
        "STEAL/NO_STEAL, ratio of means [95% CI] per hackbench run, the two sides alternated",
        "in one boot; * Holm-adjusted Welch p < 0.05 over the table's "
        f"{len(ps)} tests.",
        ("No difference detected" if not told else f"{told} told apart") +
        f" (interval half-widths {min(hws) * 100:.0f}-{max(hws) * 100:.0f}%)."])
    return t


def suite_table(root: Path) -> Table:
    """`make bench-suite`: per preset, the wasted time STEAL removes and the
    elapsed-time cells told apart (results/summary.json; every cell is in
    results/summary.txt)."""
    t = Table("suite", [], ["results/summary.json"])
    d = load_json(root, t.files[0])
    rows = d["rows"]
    traced = [r for r in rows if r.get("waste_removed")]
    adj_w = stats.holm([r["waste_removed"]["welch_p"] for r in traced])
    adj_t = stats.holm([r["p"] for r in rows])
    t.lines.append(f"{'preset':6} {'cells':>5} {'traced':>6} {'A >= 1%':>7} "
                   f"{'A wastes (median)':>17} {'B removes (median)':>18} "
                   f"{'removal p<.05 raw/Holm':>22} {'time p<.05 raw/Holm':>19}")
    presets = list(dict.fromkeys(r["preset"] for r in rows))
    for preset in presets + ["all"]:
        sel = [r for r in rows if preset in ("all", r["preset"])]
        tr = [(r, adj_w[i]) for i, r in enumerate(traced) if preset in ("all", r["preset"])]
        big = [(r, a) for r, a in tr if r["waste_a"] >= 1.0]
        tt = [adj_t[i] for i, r in enumerate(rows) if preset in ("all", r["preset"])]
        med_a = statistics.median(r["waste_a"] for r, _ in tr)
        med_rm = statistics.median(r["waste_removed"]["value"] for r, _ in big)
        t.lines.append(
            f"{preset:6} {len(sel):5} {len(tr):6} {len(big):7} {med_a:16.1f}% {med_rm:17.0f}% "
            f"{sum(1 for r, _ in big if r['waste_removed']['welch_p'] < 0.05):>17}/"
            f"{sum(1 for r, a in big if a < 0.05):<4} "
            f"{sum(1 for r in sel if r['p'] < 0.05):>14}/{sum(1 for a in tt if a < 0.05):<4}")
    metas = [{"trees": [], "date": r["date"], "host": f"{r['host_cores']}-core host"} for r in rows]
    reps = sorted({r["reps"] for r in rows})
    _footer(t, metas, [
        f"A = NO_STEAL, B = STEAL, {'/'.join(map(str, reps))} repetitions a side, interleaved; "
        "wastes: LLC-wasted",
        "CPU time, % of CPU time; removes: the share of A's waste B removes, median over the",
        "cells where A wastes 1% or more; p: Welch, raw/Holm over all the table's cells",
        "(removal over the traced ones, time over all).  Every cell: results/summary.txt.",
        f"Series {rows[0]['series_sha256'][:12]} (series_sha256 of the export)."])
    return t


def scx_table(root: Path) -> Table:
    """`make bench-scx`: each scheduler's time against EEVDF's, every cell of
    the three presets (results/scx/<preset>.txt has the rest)."""
    t = Table("scx", [], [f"results/scx/{p}.json" for p in ("1x1x2", "2x2x2", "2x4x2")])
    cells, metas = [], []
    scheds: list[str] = []
    for rel in t.files:
        d = load_json(root, rel)
        metas.append(_sbs_meta(d))
        for c in d["spec"]["contenders"]:
            if c["name"] != "eevdf" and c["name"] not in scheds:
                scheds.append(c["name"])
        for r in d["rows"]:
            cells.append((d["spec"]["preset"], r))
    flat = [(i, s) for i, (_, r) in enumerate(cells) for s in scheds if s in r["contenders"]]
    adj = dict(zip(flat, stats.holm([cells[i][1]["contenders"][s]["p_vs_base"] for i, s in flat])))
    fronts = [r["beaten_by"] for _, r in cells if r.get("beaten_by")]
    by_means = sum(1 for _, r in cells if r.get("beaten_by") and mean_beaten(r, "scx_idlesteal"))
    t.lines.append(f"{'preset':6} {'load':15} {'metric':6} " + " ".join(f"{s:>19}" for s in scheds)
                   + ("  scx_idlesteal on the front" if fronts else ""))
    for i, (preset, r) in enumerate(cells):
        out = []
        for s in scheds:
            c = r["contenders"].get(s)
            if c is None:
                out.append(f"{'-':>19}")
                continue
            a = adj[(i, s)]
            out.append(f"{c['ratio']:5.2f} [{c['ratio_low']:4.2f},{c['ratio_high']:5.2f}]"
                       f"{_star(a)}")
        beaten = (r.get("beaten_by") or {}).get("scx_idlesteal")
        front = "" if beaten is None else \
            "  " + ("yes" if not beaten else "no: " + ", ".join(beaten))
        t.lines.append(f"{preset:6} {load_name(r['workload'], r['level']):15} "
                       f"{METRIC.get(r['metric'], r['metric']):6} "
                       + " ".join(f"{x:>19}" for x in out) + front)
    raw = sum(1 for i, s in flat if cells[i][1]["contenders"][s]["p_vs_base"] < 0.05)
    held = sum(1 for a in adj.values() if a < 0.05)
    reps = sorted({c["n"] for _, r in cells for c in r["contenders"].values()})
    _footer(t, metas, [
        f"Each scheduler's mean over {'/'.join(map(str, reps))} repetitions / EEVDF's in the same "
        "boot [95% CI]; time and us/op:",
        "below 1 is faster, rps (wakelat's requests/s): above 1 is faster.  * Holm-adjusted "
        "Welch p < 0.05",
        f"over the table's {len(flat)} tests: {raw} reach raw p < 0.05, {held} after Holm."]
        + (["On the front: no other scheduler both better on the metric and wasting less LLC "
            "time (Welch p < 0.05 on each; with 4",
            "repetitions only large differences separate); no: those that are.  The waste by "
            "cause (arrival %) is in results/scx/<preset>.txt.",
            f"By the means alone, untested, some other scheduler is both better and less "
            f"wasteful than scx_idlesteal in {by_means} of the {len(fronts)} cells."]
           if fronts else []))
    return t


def mean_beaten(r: dict, subject: str) -> list[str]:
    """The contenders of side-by-side row @r whose mean metric is better than
    @subject's and whose mean wasted LLC % is lower, with no test: the front
    (sidebyside.front()) without the significance it asks for."""
    c = r["contenders"]
    me = c[subject]

    def better(f: dict) -> bool:
        return f["mean"] > me["mean"] if r["higher_better"] else f["mean"] < me["mean"]
    return [n for n, f in c.items() if n != subject and "wasted_llc_pct" in f
            and better(f) and f["wasted_llc_pct"]["mean"] < me["wasted_llc_pct"]["mean"]]


def device_table(root: Path) -> Table:
    """The runs booted without over-commit (16 host CPUs for 8 vCPUs)."""
    t = Table("device", [], ["results/device/device-hackbench.json",
                             "results/device/scx/2x2x2.json"])
    ab = load_json(root, t.files[0])
    sbs = load_json(root, t.files[1])
    t.lines.append("STEAL against NO_STEAL (hackbench):")
    t.lines.append(f"{'groups':>6} {'%speedup [95% CI]':>22} {'wasted % A > B':>15} "
                   f"{'B removes [95% CI]':>22} {'p':>5}")
    for s in ab["summary"]:
        sp, rm = s["speedup_pct"], s["waste_removed_pct"]
        t.lines.append(f"{s['level']:6} {sp['value']:6.1f} [{sp['low']:5.1f}, {sp['high']:5.1f}] "
                       f"{s['A']['waste']['llc_pct']['mean']:6.2f} > "
                       f"{s['B']['waste']['llc_pct']['mean']:4.2f} "
                       f"{rm['value']:6.1f} [{rm['low']:5.1f}, {rm['high']:5.1f}] "
                       f"{fmt_p(rm['welch_p']):>5}")
    t.lines += ["", "Side by side, time / EEVDF's [95% CI], Welch p:"]
    names = [c["name"] for c in sbs["spec"]["contenders"] if c["name"] != "eevdf"]
    t.lines.append(f"{'load':20} " + " ".join(f"{n:>26}" for n in names))
    for r in sbs["rows"]:
        out = []
        for n in names:
            c = r["contenders"][n]
            out.append(f"{c['ratio']:.2f} [{c['ratio_low']:.2f}, {c['ratio_high']:.2f}] "
                       f"p {fmt_p(c['p_vs_base'])}")
        t.lines.append(f"{load_name(r['workload'], r['level']):20} "
                       + " ".join(f"{x:>26}" for x in out))
    _footer(t, [_ab_meta(ab), _sbs_meta(sbs)], [
        f"{ab['meta']['reps']} and {sbs['spec']['reps']} repetitions, interleaved, one boot each; "
        "8 vCPUs on 16 host CPUs (no over-commit),",
        "still QEMU TCG.  %speedup > 0: STEAL faster."])
    return t


def dd_table(root: Path) -> Table:
    """STEAL with and without DELAY_DEQUEUE (the regression v5's author saw),
    from the same boots as the STEAL_HOT table: waste removed and elapsed
    time against base, each contender's Welch p raw/Holm over the table."""
    t = Table("delay-dequeue", [], ["results/v3/fourway/2x2x2.json",
                                    "results/v3/fourway/2x4x2.json"])
    rows, ps = [], []
    metas: list[dict] = []
    names = ("steal", "steal-nodd", "base-nodd")
    for d, r in _sbs_rows(root, t.files, metas, "steal", "wasted_removed_pct"):
        c = r["contenders"]
        rows.append((d["spec"]["preset"], load_name(r["workload"], r["level"]), c))
        ps += [c[n]["p_vs_base"] for n in names]
    adj = stats.holm(ps)
    t.lines.append(f"{'preset':6} {'load':15}   removed: {'STEAL':>5} {'+NO_DD':>6}   "
                   + "  ".join(f"{'time/base ' + n:>24}" for n in names))
    for i, (preset, load, c) in enumerate(rows):
        tt = [f"{c[n]['ratio']:.2f} p {fmt_p(c[n]['p_vs_base'])}/{fmt_p(adj[3 * i + j])}"
              f"{_star(adj[3 * i + j])}" for j, n in enumerate(names)]
        t.lines.append(f"{preset:6} {load:15}   {c['steal']['wasted_removed_pct']['value']:13.0f}% "
                       f"{c['steal-nodd']['wasted_removed_pct']['value']:5.0f}%   "
                       + "  ".join(f"{x:>24}" for x in tt))
    raw = sum(1 for p in ps if p < 0.05)
    _footer(t, metas, [
        f"Means of {rows[0][2]['steal']['n']} repetitions, contenders switched by sched features "
        "in one boot per preset;",
        "removed: the share of base's wasted LLC time; time/base: elapsed time (wakelat: "
        "requests/s), Welch p",
        f"raw/Holm over the table's {len(ps)} tests: {raw} raw p < 0.05, "
        f"{sum(1 for a in adj if a < 0.05)} after Holm."])
    return t


WHY_A = (("ni_avg_idle", "avg_idle short of the pass's cost"), ("ni_dice", "NI_RANDOM's dice"),
         ("ni_pass", "the LLC's pass runs"), ("ni_rd_idle", "no CPU overloaded"))
WHY_B = (("steals", "the pull takes a task"), ("steal_failed", "the pull fails"),
         ("steal_fail_locked", "  a victim's lock busy"), ("steal_fail_hot", "  a task cache hot"),
         ("steal_fail_unmovable", "  nothing movable"), ("steal_fail_empty", "  no victim left"),
         ("steal_gated", "the cost gate stops it"))


def why_table(root: Path) -> Table:
    """Why newidle balancing leaves a CPU idle, from the measurement patch's
    counters in the suite's per-cell files: medians over the cells where
    NO_STEAL wastes 1% or more."""
    summary = load_json(root, "results/summary.json")["rows"]
    cells = [r for r in summary if r.get("waste_removed") and r["waste_a"] >= 1.0]
    t = Table("why", [], ["results/summary.json", "results/<preset>-<workload>.json"])
    per: dict[str, list[float]] = {}
    loaded: dict[str, dict] = {}
    for c in cells:
        rel = f"results/{c['preset']}-{c['workload']}.json"
        d = loaded.setdefault(rel, load_json(root, rel))
        row = next(x for x in d["summary"] if x["level"] == c["level"])
        for side, keys in (("A", WHY_A), ("B", WHY_B)):
            split = row[side].get("split") or {}
            if not split.get("ni_calls"):
                continue
            for k, _ in keys:
                per.setdefault(side + k, []).append(100 * split.get(k, 0.0) / split["ni_calls"])

    def med(key: str) -> str:
        xs = per.get(key, [])
        if not xs:
            return "-"
        return f"{statistics.median(xs):4.1f} [{min(xs):.1f}, {max(xs):.1f}]"
    t.lines.append(f"{'without STEAL, per 100 newidle balances':56} "
                   "with STEAL, per 100 newidle balances")
    left = [f"  {h:34} {med('A' + k):>18}" for k, h in WHY_A]
    right = [f"  {h:26} {med('B' + k):>18}" for k, h in WHY_B]
    for i in range(max(len(left), len(right))):
        t.lines.append(f"{left[i] if i < len(left) else '':56} {right[i] if i < len(right) else ''}"
                       .rstrip())
    n = len(per.get("Bsteals", []))
    _footer(t, [{"trees": [], "date": c["date"], "host": f"{c['host_cores']}-core host"}
                for c in cells], [
        f"Medians [range] over the {n} suite cells where NO_STEAL wastes 1% or more of CPU time;",
        "the first reason at the LLC domain without STEAL, the pull's outcome with it.",
        "Counters of the measurement patch (patches/separate/, never posted)."])
    return t
