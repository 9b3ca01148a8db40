"""Stress suite: the guest's output judged, counts and a pass/fail verdict.

`evaluate()` turns the guest's sections into counts, the minimums they are
held to and failures; evaluate_scx() reads a sched_ext loader's section.
Pass means: no kernel error report on the console (vm.KERNEL_ERROR_RE), the
script ended cleanly, every worker finished, no hackbench / msgcount /
affinity_check run failed and every msgcount run accounted for every
message, the overload masks are empty and the domains are back as they were
at the end, and every activity counter reached its minimum (THRESHOLDS,
scaled with the run length) so that a pass means the code was exercised.
(The console and the script's end are judged by run(), runner.py.)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...guest import topology
from ...measure import schedstat
from ...measure.overload import parse_overload
from ...scx import own as scx
from .parse import parse_counters, parse_cpustat, parse_runs
from .scenario import WORKERS, Params, threshold_table, thresholds
from .trace import affinity_excerpt, stopper_race, trace_moves

@dataclass
class Verdict:
    counts: dict[str, int] = field(default_factory=dict)
    minimums: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.failures


def _domain_names(s: schedstat.Schedstat) -> dict[int, list[str]]:
    return {c: [d.name for d in cpu.domains] for c, cpu in s.cpus.items()}


def steal_counter_cpus(s: schedstat.Schedstat) -> int:
    """How many CPUs of a snapshot carry all of the series' steal counters."""
    return sum(all(n in c.debug or n in c.extra_named() for n in schedstat.STEAL_FIELDS)
               for c in s.cpus.values())


_SERIES_PROBE_RE = re.compile(r"series=(\d) overload_cpus=(\d) steal_feature=(\d)")


def check_overload(sections: dict[str, str], v: Verdict) -> None:
    """The series' overload mask: the same LLCs before and after, no CPU
    left marked at the end."""
    fail = v.failures.append
    try:
        ov_before = parse_overload(sections.get("overload_before", ""))
        ov_after = parse_overload(sections.get("overload_after", ""))
        v.details["overload_after"] = sections.get("overload_after", "").strip()
        if [l for l, _ in ov_before] != [l for l, _ in ov_after]:
            fail(f"LLCs in overload_cpus changed: {ov_before} -> {ov_after}")
        stuck = [f"llc {l}: {o}" for l, o in ov_after if o]
        if stuck:
            fail("CPUs still marked overloaded after the load: " + "; ".join(stuck))
        if not ov_after:
            fail("overload_cpus is empty (no LLC lines) after the run")
    except ValueError as e:
        fail(str(e))


def evaluate(sections: dict[str, str], p: Params) -> Verdict:
    """Counts, minimums and failures from the guest's sections."""
    v = Verdict(minimums=thresholds(p.seconds, bool(p.scx), p.steal, p.series))
    fail = v.failures.append
    if p.checks_off():
        v.details["checks_off"] = p.checks_off()
    probe = _SERIES_PROBE_RE.search(sections.get("series", ""))
    if probe:   # runs before 2026-11-25 have no such section
        has = {"overload_cpus": probe.group(2) == "1", "steal_feature": probe.group(3) == "1"}
        v.details["series_probe"] = has
        wrong = [k for k, there in has.items() if there != p.series]
        if wrong:
            fail(f"the kernel {'lacks' if p.series else 'has'} {', '.join(wrong)} but the run "
                 f"is for a kernel {'with' if p.series else 'without'} the series")
    ctr = parse_counters(sections.get("counters", ""))
    missing = [w for w in WORKERS if w not in ctr or "missing" in ctr[w]]
    if missing:
        fail(f"worker(s) did not finish: {', '.join(missing)}")

    def c(worker: str, key: str) -> int:
        return ctr.get(worker, {}).get(key, 0)

    # schedstat: steals over the whole run
    try:
        before = schedstat.parse(sections.get("schedstat_before", ""))
        after = schedstat.parse(sections.get("schedstat_after", ""))
        d = schedstat.delta(before, after)
        with_counters = steal_counter_cpus(after)
        if p.series:
            if with_counters < len(after.cpus):
                fail(f"schedstat: the steal counters ({', '.join(schedstat.STEAL_FIELDS)}) "
                     f"on {with_counters} of {len(after.cpus)} CPUs in sched/debug, on a "
                     f"kernel said to have the series")
            v.counts["steals"] = d.totals["steal_tasks"]
            v.counts["steal_fail"] = d.totals["steal_failed"]
            v.counts["steal_search_ns"] = d.totals["steal_search_ns"]
        elif with_counters:
            fail(f"schedstat: steal counters on {with_counters} CPU(s), on a kernel said "
                 f"to be without the series")
        if _domain_names(before) != _domain_names(after):
            fail(f"sched domains differ after the run: before {_domain_names(before)}, "
                 f"after {_domain_names(after)}")
        v.details["schedstat_version"] = after.version
    except schedstat.SchedstatError as e:
        fail(f"schedstat: {e}")

    if p.scx:
        evaluate_scx(sections.get("scx_stop", ""), v)

    hb = ["hackbench0", "hackbench1", "thr_hackbench"]
    mc = ["msgcount0", "msgcount1", "thr_msgcount"]
    v.counts["hackbench_runs"] = sum(c(w, "runs") for w in hb) + c("partition", "hackbench")
    v.counts["hackbench_fails"] = sum(c(w, "fails") for w in hb) + c("partition", "hackbench_fails")
    v.counts["msgcount_fails"] = sum(c(w, "fails") for w in mc)
    v.counts["thr_msgcount_runs"] = c("thr_msgcount", "runs")
    v.counts["thr_hackbench_runs"] = c("thr_hackbench", "runs")
    v.counts["hotplug_offline"] = c("hotplug", "offline")
    v.counts["hotplug_online"] = c("hotplug", "online")
    v.counts["hotplug_ops"] = v.counts["hotplug_offline"] + v.counts["hotplug_online"]
    v.counts["hotplug_fail"] = c("hotplug", "fail")
    for k in ("created", "root", "invalid", "member", "removed", "errors", "join_fails"):
        v.counts[f"partition_{k}"] = c("partition", k)
    v.counts["partition_changes"] = c("partition", "root") + c("partition", "member")
    v.counts["domain_attach"] = c("dmesg", "attach")
    v.counts["domain_detach"] = c("dmesg", "detach")
    v.counts["domain_debug_errors"] = c("dmesg", "errors")
    v.counts["taskset_ok"] = c("taskset", "ok")
    v.counts["taskset_fail"] = c("taskset", "fail")
    v.counts["feature_sets"] = c("features", "sets")
    v.counts["feature_toggles"] = c("features", "steal_changes") + c("features", "dd_changes")
    v.counts["overload_reads"] = c("monitor", "overload_reads")
    v.counts["thr_busy_loops"] = c("thr_busy", "loops")

    runs = (parse_runs(sections.get("msgcount", "")) + parse_runs(sections.get("affinity", ""))
            + parse_runs(sections.get("wakelat", "")))
    mruns = [r for r in runs if r.kind == "MSGCOUNT"]
    aruns = [r for r in runs if r.kind == "AFFINITY"]
    v.counts["msgcount_runs"] = len(mruns)
    v.counts["messages"] = sum((r.result or {}).get("received", 0) for r in mruns)
    v.counts["affinity_runs"] = len(aruns)
    v.counts["wakelat_runs"] = len([r for r in runs if r.kind == "WAKELAT"])
    v.counts["wakelat_fails"] = c("wakelat", "fails")
    wmax = [(r.result or {}).get("lat_max_us", 0) for r in runs if r.kind == "WAKELAT"]
    if wmax:
        v.counts["wakelat_max_ms"] = max(wmax) // 1000
    stalls = [ln.strip() for ln in sections.get("wakelat", "").splitlines()
              if ln.startswith("STALL worker")]
    if stalls:
        v.details["wakelat_stalls"] = stalls
    v.counts["affinity_checks"] = sum((r.result or {}).get("checks", 0) for r in aruns)
    v.counts["affinity_violations"] = sum((r.result or {}).get("violations", 0) for r in aruns)
    v.counts["affinity_resets"] = sum((r.result or {}).get("affinity_resets", 0) for r in aruns)
    v.counts["affinity_inactive"] = sum((r.result or {}).get("inactive_mask", 0) for r in aruns)
    v.counts["affinity_mask_changes"] = sum((r.result or {}).get("mask_changes", 0) for r in aruns)
    run_problems = [pr for r in runs for pr in r.problems()]
    if run_problems:
        fail(f"{len(run_problems)} workload problem(s): " + "; ".join(run_problems[:10]))
    if len(mruns) != sum(c(w, "runs") for w in mc):
        fail(f"msgcount: {len(mruns)} results logged, workers counted "
             f"{sum(c(w, 'runs') for w in mc)} runs")
    if v.counts["hackbench_fails"] or v.counts["msgcount_fails"]:
        fail(f"failed runs: hackbench {v.counts['hackbench_fails']}, "
             f"msgcount {v.counts['msgcount_fails']}")
    if c("wakelat", "fails"):
        fail(f"wakelat failed {c('wakelat', 'fails')} time(s)")
    if c("affinity", "fails"):
        fail(f"affinity_check failed {c('affinity', 'fails')} time(s)")
    if v.counts["domain_debug_errors"]:
        fail(f"sched domain debug reported {v.counts['domain_debug_errors']} ERROR line(s)")
    if c("features", "fail"):
        fail(f"{c('features', 'fail')} feature write(s) failed")
    if v.counts["partition_created"] != v.counts["partition_removed"]:
        fail(f"partitions: {v.counts['partition_created']} created, "
             f"{v.counts['partition_removed']} removed")

    thr = parse_cpustat(sections.get("throttle", ""))
    v.counts["nr_throttled"] = thr.get("nr_throttled", 0)
    v.counts["throttled_usec"] = thr.get("throttled_usec", 0)

    cleanup = sections.get("cleanup", "")
    for line in cleanup.splitlines():
        if line.startswith("leftover"):
            fail(line)
    online = topology.parse_cpulist(sections.get("online_after", "").strip() or "-")
    if online != list(range(p.ncpus)):
        fail(f"CPUs online after the run: {sections.get('online_after', '').strip()!r}")
    feats = sections.get("features_after", "").split()
    if p.series and ("STEAL" not in feats or "DELAY_DEQUEUE" not in feats):
        fail("features not restored to STEAL DELAY_DEQUEUE")
    if not p.series and ("DELAY_DEQUEUE" not in feats or "STEAL" in feats
                         or "NO_STEAL" in feats):
        fail(f"features not restored to DELAY_DEQUEUE (no STEAL without the series): "
             f"{' '.join(f for f in feats if 'STEAL' in f or 'DELAY_DEQUEUE' in f)}")
    if p.series:
        check_overload(sections, v)

    for k, minimum in v.minimums.items():
        if v.counts.get(k, 0) < minimum:
            about = threshold_table(bool(p.scx), p.series)[k].about
            fail(f"{k} = {v.counts.get(k, 0)} < minimum {minimum} ({about}): "
                 f"the run did not exercise enough to mean anything")
    fl = sections.get("failures", "").strip()
    if fl:
        v.details["failure_log"] = fl.splitlines()[:60]
    v.details["tracing"] = sections.get("trace_setup", "").strip()
    excerpt = affinity_excerpt(sections.get("affinity_trace", ""))
    if excerpt:
        v.details["affinity_trace"] = excerpt
        v.details["affinity_moves"] = trace_moves(excerpt)
        race = stopper_race(excerpt)
        if race:
            # Still a failure: the kernel broke its promise.  But say whose.
            v.details["affinity_cause"] = race
            fail(f"the trace shows the mainline sched_setaffinity()/hotplug race "
                 f"(docs/stress.md#the-affinity-violation-a-mainline-race): tid {race['tid']} "
                 f"set mask {race['mask']} on cpu {race['cpu']}, cpu "
                 f"{race['deactivated_cpu']} was being deactivated, the stopper left it there")
    return v


def evaluate_scx(text: str, v: Verdict) -> None:
    """The loader's section: still in charge at the end, unloaded cleanly;
    "steals" is the sum of its final counters (scx.parse_stats())."""
    lines = [l.strip() for l in text.splitlines()]
    stuck = [i for i, l in enumerate(lines) if l.startswith("loader ") and "still running" in l]
    if stuck:     # scx_stop's report: the loader's threads and their stacks
        report = text.splitlines()[stuck[0]:stuck[0] + 60]
        v.failures.append("sched_ext loader did not exit after SIGINT:\n" + "\n".join(report))
    elif "rc 0" not in lines or "state disabled" not in lines:
        v.failures.append(f"sched_ext loader did not unload cleanly: {lines[:3]}")
    finals = [r for r in scx.parse_stats(text) if r["kind"] == "final"]
    v.counts["scx_loads"] = len(finals)
    v.counts["scx_restarts"] = sum("restarting" in l for l in lines)
    v.counts["steals"] = sum(int(r["steals"]) for r in finals)
    v.counts["steal_fail"] = sum(int(r["failed"]) for r in finals)
    v.counts["steal_search_ns"] = sum(int(r["search_ns"]) for r in finals)
    if not finals:
        v.failures.append("no final counter line from the sched_ext loader")

