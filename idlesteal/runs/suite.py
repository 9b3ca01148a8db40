"""The benchmark suite: which workload runs on which preset at which levels.

configs/bench.suite has one entry per line:

    <preset> <workload> <levels> [size]      # comment

where a level is a number or a load counted on the machine (`cpus*2`,
`llc*0.5`: runs/levels.py) and the preset `host` marks a line only
`suite --host` runs (guests leave it out, host_entries() prefers it).
A suite file may define workloads of its own (workload.custom()) and add host files
to the guest image (image.parse_file_spec()):

    workload <name> <command> <metric-regex> lower|higher [unit=U] [size=N]
             [level=WORD] [size-name=WORD] [tasks=N]
    file <host>[:<guest>]

Lines are split like a shell would (shlex), so quote a command or regular
expression with spaces, and single-quote one with backslashes; `#` starts a
comment where a word would.  The command uses {level} (and {size}); the
regex's first group is the metric; size=N is the default size; tasks=N
the tasks one level starts (default 1).  An entry
names a defined workload like a builtin one, before or after the definition.
A relative host path is taken from the suite file's directory; every `file`
goes into the image of every entry.

Every entry is one boot with an A/B sweep (idlesteal bench) written to
results/<preset>-<workload>.{txt,json,png}.  summarize() then reads those
JSON files back and writes results/summary.{txt,json}: one line per preset,
workload and level with both sides' means, the difference with its 95%
interval and significance, %busy, steals and the steal cost.

`suite --host` (host.suite()) runs the file's workloads on the machine
itself: host_entries() makes one entry per workload, preset HOST, with the
levels and size of its host line or else its first (a preset is a
guest's topology; the host's is its own), relative levels counted on the
machine, results in results/host-<machine>/ (host_dir()).
"""
from __future__ import annotations

import json
import platform
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..guest import image, topology
from .. import paths
from ..measure import workload
from ..util import HarnessError
from . import levels as lv_mod
from ..measure.workload import Workload


@dataclass(frozen=True)
class Entry:
    preset: str
    workload: str
    levels: list[int]
    size: int            # 0: the workload's default
    # The workload's definition when the suite defines it (a `workload`
    # line, workload.custom()'s arguments); None for a builtin workload.
    custom: dict[str, Any] | None = None
    # The suite's `file` lines, as "HOST:GUEST" with absolute host paths.
    files: tuple[str, ...] = ()
    # The levels as written ("1,2,4", "llc*0.5,cpus"): runs/levels.py; the
    # numbers above are what they are on the preset.
    words: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.preset}-{self.workload}"

    @property
    def wl(self) -> Workload:
        return workload.from_json(self.custom) if self.custom is not None \
            else workload.get(self.workload)


def default_file(host: bool = False) -> Path:
    """configs/bench.suite (guests), configs/server.suite (--host)."""
    return paths.configs_dir() / ("server.suite" if host else "bench.suite")


_WORKLOAD_LINE = ("workload <name> <command> <metric-regex> lower|higher [unit=U] [size=N] "
                  "[level=WORD] [size-name=WORD] [tasks=N]")
_OPTIONS = {"unit": "unit", "size": "default_size", "level": "level_name",
            "size-name": "size_name", "tasks": "tasks"}


def parse_workload_line(words: list[str]) -> dict[str, Any]:
    """The words after `workload` -> workload.custom()'s arguments (checked)."""
    if len(words) < 4:
        raise HarnessError(f"want '{_WORKLOAD_LINE}'")
    name, command, metric, better = words[:4]
    if better not in ("lower", "higher"):
        raise HarnessError(f"want 'lower' or 'higher' (is better) after the regex, "
                           f"got {better!r}")
    args: dict[str, Any] = {"name": name, "command": command, "metric": metric,
                            "higher_better": better == "higher"}
    for opt in words[4:]:
        key, eq, value = opt.partition("=")
        if not eq or key not in _OPTIONS:
            raise HarnessError(f"unknown option {opt!r}; known: "
                               + ", ".join(f"{k}=" for k in _OPTIONS))
        if key in ("size", "tasks"):
            try:
                args[_OPTIONS[key]] = int(value)
            except ValueError:
                raise HarnessError(f"{key}= wants an integer, got {value!r}") from None
        else:
            args[_OPTIONS[key]] = value
    return workload.custom(**args).to_json()


def parse(text: str, where: str = "suite", base: Path | None = None) -> list[Entry]:
    """The entries of a suite file's text; `base`: the directory relative
    host paths of `file` lines are taken from (default: the current one)."""
    defs: dict[str, tuple[int, dict[str, Any]]] = {}
    files: list[str] = []
    lines: list[tuple[int, str, list[str]]] = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            words = shlex.split(line, comments=True)
        except ValueError as e:
            raise HarnessError(f"{where}:{n}: {e}: {line.strip()!r}") from None
        if not words:
            continue
        if words[0] == "workload":
            try:
                d = parse_workload_line(words[1:])
            except HarnessError as e:
                raise HarnessError(f"{where}:{n}: {e}") from None
            if d["name"] in defs:
                raise HarnessError(f"{where}:{n}: workload {d['name']!r} is already defined "
                                   f"on line {defs[d['name']][0]}")
            defs[d["name"]] = (n, d)
        elif words[0] == "file":
            if len(words) != 2:
                raise HarnessError(f"{where}:{n}: want 'file HOST[:GUEST]', got {line.strip()!r}")
            try:
                files.append(str(image.parse_file_spec(words[1], base)))
            except HarnessError as e:
                raise HarnessError(f"{where}:{n}: {e}") from None
        else:
            lines.append((n, line, words))
    entries = []
    for n, line, words in lines:
        if len(words) not in (3, 4):
            raise HarnessError(f"{where}:{n}: want '<preset> <workload> <levels> [size]', "
                               f"got {line.strip()!r}")
        preset, wname, levels = words[:3]
        if preset != HOST:
            topology.get(preset)      # unknown names fail here, with the list
        custom = defs[wname][1] if wname in defs else None
        if custom is None and wname not in workload.WORKLOADS:
            known = [*workload.WORKLOADS, *defs]
            raise HarnessError(f"{where}:{n}: unknown workload {wname!r}; known: "
                               f"{', '.join(known)}")
        words_ = levels.split(",")
        try:
            lv_mod.check(words_)
            size = int(words[3]) if len(words) == 4 else 0
        except HarnessError as e:
            raise HarnessError(f"{where}:{n}: {e}") from None
        except ValueError:
            raise HarnessError(f"{where}:{n}: the size must be an integer: "
                               f"{line.strip()!r}") from None
        if size < 0:
            raise HarnessError(f"{where}:{n}: the size must be >= 0")
        wl = workload.from_json(custom) if custom is not None else workload.get(wname)
        # a host line's relative levels wait for the machine (host_entries())
        lv = [int(w) for w in words_ if not lv_mod.is_relative(w)] if preset == HOST \
            else lv_mod.resolve(words_, wl, lv_mod.of_preset(preset))
        entries.append(Entry(preset, wname, lv, size, custom, tuple(files), tuple(words_)))
    if not entries:
        raise HarnessError(f"{where}: no entries")
    return entries


def load(path: Path | None = None) -> list[Entry]:
    path = path or default_file()
    try:
        text = path.read_text()
    except OSError as e:
        raise HarnessError(f"cannot read the suite file: {e}") from None
    return parse(text, str(path), path.parent)


def files(entries: list[Entry]) -> list[str]:
    """The suite's `file` lines ("HOST:GUEST"), once each, in order."""
    return list(dict.fromkeys(f for e in entries for f in e.files))


def select(entries: list[Entry], presets: str = "", workloads: str = "") -> list[Entry]:
    """Entries whose preset and workload are in the comma-separated filters."""
    ps = {p for p in presets.split(",") if p}
    ws = {w for w in workloads.split(",") if w}
    known = [*workload.WORKLOADS, *dict.fromkeys(e.workload for e in entries
                                                  if e.workload not in workload.WORKLOADS)]
    for w in ws:
        if w not in known:
            raise HarnessError(f"unknown workload {w!r}; known: {', '.join(known)}")
    out = [e for e in entries if (not ps or e.preset in ps) and (not ws or e.workload in ws)]
    if not out:
        raise HarnessError(f"no suite entry matches presets={presets!r} workloads={workloads!r}")
    return out


# The preset name of host entries (host.bench()'s results say "preset": "host").
HOST = "host"


def guest_entries(entries: list[Entry]) -> tuple[list[Entry], str]:
    """The entries a guest runs (all but the `host` lines), and a line
    naming the host lines left out ('' when none)."""
    out = [e for e in entries if e.preset != HOST]
    gone = [e.workload for e in entries if e.preset == HOST]
    if not out:
        raise HarnessError("the suite file has only host lines: run it with --host")
    return out, (f"host line(s) left out (only --host runs them): {', '.join(gone)}"
                 if gone else "")


def host_entries(entries: list[Entry], machine: lv_mod.Machine
                 ) -> tuple[list[Entry], list[str]]:
    """One entry per workload for `suite --host`, in file order: preset
    HOST, the levels, size and definition of the workload's `host` line,
    else of its first line, with relative levels (`cpus*2`) counted on
    `machine`; and a line per workload whose other lines are left out or
    whose levels were scaled."""
    first: dict[str, Entry] = {}
    others: dict[str, list[str]] = {}
    for e in entries:
        if e.workload not in first:
            first[e.workload], others[e.workload] = e, []
        elif e.preset == HOST and first[e.workload].preset != HOST:
            others[e.workload].append(first[e.workload].preset)
            first[e.workload] = e
        else:
            others[e.workload].append(e.preset)
    out, notes = [], []
    for w, e in first.items():
        lv = lv_mod.resolve(list(e.words), e.wl, machine) if e.words else e.levels
        out.append(Entry(HOST, e.workload, lv, e.size, e.custom, e.files, e.words))
        if others[w]:
            notes.append(f"{w}: levels {','.join(e.words or map(str, lv))} size "
                         f"{e.size or 'default'} of its {e.preset} line; its "
                         f"{', '.join(others[w])} line(s) left out")
        why = lv_mod.explain(list(e.words), e.wl, machine)
        if why:
            notes.append(f"{w}: levels {','.join(map(str, lv))}: {why}")
    return out, notes


def host_dir(node: str | None = None) -> Path:
    """results/host-<machine name>/: where `suite --host` writes by default."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", node or platform.node()).strip(".") or "unknown"
    return paths.results_dir() / f"host-{name}"


def _fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def summary_rows(entries: list[Entry], outdir: Path) -> tuple[list[dict], list[str]]:
    """Rows for every level of every entry whose result JSON exists; and the
    names of the entries that have none yet."""
    rows, missing = [], []
    for e in entries:
        f = outdir / f"{e.name}.json"
        if not f.exists():
            missing.append(e.name)
            continue
        data = json.loads(f.read_text())
        if any("level" not in r for r in data.get("summary", [])):
            missing.append(f"{e.name} (older result format)")
            continue
        meta = data.get("meta", {})
        wmeta = meta.get("workload", {})
        for r in data.get("summary", []):
            a, b, sp = r.get("A"), r.get("B"), r.get("speedup_pct")
            if not (a and b and sp):
                continue
            rows.append({
                "preset": e.preset, "workload": e.workload, "level": r["level"],
                "metric": wmeta.get("metric"), "unit": wmeta.get("unit"),
                "a": a["value"]["mean"], "a_ci": a["value"]["ci95"],
                "b": b["value"]["mean"], "b_ci": b["value"]["ci95"],
                "speedup": sp["value"], "low": sp["low"], "high": sp["high"],
                "p": sp["welch_p"], "significant": sp["welch_p"] < 0.05,
                "busy_a": a["busy"]["mean"], "busy_b": b["busy"]["mean"],
                "steal_b": b["steal"]["mean"],
                "us_per_try": (b["cost"]["ns_per_attempt"] or 0) / 1000
                if b.get("cost", {}).get("ns_per_attempt") else None,
                "newidle_us": (b["cost"]["newidle_cost_ns"] or 0) / 1000
                if b.get("cost", {}).get("newidle_cost_ns") else None,
                # wasted CPU time (docs/waste.md), when both sides were traced
                "waste_a": (a.get("waste") or {}).get("llc_pct", {}).get("mean"),
                "waste_b": (b.get("waste") or {}).get("llc_pct", {}).get("mean"),
                "waste_removed": r.get("waste_removed_pct"),
                "reps": a["value"]["n"], "date": meta.get("date"),
                "host_cores": (meta.get("host") or {}).get("cores"),
                "series_sha256": meta.get("series_sha256"),
            })
    return rows, missing


def _waste(r: dict) -> str:
    """The summary's wasted-time cells: 'A>B' and 'removed [low, high]*'."""
    a, b, rm = r.get("waste_a"), r.get("waste_b"), r.get("waste_removed")
    cells = f"{_fmt(a, 2):>5}>{_fmt(b, 2):<5}" if a is not None and b is not None \
        else f"{'-':>11}"
    if rm:
        low, high = (_fmt(x, 0) if x == x else "nan" for x in (rm["low"], rm["high"]))
        cells += f" {rm['value']:>6.1f} [{low:>4},{high:>4}]{'*' if rm['welch_p'] < 0.05 else ''}"
    return cells


def summary_table(rows: list[dict], missing: list[str], host: bool = False) -> str:
    out = [f"{'preset':<7} {'workload':<22} {'lvl':>4} {'A (NO_STEAL)':>16} "
           f"{'B (STEAL)':>16} {'%speedup [95% CI]':>24} {'%busy A>B':>11} {'steal':>6} "
           f"{'us/try':>6} {'nidle us':>8} {'wasted% A>B':>11} {'removed [95% CI]':>20}"]
    for r in rows:
        unit = r["unit"] or ""
        out.append(
            f"{r['preset']:<7} {r['workload']:<22} {r['level']:>4} "
            f"{r['a']:>9.3g} {unit:<6} {r['b']:>9.3g} {unit:<6} "
            f"{r['speedup']:>7.1f} [{r['low']:6.1f},{r['high']:6.1f}]{'*' if r['significant'] else ' '} "
            f"{r['busy_a']:>5.1f}>{r['busy_b']:<5.1f} {r['steal_b']:>6.1f} "
            f"{_fmt(r['us_per_try']):>6} {_fmt(r['newidle_us']):>8} {_waste(r)}")
    out.append("")
    out.append("wasted% = LLC-wasted CPU time, % of the run's CPU time (idle while a task "
               "allowed there waited in the LLC; docs/waste.md), A>B; removed = how much of "
               "A's STEAL removes, [95% CI], * = Welch p < 0.05; - = not traced")
    out.append("A/B in one boot per line group, means over the repetitions; %speedup > 0: "
               "STEAL better (less time, or more req/s); * = Welch p < 0.05; steal = steals "
               "per CPU per run; us/try = mean cost of a steal attempt; nidle us = newidle "
               "balance's cost estimate (max_newidle_lb_cost, summed over domains)")
    if host:
        out.append("host mode (docs/host.md): this machine and its running kernel, one run of "
                   "each workload; A and B are the features each entry's JSON names (meta.A, "
                   "meta.B): on a kernel without the series both sides run the kernel as it "
                   "is (A/A), and %speedup is then the run-to-run noise")
    if missing:
        out.append("not run yet: " + ", ".join(missing))
    return "\n".join(out) + "\n"


def write_summary(entries: list[Entry], outdir: Path, meta: dict[str, Any] | None = None,
                  selected: list[Entry] | None = None) -> tuple[str, Path, Path]:
    """summary.{txt,json} of every entry's results in `outdir`; "not run
    yet" names only the `selected` entries' missing ones (default: all);
    `meta` (host mode: where and on what it ran) goes into the JSON."""
    rows, missing = summary_rows(entries, outdir)
    if selected is not None and selected != entries:
        missing = summary_rows(selected, outdir)[1]
    host = any(e.preset == HOST for e in entries)
    text = summary_table(rows, missing, host)
    txt, js = outdir / "summary.txt", outdir / "summary.json"
    outdir.mkdir(parents=True, exist_ok=True)
    txt.write_text(text)
    js.write_text(json.dumps({"rows": rows, "missing": missing,
                              **({"meta": meta} if meta is not None else {})}, indent=2) + "\n")
    return text, txt, js
