"""Turn bench measurements into the seeds' table, JSON and a PNG plot.

Table columns (per side, one row per load level, means over repetitions;
the primary metric and %busy also show the 95% confidence half-width):

    grps time %busy sched idle wake nidle steal %speedup

sched/idle/wake are /proc/schedstat deltas and steal the sched/debug steal_tasks
delta, averaged per CPU, as in the
seeds; nidle is newidle balances per CPU.  %speedup (side B only) is how much
better B is than A (time A / time B - 1 for times, B / A - 1 for
throughput), with its 95% interval and Welch's p-value; '*' marks p < 0.05.
A second table gives the workload's other metrics (wakelat's latency
percentiles), a third the cost of stealing beside newidle balancing, a
fourth (traced runs) the wasted CPU time of idlesteal/measure/waste/: % of the
run's CPU time a CPU sat idle while a task allowed on it waited on another
CPU of its LLC (node, machine), and how much of A's B removes; with
`bench --lock-stat`, a fifth the run queue lock's /proc/lock_stat (lock).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..measure import lockstat, stats, waste
from ..kernel import provenance
from ..measure.sample import BenchSpec, Measurement
from ..util import pyplot



def _by(ms: list[Measurement], side: str, level: int) -> list[Measurement]:
    return [m for m in ms if m.side == side and m.level == level]


SUMMARY_KEYS = ("value", "busy", "sched", "idle", "wake", "steal", "steal_fail", "steal_ns",
                "newidle_lb", "newidle_gained", "newidle_cost_ns", "cpu_ns")


def _cost(sel: list[Measurement]) -> dict:
    """Steal cost over a set of runs (sums, so rare attempts are not lost)."""
    ok = sum(m.steal for m in sel)
    fail = sum(m.steal_fail for m in sel)
    ns = sum(m.steal_ns for m in sel)
    cpu = sum(m.cpu_ns for m in sel)
    nic = [m.newidle_cost_ns for m in sel if m.newidle_cost_ns > 0]
    return {"attempts_per_cpu": (ok + fail) / len(sel) if sel else 0.0,
            "ns_per_attempt": ns / (ok + fail) if ok + fail else None,
            "ns_per_steal": ns / ok if ok else None,
            "newidle_cost_ns": sum(nic) / len(nic) if nic else None,
            "search_share_pct": 100.0 * ns / cpu if cpu else None}


def _stat(xs: list[float]) -> dict:
    s = stats.summarize(xs)
    return {"mean": s.mean, "stdev": s.stdev, "ci95": s.ci95, "n": s.n}


# The waste table's columns: key -> (heading, value of one run's Waste.as_dict()).
WASTE_KEYS: dict[str, tuple[str, Any]] = {
    "llc_pct": ("wasted LLC %", lambda w: 100 * w["fraction"]["llc"]),
    "node_pct": ("node %", lambda w: 100 * w["fraction"]["node"]),
    "machine_pct": ("mach %", lambda w: 100 * w["fraction"]["machine"]),
    "idle_entry_pct": ("@idle %", lambda w: 100 * w["began_fraction"]["idle_entry"]),
    "idle_pct": ("idle %", lambda w: 100 * w["idle_total"] / w["cpu_time"]),
    "run_delay_pct": ("delay %", lambda w: 100 * w["run_delay"] / w["cpu_time"]),
    "episodes_per_cpu_s": ("ep/CPU-s", lambda w: w["episodes"] / w["cpu_time"]),
    "p50_us": ("p50 us", lambda w: w["percentiles_us"]["p50"]),
    "p99_us": ("p99 us", lambda w: w["percentiles_us"]["p99"]),
}
# The migration lines under it: key -> (heading, value of one run's
# Waste.as_dict()); counts per CPU-second of the run's window.
MIGRATION_KEYS: dict[str, tuple[str, Any]] = {
    "migrations_waiting_per_cpu_s": ("migrations of waiting tasks /CPU-s",
                                     lambda w: w["migrations_waiting"] / w["cpu_time"]),
    "bounces_per_cpu_s": ("bounces /CPU-s", lambda w: w["bounces"] / w["cpu_time"]),
    "migrations_per_cpu_s": ("all migrations /CPU-s",
                             lambda w: w["migrations"] / w["cpu_time"]),
}


def _waste(sel: list[Measurement]) -> dict | None:
    """Per WASTE_KEYS, mean and interval over the runs, when all are traced."""
    ws = [m.waste for m in sel]
    if not ws or any(w is None for w in ws):
        return None
    out: dict[str, Any] = {k: _stat([f(w) for w in ws])
                           for k, (_, f) in {**WASTE_KEYS, **MIGRATION_KEYS}.items()}
    out["inconsistencies"] = sum(int(w["inconsistencies"]) for w in ws if w is not None)
    return out


# The lock table's columns (bench --lock-stat): key -> (heading, value of one
# run's bench record: lockstat.record() and the window's "seconds").  Times in us.
LOCK_KEYS: dict[str, tuple[str, Any]] = {
    "contentions": ("contentions", lambda r: r["contentions"]),
    "contentions_per_s": ("cont/s", lambda r: r["contentions"] / r["seconds"]),
    "waittime_total": ("wait us", lambda r: r["waittime_total"]),
    "acquisitions": ("acquisitions", lambda r: r["acquisitions"]),
    "holdtime_total": ("hold us", lambda r: r["holdtime_total"]),
    "holdtime_max": ("hold max us", lambda r: r["holdtime_max"]),
    "nested_contentions": ("/1 cont", lambda r: r["nested"]["contentions"]),
    "steal_hold_bound_pct": ("search/hold %", lambda r: 100 * r["steal_search_us"]
                             / r["holdtime_total"] if r["holdtime_total"] else 0.0),
}


def _lock(sel: list[Measurement]) -> dict | None:
    """Per LOCK_KEYS, mean and interval over the runs, when all have lock_stat;
    the points' counts pooled by function, and the series' holder share."""
    recs = [m.lock_stat for m in sel if m.lock_stat is not None]
    if not recs or len(recs) < len(sel):
        return None
    out: dict[str, Any] = {k: _stat([f(r) for r in recs]) for k, (_, f) in LOCK_KEYS.items()}
    for kind in ("contention_points", "contending_points"):
        by: dict[str, int] = {}
        for r in recs:
            for p in r[kind]:
                by[p["function"]] = by.get(p["function"], 0) + p["count"]
        out[kind] = dict(sorted(by.items(), key=lambda kv: -kv[1]))
    total = sum(r["contentions"] for r in recs)
    held = sum(r["series_holder"]["count"] for r in recs)
    rec = sum(r["series_holder"]["recorded"] for r in recs)
    out["series_holder"] = {"count": held, "recorded": rec, "contentions": total,
                            "share_pct": 100.0 * held / rec if rec else None,
                            "recorded_pct": 100.0 * rec / total if total else None}
    return out


def removed(a: list[float], b: list[float]) -> dict | None:
    """How much of A's wasted time B removes: (1 - mean B / mean A) x 100,
    with the ratio's 95% interval; None when A wastes nothing."""
    if not a or not b or stats.mean(a) <= 0:
        return None
    r = stats.ratio(b, a)
    return {"value": (1 - r.value) * 100, "low": (1 - r.high) * 100,
            "high": (1 - r.low) * 100, "welch_p": stats.welch(a, b).p}


def summarize(spec: BenchSpec, ms: list[Measurement]) -> list[dict]:
    w = spec.wl
    rows = []
    for g in spec.levels:
        row: dict = {"level": g}
        for side in ("A", "B"):
            sel = _by(ms, side, g)
            if not sel:
                continue
            entry: dict = {}
            for key in SUMMARY_KEYS:
                s = stats.summarize([getattr(m, key) for m in sel])
                entry[key] = {"mean": s.mean, "stdev": s.stdev, "ci95": s.ci95, "n": s.n}
            for key in sel[0].metrics:
                if key != w.metric:
                    s = stats.summarize([m.metrics[key] for m in sel])
                    entry[key] = {"mean": s.mean, "stdev": s.stdev, "ci95": s.ci95, "n": s.n}
            entry["cost"] = _cost(sel)
            wst = _waste(sel)
            if wst is not None:
                entry["waste"] = wst
            lk = _lock(sel)
            if lk is not None:
                entry["lock_stat"] = lk
            if all(m.split is not None for m in sel):
                entry["split"] = {k: stats.mean([m.split[k] for m in sel if m.split])
                                  for k in sel[0].split or {}}
            row[side] = entry
        a = [m.value for m in _by(ms, "A", g)]
        b = [m.value for m in _by(ms, "B", g)]
        if a and b:
            # speedup > 0 means B is better: less time, or more throughput.
            r = stats.ratio(b, a) if w.higher_better else stats.ratio(a, b)
            p = stats.welch(a, b).p
            row["speedup_pct"] = {"value": (r.value - 1) * 100, "low": (r.low - 1) * 100,
                                  "high": (r.high - 1) * 100, "welch_p": p,
                                  "significant": bool(p < 0.05)}
        wa, wb = ([WASTE_KEYS["llc_pct"][1](m.waste) for m in _by(ms, side, g)
                   if m.waste is not None] for side in ("A", "B"))
        rm = removed(wa, wb) if len(wa) == len(_by(ms, "A", g)) and \
            len(wb) == len(_by(ms, "B", g)) else None
        if rm is not None:
            row["waste_removed_pct"] = rm
        lk = lock_ratios(_by(ms, "A", g), _by(ms, "B", g))
        if lk:
            row["lock_ratio"] = lk
        rows.append(row)
    return rows


def lock_ratios(a: list[Measurement], b: list[Measurement]) -> dict:
    """B / A of the lock's contentions, wait and hold time per run, with the
    ratio's 95% interval and Welch's p; {} unless every run has lock_stat."""
    if not a or not b or any(m.lock_stat is None for m in a + b):
        return {}
    out = {}
    for key in ("contentions", "waittime_total", "acquisitions", "holdtime_total"):
        xa = [float(m.lock_stat[key]) for m in a if m.lock_stat]
        xb = [float(m.lock_stat[key]) for m in b if m.lock_stat]
        if stats.mean(xa) > 0:
            r = stats.ratio(xb, xa)
            out[key] = {"value": r.value, "low": r.low, "high": r.high,
                        "welch_p": stats.welch(xa, xb).p}
    return out


def _num(x: float) -> str:
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}"


def _us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1000:.1f}"


def table(spec: BenchSpec, rows: list[dict]) -> str:
    w = spec.wl
    out = []
    lvl = {"groups": "grps", "threads": "thr", "messengers": "msgr"}.get(w.level, w.level[:5])
    head0 = f"{lvl:>5} {w.metric + ' (' + w.unit + ')':>19} {'%busy':>13} {'sched':>7} " \
            f"{'idle':>7} {'wake':>7} {'nidle':>6} {'steal':>6}"
    for side in ("A", "B"):
        s = spec.side(side)
        out.append(f"{side}: {s.name}")
        out.append(head0 + ("  %speedup [95% CI]" if side == "B" else ""))
        for row in rows:
            e = row.get(side)
            if not e:
                continue
            v = f"{e['value']['mean']:.3f} ± {e['value']['ci95']:.3f}" if e['value']['mean'] < 1000 \
                else f"{e['value']['mean']:.0f} ± {e['value']['ci95']:.0f}"
            b = f"{e['busy']['mean']:.1f} ± {e['busy']['ci95']:.1f}"
            line = (f"{row['level']:>5} {v:>19} {b:>13}"
                    f" {_num(e['sched']['mean']):>7} {_num(e['idle']['mean']):>7}"
                    f" {_num(e['wake']['mean']):>7} {_num(e['newidle_lb']['mean']):>6}"
                    f" {_num(e['steal']['mean']):>6}")
            if side == "B" and "speedup_pct" in row:
                sp = row["speedup_pct"]
                star = " *" if sp["significant"] else ""
                line += f"  {sp['value']:.1f} [{sp['low']:.1f}, {sp['high']:.1f}]{star}"
            out.append(line)
        out.append("")
    extra = [k for k in (rows[0].get("A") or {})
             if k not in SUMMARY_KEYS and k not in ("cost", "waste", "split", "lock_stat")] \
        if rows else []
    if extra:
        out.append(f"{lvl:>5} side " + " ".join(f"{k:>16}" for k in extra))
        for row in rows:
            for side in ("A", "B"):
                e = row.get(side)
                if e:
                    out.append(f"{row['level']:>5} {side:>4} " + " ".join(
                        f"{e[k]['mean']:>8.0f} ± {e[k]['ci95']:<5.0f}" for k in extra))
        out.append("")
    out.append(f"{'cost':>5} side {'tries/CPU':>9} {'us/try':>7} {'us/steal':>8} "
               f"{'newidle us':>10} {'search %CPU':>11}")
    for row in rows:
        for side in ("A", "B"):
            c = (row.get(side) or {}).get("cost")
            if c:
                share = "-" if c["search_share_pct"] is None else f"{c['search_share_pct']:.3f}"
                out.append(f"{row['level']:>5} {side:>4} {c['attempts_per_cpu']:>9.1f} "
                           f"{_us(c['ns_per_attempt']):>7} {_us(c['ns_per_steal']):>8} "
                           f"{_us(c['newidle_cost_ns']):>10} {share:>11}")
    out.append("")
    out += waste_table(rows, lvl)
    out += lock_table(rows, lvl)
    out += split_table(rows)
    better = "higher" if w.higher_better else "lower"
    out.append(f"{w.metric} ({w.unit}, {better} is better; {w.name}'s own), mean ± 95% CI "
               f"over {spec.reps} rep(s); sched/idle/wake/steal: schedstat deltas per CPU, "
               "nidle = newidle balances per CPU; %speedup = B better than A by, [95% CI], "
               "* = Welch p < 0.05; cost: steal attempts per CPU and run, mean time per "
               "attempt and per successful steal (sched/debug steal_search_ns), newidle = newidle "
               "balance's own cost estimate (debugfs max_newidle_lb_cost summed over domains, "
               "a decaying max), search %CPU = steal_search_ns / CPU time")
    return "\n".join(out) + "\n"


def _ci(x: float) -> str:
    return "nan" if x != x else f"{x:.2f}"


def waste_table(rows: list[dict], lvl: str) -> list[str]:
    """The wasted-CPU-time lines (none when no run was traced)."""
    if not any("waste" in (row.get(side) or {}) for row in rows for side in ("A", "B")):
        return []
    heads = [h for h, _ in WASTE_KEYS.values()]
    out = [f"{'waste':>5} side {heads[0]:>15} " + " ".join(f"{h:>8}" for h in heads[1:])]
    for row in rows:
        for side in ("A", "B"):
            e = (row.get(side) or {}).get("waste")
            if e is None:
                continue
            first = e["llc_pct"]
            out.append(f"{row['level']:>5} {side:>4} "
                       f"{first['mean']:>7.2f} ± {_ci(first['ci95']):<5} " + " ".join(
                           f"{e[k]['mean']:>8.2f}" for k in list(WASTE_KEYS)[1:]))
        rm = row.get("waste_removed_pct")
        if rm is not None:
            star = " *" if rm["welch_p"] < 0.05 else ""
            out.append(f"{'':>5}    B removes {rm['value']:.1f}% [{_ci(rm['low'])}, "
                       f"{_ci(rm['high'])}] of A's LLC-wasted time{star}")
    out += migration_lines(rows)
    bad = sum(e["waste"]["inconsistencies"] for row in rows for side in ("A", "B")
              for e in [row.get(side) or {}] if "waste" in e)
    out.append("waste: guest-time scheduler trace of each run (idlesteal/measure/waste/, "
               "docs/waste.md); wasted LLC % = CPU time a CPU sat idle while a task allowed "
               "on it waited on another CPU of its LLC, mean ± 95% CI (node %, mach %: "
               "the same for the NUMA node / machine); @idle % = the part that began when "
               "the CPU went idle with a task already waiting; idle %, delay % = run delay "
               "(time tasks waited) per CPU time; ep/CPU-s = wasted episodes per CPU-second, "
               "p50/p99 their lengths; * = Welch p < 0.05; migrations: sched_migrate_task "
               "of tasks other than per-CPU kthreads, of waiting tasks = the task was "
               "queued, not running (a pull, steal or balance move, not a wakeup placement), "
               "bounces = such a move X -> Y undone by the task's next move, Y -> X, also "
               f"while waiting, within {waste.BOUNCE_WINDOW_NS / 1e6:g} ms; mean ± 95% CI"
               + (f"; {bad} trace events contradicted the model" if bad else ""))
    out.append("")
    return out


def lock_table(rows: list[dict], lvl: str) -> list[str]:
    """The run queue lock's lines (bench --lock-stat; none without it)."""
    if not any("lock_stat" in (row.get(side) or {}) for row in rows for side in ("A", "B")):
        return []
    heads = [h for h, _ in LOCK_KEYS.values()]
    out = [f"{'lock':>5} side {heads[0]:>17} " + " ".join(f"{h:>12}" for h in heads[1:])
           + f" {'series holder %':>15}"]
    for row in rows:
        for side in ("A", "B"):
            e = (row.get(side) or {}).get("lock_stat")
            if e is None:
                continue
            first, sh = e["contentions"], e["series_holder"]
            share = "-" if sh["share_pct"] is None else \
                f"{sh['share_pct']:.1f} of {sh['recorded_pct']:.0f}"
            out.append(f"{row['level']:>5} {side:>4} {_num(first['mean']):>8} ± "
                       f"{_ci(first['ci95']):<6} " + " ".join(
                           f"{_num(e[k]['mean']):>12}" for k in list(LOCK_KEYS)[1:])
                       + f" {share:>15}")
        for key, r in (row.get("lock_ratio") or {}).items():
            star = " *" if r["welch_p"] < 0.05 else ""
            out.append(f"{'':>5}    B/A {LOCK_KEYS[key][0] if key in LOCK_KEYS else key}: "
                       f"{r['value']:.2f} [{_ci(r['low'])}, {_ci(r['high'])}]{star}")
    for side in ("A", "B"):
        pooled: dict[str, dict[str, int]] = {"contention_points": {}, "contending_points": {}}
        for row in rows:
            e = (row.get(side) or {}).get("lock_stat") or {}
            for kind in pooled:
                for fn, n in e.get(kind, {}).items():
                    pooled[kind][fn] = pooled[kind].get(fn, 0) + n
        if any(pooled.values()):
            out.append(f"{'':>5} {side:>4} waiters at: " + ", ".join(
                f"{fn} {n}" for fn, n in pooled["contention_points"].items())
                + "; holders from: " + ", ".join(
                f"{fn} {n}" for fn, n in pooled["contending_points"].items()))
    out.append("lock: /proc/lock_stat's &rq->__lock class (CONFIG_LOCK_STAT, "
               "idlesteal/measure/lockstat.py), cleared before each run and read after it; "
               "contentions per run, mean ± 95% CI, and per second of the run (guest uptime); "
               "wait and hold: "
               "total us per run, hold max: longest hold; /1 cont: the nested subclass "
               "(double_rq_lock); search/hold %: the series' steal searches (sched/debug "
               "steal_search_ns, all CPUs) per 100 of the hold time, a bound on what "
               "steal_from()'s holds add (it holds a victim only inside a search); series holder %: of the contentions counted at the "
               "recorded holder sites (lock_stat's contending points, 4 per class), those at "
               + ", ".join(lockstat.SERIES_SITES) + ", 'of' the recorded ones per 100 "
               "contentions (lockstat.site_share()); B/A: ratio of the means, "
               "[95% CI], * = Welch p < 0.05; waiters at / holders from: the recorded points' "
               "contentions by function, pooled.  lockdep's own work inflates every time, and "
               "TCG more: compare the sides, not the absolute times.  lock_stat charges a "
               "trylock holder (steal_from()) to the previous holder's site")
    out.append("")
    return out


def migration_lines(rows: list[dict]) -> list[str]:
    """The migration rows of the waste block: mean ± 95% CI per side and level."""
    keys = [k for k in MIGRATION_KEYS
            if any(k in ((row.get(side) or {}).get("waste") or {})
                   for row in rows for side in ("A", "B"))]
    if not keys:
        return []
    out = [f"{'migr':>5} side " + " ".join(f"{MIGRATION_KEYS[k][0]:>34}" for k in keys)]
    for row in rows:
        for side in ("A", "B"):
            e = (row.get(side) or {}).get("waste")
            if e is None:
                continue
            out.append(f"{row['level']:>5} {side:>4} " + " ".join(
                f"{e[k]['mean']:>26.2f} ± {_ci(e[k]['ci95']):<5}" for k in keys))
    return out


def split_table(rows: list[dict]) -> list[str]:
    """What idle entries led to (bench.idle_split()), per side and level."""
    if not any("split" in (row.get(side) or {}) for row in rows for side in ("A", "B")):
        return []
    out = [f"{'idle':>5} side {'entries/CPU':>11} {'newidle@LLC %':>13} {'nothing %':>9} "
           f"{'failed %':>8} {'pulled %':>8} {'steal try %':>11} {'stole %':>7}"]
    for row in rows:
        for side in ("A", "B"):
            e = (row.get(side) or {}).get("split")
            if e is None:
                continue
            n = e["idle_entries"] or 1.0
            pct = {k: f"{100 * v / n:.1f}" for k, v in e.items()}
            out.append(f"{row['level']:>5} {side:>4} {e['idle_entries']:>11.1f} "
                       f"{pct['newidle_llc']:>13} {pct['newidle_llc_balanced']:>9} "
                       f"{pct['newidle_llc_failed']:>8} {pct['newidle_gained']:>8} "
                       f"{pct['steal_tries']:>11} {pct['steals']:>7}")
    out.append("idle: switches to idle per CPU (schedstat sched_goidle) and, per 100 of "
               "them, newidle passes that reached the LLC domain (MC), those that found "
               "nothing to pull or failed to move, newidle pulls at any level, steal "
               "attempts and steals; the rest were gated before the LLC level (avg_idle vs "
               "domain cost, NI_RANDOM, no overload) (docs/waste.md)")
    out.append("")
    out += why_table(rows)
    return out


# The why block's columns: (split key, header); the newidle reasons and the
# pull's outcomes, per 100 newidle entries (schedstat.WHY_FIELDS).
WHY_COLUMNS = (("ni_rd_idle", "rd idle"), ("ni_avg_idle", "avg_idle"), ("ni_below", "below"),
               ("ni_llc_empty", "empty"), ("ni_dice", "dice"), ("ni_pass", "pass"),
               ("ni_other", "other"), ("steal_gated", "gated"), ("steals", "stole"),
               ("steal_fail_locked", "locked"), ("steal_fail_hot", "hot"),
               ("steal_fail_unmovable", "unmov"), ("steal_fail_empty", "none"))


def why_table(rows: list[dict]) -> list[str]:
    """Why newidle balancing did what it did at the LLC, per side and level,
    where the kernel has the measurement patch (bench.idle_split())."""
    if not any("ni_calls" in ((row.get(side) or {}).get("split") or {})
               for row in rows for side in ("A", "B")):
        return []
    out = [f"{'why':>5} side {'newidle/CPU':>11} "
           + " ".join(f"{h + ' %':>10}" for _, h in WHY_COLUMNS)]
    for row in rows:
        for side in ("A", "B"):
            e = (row.get(side) or {}).get("split") or {}
            if "ni_calls" not in e:
                continue
            n = e["ni_calls"] or 1.0
            out.append(f"{row['level']:>5} {side:>4} {e['ni_calls']:>11.1f} "
                       + " ".join(f"{100 * e.get(k, 0.0) / n:>10.1f}" for k, _ in WHY_COLUMNS))
    out.append("why: newidle balances per CPU that had domains to look at and, per 100 of "
               "them, the first reason that applies at the LLC domain: the root domain "
               "not overloaded (rd idle), avg_idle short of the pass's cost at or below "
               "the LLC, a task pulled below it (SMT), the overload mask empty (STEAL: "
               "nothing waited in the LLC), NI_RANDOM's dice, the pass ran (its outcome: "
               "the idle block), other; then the pull from the mask: kept from searching "
               "by its cost estimate (gated), took a task (stole) or failed because a "
               "victim was locked, a task was cache hot, no task could move (unmov: "
               "affinity, running, delayed, per-CPU), or no victim was left (none). "
               "Counters of the measurement patch (patches/separate/, docs/waste.md)")
    out.append("")
    return out


def metadata(spec: BenchSpec, preset: str, build_meta: dict, qemu: str, guest: dict) -> dict:
    """The "meta" block of a results/<name>.json: provenance.provenance()
    (date, host, QEMU, the kernel's build record) with the fields the suite
    summary and `compare` read flattened next to it."""
    src = build_meta.get("source", {})
    tree = build_meta.get("tree", {})
    prov = provenance.provenance({str(build_meta.get("variant")): build_meta})
    return {
        "date": prov["date"], "base": prov["base"],
        "debian_package": src.get("package"), "debian_version": src.get("version"),
        "deb_sha256": src.get("sha256"),
        "kernel_variant": build_meta.get("variant"), "config_fragments": build_meta.get("fragments"),
        "tree_head": tree.get("head"), "tree_commits": tree.get("commits"),
        "tree_dirty": tree.get("dirty"),
        "series": tree.get("series"), "series_sha256": tree.get("series_sha256"),
        "qemu_version": qemu, "host": prov["host"], "preset": preset,
        "workload": {"name": spec.workload, "metric": spec.wl.metric, "unit": spec.wl.unit,
                     "higher_better": spec.wl.higher_better, spec.wl.size_name: spec.size,
                     spec.wl.level: spec.levels, "command": spec.command(spec.levels[0]),
                     "extra_args": spec.extra_args,
                     # a custom workload's definition (workload.from_json() reads it)
                     **({"definition": spec.wl.to_json()} if spec.custom is not None else {}),
                     "files": list(spec.files)},
        "reps": spec.reps, "alternate": spec.alternate, "warmup": spec.warmup,
        "A": list(spec.a.features), "B": list(spec.b.features), "guest": guest,
    }



def plot(spec: BenchSpec, rows: list[dict], path: Path, title: str) -> bool:
    """Write a PNG (time and %busy vs groups, with 95% CI bars); False when
    matplotlib is missing (util.pyplot() said so)."""
    plt = pyplot()
    if plt is None:
        return False
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for side, marker in (("A", "o"), ("B", "s")):
        rs = [r for r in rows if side in r]
        if not rs:
            continue
        g = [r["level"] for r in rs]
        label = f"{side}: {spec.side(side).name}"
        for ax, key in ((ax1, "value"), (ax2, "busy")):
            # one repetition has no interval (nan): no error bar then
            err = [r[side][key]["ci95"] for r in rs]
            ax.errorbar(g, [r[side][key]["mean"] for r in rs],
                        yerr=None if all(e != e for e in err) else [0.0 if e != e else e
                                                                     for e in err],
                        marker=marker, capsize=3, label=label)
    w = spec.wl
    ax1.set_xlabel(f"{w.name} {w.level}")
    ax1.set_ylabel(f"{w.metric} ({w.unit})")
    ax1.set_title(f"{w.name} {w.metric} ({'higher' if w.higher_better else 'lower'} is better)")
    ax2.set_xlabel(f"{w.name} {w.level}")
    ax2.set_ylabel("%busy")
    ax2.set_title("CPU busy")
    ax1.set_ylim(bottom=0)
    ax2.set_ylim(0, 105)
    for ax in (ax1, ax2):
        ax.set_xticks(spec.levels)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write(name: str, outdir: Path, spec: BenchSpec, ms: list[Measurement], meta: dict) -> dict:
    """results/<name>.json, .txt and .png; returns the paths written."""
    outdir.mkdir(parents=True, exist_ok=True)
    rows = summarize(spec, ms)
    text = table(spec, rows)
    w = spec.wl
    host = meta.get("host") or {}
    # a host run (idlesteal/runs/host/sweep.py) names the running kernel instead of a Debian build
    kernel = meta.get("kernel_label") or \
        f"Debian {meta.get('debian_package')} {meta.get('debian_version')}"
    # a staged run (vm.stage()) booted on another machine: that one's, not ours
    booted = (meta.get("guest") or {}).get("booted_on")
    where = (f"booted elsewhere ({booted.splitlines()[0].removeprefix('before: ')})"
             if booted else f"host {host.get('cores')} cores")
    header = (f"# {name}: preset {meta.get('preset')}, {kernel}, "
              f"{w.name} {w.size_name} {spec.size} "
              f"{' '.join(spec.extra_args)}, {where}, "
              f"{meta.get('date')}\n")
    paths = {"json": outdir / f"{name}.json", "txt": outdir / f"{name}.txt",
             "png": outdir / f"{name}.png"}
    paths["txt"].write_text(header + text)
    paths["json"].write_text(json.dumps({"meta": meta, "summary": rows,
                                         "runs": [m.to_json() for m in ms]}, indent=2) + "\n")
    if not plot(spec, rows, paths["png"], header.strip("# \n")):
        paths.pop("png").unlink(missing_ok=True)   # not an older run's; util.pyplot() said why
    return {"table": text, **paths}
