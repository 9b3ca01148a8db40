"""Turn bench measurements into the seeds' table, JSON and a PNG plot.

Table columns (per side, one row per group count, means over repetitions;
time and %busy also show the 95% confidence half-width):

    grps time %busy sched idle wake steal %speedup

sched/idle/wake/steal are /proc/schedstat deltas averaged per CPU, as in the
seeds.  %speedup (side B only) = (mean time A / mean time B - 1) * 100, with
its 95% interval and Welch's p-value; '*' marks p < 0.05.
"""
from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

from . import stats
from .bench import BenchSpec, Measurement


def host_info() -> dict:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu_model": model, "cores": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version()}


def _by(ms: list[Measurement], side: str, groups: int) -> list[Measurement]:
    return [m for m in ms if m.side == side and m.groups == groups]


def summarize(spec: BenchSpec, ms: list[Measurement]) -> list[dict]:
    rows = []
    for g in spec.groups:
        row: dict = {"groups": g}
        for side in ("A", "B"):
            sel = _by(ms, side, g)
            if not sel:
                continue
            entry = {}
            for key in ("time", "busy", "sched", "idle", "wake", "steal",
                        "newidle_lb", "newidle_gained"):
                s = stats.summarize([getattr(m, key) for m in sel])
                entry[key] = {"mean": s.mean, "stdev": s.stdev, "ci95": s.ci95, "n": s.n}
            row[side] = entry
        a = [m.time for m in _by(ms, "A", g)]
        b = [m.time for m in _by(ms, "B", g)]
        if a and b:
            r = stats.ratio(a, b)   # time A / time B
            w = stats.welch(a, b)
            row["speedup_pct"] = {"value": (r.value - 1) * 100, "low": (r.low - 1) * 100,
                                  "high": (r.high - 1) * 100, "welch_p": w.p}
        rows.append(row)
    return rows


def _num(x: float) -> str:
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}"


def table(spec: BenchSpec, rows: list[dict]) -> str:
    out = []
    for side in ("A", "B"):
        s = spec.side(side)
        out.append(f"{side}: {s.name}")
        head = f"{'grps':>4} {'time':>17} {'%busy':>13} {'sched':>8} {'idle':>8} {'wake':>8} {'steal':>7}"
        if side == "B":
            head += "  %speedup [95% CI]"
        out.append(head)
        for row in rows:
            e = row.get(side)
            if not e:
                continue
            t = f"{e['time']['mean']:.3f} ± {e['time']['ci95']:.3f}"
            b = f"{e['busy']['mean']:.1f} ± {e['busy']['ci95']:.1f}"
            line = (f"{row['groups']:>4} {t:>17} {b:>13}"
                    f" {_num(e['sched']['mean']):>8} {_num(e['idle']['mean']):>8}"
                    f" {_num(e['wake']['mean']):>8} {_num(e['steal']['mean']):>7}")
            if side == "B" and "speedup_pct" in row:
                sp = row["speedup_pct"]
                star = " *" if sp["welch_p"] < 0.05 else ""
                line += f"  {sp['value']:.1f} [{sp['low']:.1f}, {sp['high']:.1f}]{star}"
            out.append(line)
        out.append("")
    out.append(f"time in s (hackbench's own), mean ± 95% CI over {spec.reps} rep(s); "
               "sched/idle/wake/steal: schedstat deltas per CPU; "
               "%speedup = time A / time B - 1, [95% CI], * = Welch p < 0.05")
    return "\n".join(out) + "\n"


def metadata(spec: BenchSpec, preset: str, build_meta: dict, qemu: str, guest: dict) -> dict:
    src = build_meta.get("source", {})
    tree = build_meta.get("tree", {})
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "debian_package": src.get("package"), "debian_version": src.get("version"),
        "deb_sha256": src.get("sha256"),
        "kernel_variant": build_meta.get("variant"), "config_fragments": build_meta.get("fragments"),
        "tree_head": tree.get("head"), "tree_commits": tree.get("commits"),
        "tree_dirty": tree.get("dirty"),
        "series": tree.get("series"), "series_sha256": tree.get("series_sha256"),
        "qemu_version": qemu, "host": host_info(), "preset": preset,
        "hackbench": {"loops": spec.loops, "groups": spec.groups, "args": spec.hackbench_args},
        "reps": spec.reps, "alternate": spec.alternate, "warmup": spec.warmup,
        "A": list(spec.a.features), "B": list(spec.b.features), "guest": guest,
    }


def plot(spec: BenchSpec, rows: list[dict], path: Path, title: str) -> bool:
    """Write a PNG (time and %busy vs groups, with 95% CI bars)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for side, marker in (("A", "o"), ("B", "s")):
        rs = [r for r in rows if side in r]
        if not rs:
            continue
        g = [r["groups"] for r in rs]
        label = f"{side}: {spec.side(side).name}"
        ax1.errorbar(g, [r[side]["time"]["mean"] for r in rs],
                     yerr=[r[side]["time"]["ci95"] for r in rs], marker=marker, capsize=3,
                     label=label)
        ax2.errorbar(g, [r[side]["busy"]["mean"] for r in rs],
                     yerr=[r[side]["busy"]["ci95"] for r in rs], marker=marker, capsize=3,
                     label=label)
    ax1.set_xlabel("hackbench groups")
    ax1.set_ylabel("time (s)")
    ax1.set_title("hackbench time (lower is better)")
    ax2.set_xlabel("hackbench groups")
    ax2.set_ylabel("%busy")
    ax2.set_title("CPU busy")
    ax1.set_ylim(bottom=0)
    ax2.set_ylim(0, 105)
    for ax in (ax1, ax2):
        ax.set_xticks(spec.groups)
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
    header = (f"# {name}: preset {meta.get('preset')}, Debian {meta.get('debian_package')} "
              f"{meta.get('debian_version')}, hackbench -l {spec.loops} "
              f"{' '.join(spec.hackbench_args)}, {meta.get('date')}\n")
    paths = {"json": outdir / f"{name}.json", "txt": outdir / f"{name}.txt",
             "png": outdir / f"{name}.png"}
    paths["txt"].write_text(header + text)
    paths["json"].write_text(json.dumps({"meta": meta, "summary": rows,
                                         "runs": [m.to_json() for m in ms]}, indent=2) + "\n")
    if not plot(spec, rows, paths["png"], header.strip("# \n")):
        del paths["png"]
    return {"table": text, **paths}
