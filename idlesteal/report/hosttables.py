"""A host suite's results as the cover letter's tables: the text a reply on
the list quotes as it is, written beside the data as cover-tables.txt by
`suite --host` (and again by `suite --host --summary-only`).

Four blocks, each line indented by two spaces as in patches/cover-letter.txt:
the machine (topology, kernel, the load before the runs, the A and B
settings); the summary line of the cover letter's suite table (the same
columns, over this machine's cells); every cell (workload and level): A
and B, B's change with its interval, steals and their cost, %busy; and
every traced cell: the wasted LLC time of each side and how much of A's B
removes.  Significance
as in report/tables.py: raw Welch p and Holm's over the block's tests side
by side, `*` only where Holm's is below 0.05; where nothing is told apart
the block says so with its intervals' half-widths.

It reads the folder's summary.json (runs/suite.write_summary()) and each
entry's JSON named there, and nothing else.
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path

from ..measure import stats
from .tables import TableError, fmt_p, load_json, load_name

NAME = "cover-tables.txt"
COMMAND = "python3 -m idlesteal suite --host"


def _entry_metas(outdir: Path, rows: list[dict]) -> dict[str, dict]:
    """workload -> its entry JSON's meta (host-<workload>.json)."""
    out = {}
    for w in dict.fromkeys(r["workload"] for r in rows):
        out[w] = load_json(outdir, f"host-{w}.json")["meta"]
    return out


def _cpulists(groups: list[list[int]]) -> str:
    sizes = sorted({len(g) for g in groups})
    return f"{len(groups)} of {'/'.join(map(str, sizes))} CPUs"


def machine_lines(meta: dict, entry: dict) -> list[str]:
    """The machine, its kernel and load, and what A and B were."""
    hm = entry.get("host_mode") or {}
    offer = hm.get("offer") or {}
    topo = offer.get("topology") or {}
    host = entry.get("host") or {}
    out = [f"Machine: {meta.get('machine', '?')}, {host.get('cpu_model', '?')}, "
           f"{len(topo.get('online', [])) or host.get('cores', '?')} CPUs online"]
    if topo:
        smt = max((len(g) for g in topo.get("smt", [[0]])), default=1)
        out.append(f"Topology: LLCs {_cpulists(topo['llc'])}; nodes {_cpulists(topo['nodes'])}; "
                   f"SMT {smt} thread{'s' if smt > 1 else ''} per core"
                   + ("; under a hypervisor" if offer.get("hypervisor") else ""))
    out.append(f"Kernel: {meta.get('kernel', '?')}")
    load = hm.get("load_start") or offer.get("load") or {}
    if load:
        la = load.get("loadavg") or [math.nan]
        out.append(f"Load before the runs: loadavg {la[0]:.2f}, {load.get('busy_cpus', 0):.1f} "
                   f"CPUs busy, {load.get('tasks', '?')} tasks"
                   + ("; run although the machine was busy (--force-load)"
                      if hm.get("forced_under_load") else ""))
    a, b = entry.get("A") or [], entry.get("B") or []
    if a != b:
        out.append(f"A = {','.join(a) or 'as booted'}, B = {','.join(b) or 'as booted'}, "
                   f"{entry.get('reps', '?')} repetitions a side, interleaved")
    else:
        out.append(f"A = B = the kernel as it is{' with ' + ','.join(a) if a else ''} "
                   "(no STEAL A/B here; each entry's .txt says why): B vs A is run-to-run "
                   "noise")
    return out


def summary_lines(rows: list[dict]) -> list[str]:
    """The cover letter's suite table, one line over this machine's cells
    (removal: Holm over the traced cells, counted where A wastes 1% or
    more; time: Holm over every cell)."""
    traced = [r for r in rows if r.get("waste_removed")]
    adj_w = stats.holm([r["waste_removed"]["welch_p"] for r in traced])
    big = [(r, adj) for r, adj in zip(traced, adj_w) if (r.get("waste_a") or 0) >= 1.0]
    adj_t = stats.holm([r["p"] for r in rows])
    med_a = f"{statistics.median(r['waste_a'] for r in traced):.1f}%" if traced else "-"
    med_rm = f"{statistics.median(r['waste_removed']['value'] for r, _ in big):.0f}%" \
        if big else "-"
    rm_raw = sum(1 for r, _ in big if r["waste_removed"]["welch_p"] < 0.05)
    rm_holm = sum(1 for _, adj in big if adj < 0.05)
    t_raw = sum(1 for r in rows if r["p"] < 0.05)
    t_holm = sum(1 for p in adj_t if p < 0.05)
    return [f"{'cells':>5} {'traced':>6} {'A >= 1%':>7} {'A wastes (median)':>17} "
            f"{'B removes (median)':>18} {'removal p<.05 raw/Holm':>22} "
            f"{'time p<.05 raw/Holm':>19}",
            f"{len(rows):5} {len(traced):6} {len(big):7} {med_a:>17} {med_rm:>18} "
            f"{rm_raw:>17}/{rm_holm:<4} {t_raw:>14}/{t_holm:<4}"]


def _f(x: float | None, fmt: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def cell_lines(rows: list[dict]) -> list[str]:
    """Every workload and level: A, B and B's change; steals, their cost
    and %busy."""
    adj = stats.holm([r["p"] for r in rows])
    out = [f"{'load':<16} {'A':>11} {'B':>11} {'B vs A % [95% CI]':>21} {'p raw/Holm':>10} "
           f"{'steals':>6} {'us/try':>6} {'%busy A>B':>9}"]
    for r, at in zip(rows, adj):
        unit = r.get("unit") or ""
        a, b = (f"{r[k]:.3g} {unit}".strip() for k in ("a", "b"))
        out.append(
            f"{load_name(r['workload'], r['level']):<16} {a:>11} {b:>11} "
            f"{r['speedup']:>6.1f} [{r['low']:6.1f},{r['high']:6.1f}]{'*' if at < 0.05 else ' '} "
            f"{fmt_p(r['p']) + '/' + fmt_p(at):>10} "
            f"{_f(r.get('steal_b'), '.1f'):>6} {_f(r.get('us_per_try'), '.1f'):>6} "
            f"{_f(r.get('busy_a'), '.0f') + '>' + _f(r.get('busy_b'), '.0f'):>9}")
    return out


def waste_lines(rows: list[dict]) -> list[str]:
    """Every traced workload and level: each side's wasted LLC time and the
    share of A's that B removes."""
    traced = [r for r in rows if r.get("waste_removed")]
    adj = stats.holm([r["waste_removed"]["welch_p"] for r in traced])
    out = [f"{'load':<16} {'wasted% A':>9} {'wasted% B':>9} {'B removes % [95% CI]':>21} "
           f"{'p raw/Holm':>10}"]
    for r, aw in zip(traced, adj):
        rm = r["waste_removed"]
        head = (f"{load_name(r['workload'], r['level']):<16} {_f(r.get('waste_a'), '.2f'):>9} "
                f"{_f(r.get('waste_b'), '.2f'):>9} ")
        if not r.get("waste_a"):
            out.append(head + f"{'- (A wastes none)':>21}")
            continue
        out.append(
            head +
            f"{rm['value']:>6.0f} [{_f(rm['low'], '6.0f')},{_f(rm['high'], '6.0f')}]"
            f"{'*' if aw < 0.05 else ' '} "
            f"{fmt_p(rm['welch_p']) + '/' + fmt_p(aw):>10}")
    untraced = [load_name(r["workload"], r["level"]) for r in rows if not r.get("waste_removed")]
    if untraced:
        out.append(f"not traced on both sides: {', '.join(untraced)}")
    return out


def verdict(rows: list[dict]) -> str:
    """How many cells B's change tells apart after Holm, or the resolution."""
    adj = stats.holm([r["p"] for r in rows])
    told = sum(1 for p in adj if p < 0.05)
    hws = [(r["high"] - r["low"]) / 2 for r in rows
           if not (math.isnan(r["high"]) or math.isnan(r["low"]))]
    res = f" (interval half-widths {min(hws):.0f}-{max(hws):.0f}%)" if hws else ""
    return (f"{told} of {len(rows)} cells told apart after Holm" if told
            else "No difference detected in B's change") + res + "."


def build(outdir: Path) -> str:
    """cover-tables.txt's text for the host suite results in `outdir`."""
    summary = load_json(outdir, "summary.json")
    rows = [r for r in summary.get("rows", []) if r.get("preset") == "host"]
    if not rows:
        raise TableError(f"{outdir / 'summary.json'}: no host cell with both sides "
                         "(nothing to tabulate)")
    meta = summary.get("meta") or {}
    metas = _entry_metas(outdir, rows)
    first = metas[rows[0]["workload"]]
    sha = rows[0].get("series_sha256")
    dates = sorted({str(m.get("date", ""))[:10] for m in metas.values()} - {""})
    lines = machine_lines(meta, first) + [
        "", *summary_lines(rows), "", *cell_lines(rows), "", *waste_lines(rows), "",
        "B vs A: % by which B is better (less time, or more of a rate); wasted%: CPU",
        "time idle while a task allowed there waited in the LLC, % of CPU time; B",
        "removes: the share of A's waste B removes; p: Welch, raw and Holm-adjusted",
        "over the block's cells, * = Holm's p < 0.05; steals per CPU per run under B;",
        "us/try: the mean cost of a steal attempt; %busy: the CPUs' busy time.",
        verdict(rows),
        f"Run {' to '.join(dict.fromkeys([dates[0], dates[-1]])) if dates else '?'}"
        + (f"; series {sha[:12]} (series_sha256 of the export)." if sha else "."),
        f"Data: {outdir}/summary.json and the host-<workload>.json beside it.",
        f"Made by `{COMMAND}`."]
    missing = summary.get("missing") or []
    if missing:
        lines.append(f"Not run: {', '.join(missing)}.")
    return "".join(f"  {l}".rstrip() + "\n" for l in lines)


def write(outdir: Path) -> Path:
    path = outdir / NAME
    path.write_text(build(outdir))
    return path
