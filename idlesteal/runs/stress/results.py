"""Stress suite: a run's JSON summary and its text.

summary() gathers a verdict with the run's parameters, thresholds, kernel
build record and provenance; write_summary() keeps it as
results/stress/<stamp>-<preset>-<S>s.json (results_dir()); report() is the
short human-readable account of one summary and tally() the closing line
of several (known mainline warnings and checks off named loudly).
"""
from __future__ import annotations

import dataclasses
import json
import subprocess
import time
from pathlib import Path

from ... import paths
from ...guest import topology
from ...kernel import build, provenance
from .console import known_line
from .scenario import Params, threshold_table
from .verdict import Verdict

def results_dir() -> Path:
    return paths.results_dir() / "stress"


def series_commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(paths.tree_dir()), "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def summary(preset: topology.Preset, p: Params, v: Verdict, *, variant: str, uname: str,
            guest: dict, error: str | None = None) -> dict:
    meta = build.read_meta(variant)
    src = meta.get("source") or {}
    return {
        "passed": v.passed and error is None,
        "failures": ([error] if error else []) + v.failures,
        # kernel warnings of KNOWN_WARNINGS (reproduced without the series,
        # docs/stress.md): printed, not counted as failures
        "known_mainline_warnings": v.details.get("known_warnings", []),
        # False: a kernel without the series; checks_off says what was not checked
        "series": p.series, "checks_off": p.checks_off(),
        "preset": preset.name, "ncpus": preset.ncpus, "seconds": p.seconds,
        "counts": v.counts, "minimums": v.minimums,
        "thresholds": {k: dataclasses.asdict(t) for k, t in
                       threshold_table(bool(p.scx), p.series).items()},
        "details": v.details,
        "kernel": {"uname_r": uname, "variant": variant,
                   "fragments": meta.get("fragments", []),
                   "series_commit": series_commit(),
                   "built_tree_head": (meta.get("tree") or {}).get("head", ""),
                   "built_tree_dirty": (meta.get("tree") or {}).get("dirty"),
                   "debian_package": src.get("package", ""),
                   "debian_version": src.get("version", ""),
                   "built": meta.get("built", "")},
        "params": dataclasses.asdict(p),
        "guest": guest,
        # date, host, qemu_version, builds ({variant: build record})
        **provenance.provenance({variant: meta}),
    }


def write_summary(s: dict, outdir: Path | None = None) -> Path:
    outdir = outdir or results_dir()
    outdir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = outdir / f"{stamp}-{s['preset']}-{s['seconds']}s.json"
    i = 1
    while path.exists():
        i += 1
        path = outdir / f"{stamp}-{s['preset']}-{s['seconds']}s.{i}.json"
    path.write_text(json.dumps(s, indent=2) + "\n")
    return path


def report(s: dict) -> str:
    """A short human-readable account of one summary."""
    c, m = s["counts"], s["minimums"]
    known = s.get("known_mainline_warnings") or []
    off = s.get("checks_off") or {}
    kernel = (f"series {s['kernel']['series_commit'][:12]}" if s.get("series", True)
              else f"variant {s['kernel']['variant']}, WITHOUT the series")
    lines = [f"stress {s['preset']} {s['seconds']} s: {'PASS' if s['passed'] else 'FAIL'}"
             + (f" with {len(known)} KNOWN MAINLINE WARNING(S)" if known else "")
             + f" (kernel {s['kernel']['uname_r'] or '?'}, {kernel})"]
    for k in known:
        lines.append(f"  {known_line(k)}")
        lines.append(f"    call path: {' <- '.join(k['call_path'][:5])}")
        seq = k.get("sequence") or {}
        if seq.get("markers"):
            lines.append(f"    after (console): {'; '.join(seq.get('steps', [])[-8:])}")
        else:
            lines.append("    (no partition lines on this console: sequence not checked)")
    for name, why in off.items():
        lines.append(f"  check off: {name}: {why}")
    keys = ["steals", "steal_fail", "hotplug_ops", "hotplug_fail", "partition_changes",
            "partition_invalid", "domain_attach", "nr_throttled", "msgcount_runs", "messages",
            "hackbench_runs", "affinity_runs", "affinity_checks", "affinity_violations",
            "affinity_resets", "affinity_inactive", "taskset_ok", "feature_toggles",
            "overload_reads", "wakelat_max_ms"]
    for k in keys:
        if k in c:
            lines.append(f"  {k:22s} {c[k]:>12}" + (f"   (min {m[k]})" if k in m else ""))
    if s["guest"].get("boot_seconds") is not None:
        lines.append(f"  boot {s['guest'].get('boot_seconds')} s, total "
                     f"{s['guest'].get('total_seconds')} s, run dir {s['guest'].get('run_dir')}")
    races = s.get("details", {}).get("kcsan")
    if races is not None:
        lines.append(f"  KCSAN data-race reports: {races['reports']} "
                     f"({sum(races['series'].values())} touching the series)")
        for side in ("series", "base"):
            for title, n in races[side].items():
                lines.append(f"    {side:6s} {n:3d} x {title}")
    for f in s["failures"]:
        lines.append(f"  FAIL: {f}")
    for st in s.get("details", {}).get("wakelat_stalls", []):
        lines.append(f"  {st}")
    excerpt = s.get("details", {}).get("affinity_trace") or []
    if excerpt:
        lines.append(f"  trace up to the first affinity violation (last {len(excerpt)} lines "
                     f"for that thread, hotplug, partitions):")
        lines += [f"    {l}" for l in excerpt[-60:]]
    for e in s["guest"].get("kernel_errors", [])[:10]:
        lines.append(f"  console: {e}")
    for r in s["guest"].get("retried_boots", []):
        lines.append(f"  retried boot (kernel error before SMP bring-up): "
                     f"{r['kernel_errors'][0]} [{r['console']}]")
    return "\n".join(lines) + "\n"


def tally(summaries: list[dict]) -> str:
    """The closing line of several runs: passed, failed, and how many
    showed a known mainline warning or ran with checks off."""
    passed = sum(bool(s["passed"]) for s in summaries)
    line = f"stress: {passed} passed, {len(summaries) - passed} failed"
    known = [s for s in summaries if s.get("known_mainline_warnings")]
    if known:
        names = sorted({f"{k['name']} ({k['anchor']})"
                        for s in known for k in s["known_mainline_warnings"]})
        line += (f"; {len(known)} run(s) with a KNOWN MAINLINE WARNING, not counted "
                 f"against the series: {', '.join(names)}")
    off = [s for s in summaries if s.get("checks_off")]
    if off:
        line += (f"; {len(off)} run(s) on a kernel without the series, checks off: "
                 f"{', '.join(sorted({c for s in off for c in s['checks_off']}))}")
    return line
