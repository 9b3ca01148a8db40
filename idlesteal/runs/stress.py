"""Stress suite: try to break task stealing on the debug kernel.

One guest boot per topology runs, all at the same time and for S seconds:

  * message passing: hackbench (sockets/pipes, processes/threads) in loops,
    and msgcount in loops (every run must account for every message);
  * CPU hotplug churn: random CPUs (never cpu0) offline/online;
  * cpuset partitions (cgroup v2) created and destroyed, with a short
    hackbench inside each, so the sched domains (and with them the per-LLC
    overload masks) are rebuilt over and over;
  * affinity churn: affinity_check (threads that change their own masks and
    check where they run) and `taskset -p` on running hackbench/msgcount
    tasks;
  * a cgroup with a tight CFS bandwidth limit (cpu.max 50000 1000000, THROTTLE_MAX) running
    part of the message-passing load plus a busy loop (throttling);
  * STEAL/NO_STEAL and DELAY_DEQUEUE/NO_DELAY_DEQUEUE toggled every second;
  * a monitor reading /sys/kernel/debug/sched/overload_cpus and
    /proc/schedstat concurrently, and draining dmesg to count sched-domain
    attachments (sched/verbose is switched on: every rebuild logs
    "CPUn attaching sched-domain(s)" at KERN_DEBUG, i.e. not on the console).

Afterwards the script brings every CPU back online, removes its cgroups,
restores the features, and checks that no CPU is left marked overloaded.
`evaluate()` turns the guest output into counts and a pass/fail verdict;
`run()` boots, evaluates and writes results/stress/<stamp>-<preset>.json.

Pass means: no kernel error report on the console (vm.KERNEL_ERROR_RE), the
script ended cleanly, every worker finished, no hackbench / msgcount /
affinity_check run failed and every msgcount run accounted for every
message, the overload masks are empty and the domains are back as they were
at the end, and every activity counter reached its minimum (THRESHOLDS,
scaled with the run length) so that a pass means the code was exercised.
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import bases, paths
from ..kernel import build, provenance
from ..guest import image, topology, vm
from ..measure import kcsan, schedstat
from ..scx import own as scx
from ..guest import read as guest_file
from ..measure.overload import OVERLOAD, overload_settled, parse_overload
from ..util import HarnessError, log

VARIANT = "debug"
FEATURES = "/sys/kernel/debug/sched/features"
# The debug kernel boots slowly under TCG (KASAN shadow, lockdep).
BOOT_TIMEOUT = 600
# Soft-lockup threshold is 2 x watchdog_thresh: 60 s, like the RCU stall
# timeout of configs/debug.config (TCG on a shared 2-core host is slow).
# no5lvl: with TCG's "max" CPU the guest runs 5-level paging, and the KASAN
# kernel then reports, 0.4-0.8 s into boot, "BUG: KASAN: wild-memory-access
# in do_raw_spin_lock" from handle_edge_irq() interrupting identify_cpu()
# (a direct-map address, ff11..., whose shadow is not there yet): before SMP
# bring-up, so before any sched domain or steal exists.  Measured on
# 2x2x2 with `true` as the script: 2 of 20 boots without no5lvl, 0 of 28
# with it (2026-11-23); in `make test` it had once failed both the boot and
# its one retry.  4-level paging does not change what the stress tests.
CMDLINE = ("watchdog_thresh=30", "no5lvl")
# Tight CFS bandwidth limit for the throttled cgroup: 5 ms per 100 ms.
# 5 % of one CPU, with a 1 s period rather than the default 100 ms: when
# the period timer's callback overruns its period several times in a row
# (routine under TCG on a loaded host) upstream sched_cfs_period_timer()
# printk()s "period too short, scaling up" under cfs_b->lock, and lockdep
# then reports a circular dependency through the serial console (cfs_b->lock
# -> console_owner -> port_lock -> tty->write_wait -> pi_lock -> rq->__lock
# -> cfs_b->lock).  That is an upstream printk-in-scheduler issue, not the
# series; with a 1 s period the callback would have to be late by seconds.
THROTTLE_MAX = "50000 1000000"


def results_dir() -> Path:
    return paths.results_dir() / "stress"


# ------------------------------------------------------------------ thresholds

@dataclass(frozen=True)
class Threshold:
    """Minimum for one counter: max(floor, per_minute * minutes), rounded up."""
    per_minute: float
    floor: int
    about: str

    def minimum(self, seconds: float) -> int:
        return max(self.floor, math.ceil(self.per_minute * seconds / 60.0))


# Calibrated on the debug kernel (KASAN inline + lockdep) under TCG on a
# shared 2-core host (load average 10-15 from other builds and guests).
# The 600 s 2x2x2 run reached per minute: 176 steals, 17.5 hotplug ops,
# 14 partition switches, 152 domain attachments, 70 throttled periods (at most
# 60/min per cgroup, plus some scaling slack), 14 msgcount and 21 hackbench runs,
# 21700 affinity checks, 19 tasksets, 24 feature changes; 2node ran
# faster.  The minimums are roughly half of that: a slow host still passes,
# a stalled activity (a hung hotplug, a dead partition loop, no stealing)
# fails.
THRESHOLDS: dict[str, Threshold] = {
    "steals": Threshold(100, 60, "successful steals (schedstat delta, all CPUs)"),
    "hotplug_ops": Threshold(8, 5, "successful CPU offline + online operations"),
    "partition_changes": Threshold(6, 4, "successful cpuset partition root/member switches"),
    "domain_attach": Threshold(70, 40, "'CPUn attaching sched-domain(s)' log lines (rebuilds)"),
    "nr_throttled": Threshold(30, 20, "CFS bandwidth throttle events (cpu.stat nr_throttled)"),
    "msgcount_runs": Threshold(4, 4, "msgcount runs, every message accounted"),
    "hackbench_runs": Threshold(4, 4, "hackbench runs"),
    "affinity_checks": Threshold(6000, 2000, "affinity_check checks"),
    "taskset_ok": Threshold(8, 5, "taskset -p on running message-passing tasks"),
    "feature_toggles": Threshold(10, 5, "STEAL / DELAY_DEQUEUE changes"),
}


# Under a sched_ext scheduler (--scx) "steals" is the scheduler's own
# counter, summed over its loads ("final" lines).  Until scx_idlesteal had
# cpu_online/offline callbacks (2026-11-25) every hotplug made sched_ext
# exit it and the minimums here were lowered (steals 5, hotplug_ops 6, a CPU
# change every 2 s); it now stays in charge through hotplug (2,470 steals
# and 21 CPU changes in make test's 60 s 2x2x2 run at one change every 2 s)
# and takes the suite's own minimums and hotplug period; "steals" keeps
# its description (the scheduler's counter, not schedstat).
# cpu.max is not enforced while it is in charge (sched_ext applies CFS
# bandwidth only through a scheduler's cgroup callbacks, and scx_idlesteal
# implements cpu.weight but not ops.cgroup_set_bandwidth), so nr_throttled
# has no minimum.
SCX_THRESHOLDS: dict[str, Threshold] = {
    "steals": Threshold(100, 60, "the sched_ext scheduler's steals, summed over its loads"),
}
NOT_UNDER_SCX = ("nr_throttled",)


# With STEAL off for the whole run (--steal off) nothing steals.
NOT_WITHOUT_STEAL = ("steals",)


# A kernel built without the series (a %base variant of configs/variants:
# `stress --variant mainline-debug`, for telling the base kernel's own
# problems from the series') has no overload mask, no STEAL feature and no
# steal counters.  The host decides it from the variant (series_kernel())
# and tells the guest (SERIES=0); these checks are then off, each for the
# reason given, and the summary and the report list them.  On a kernel said
# to have the series each of the three must be there (the guest script and
# evaluate() fail otherwise), and on one said to be without it none may be.
CHECKS_OFF_WITHOUT_SERIES: dict[str, str] = {
    "overload_cpus": "no /sys/kernel/debug/sched/overload_cpus (the series' per-LLC "
                     "overload mask): not read during the run, not checked empty at the end",
    "steal_toggles": "no STEAL sched feature: only DELAY_DEQUEUE is toggled, and the "
                     "features are checked restored to DELAY_DEQUEUE alone",
    "steal_counters": "no steal_tasks / steal_failed / steal_search_ns in sched/debug: "
                      "no steal count and no minimum for it",
}
NOT_WITHOUT_SERIES = ("steals",)
# Without STEAL only DELAY_DEQUEUE changes: a change in half of the 1 s
# toggles instead of about 7 in 8 (STEAL on 3/4 of the time and
# DELAY_DEQUEUE random), so the minimum scales by 4/7.  A 60 s 2x2x2 run on
# mainline-debug (2026-11-25, two guests on the 2 host cores) made 8.
NO_SERIES_THRESHOLDS: dict[str, Threshold] = {
    "feature_toggles": Threshold(6, 4, "DELAY_DEQUEUE changes (no STEAL without the series)"),
}


def series_kernel(variant: str) -> bool:
    """Does the variant's kernel have the series?  No for a %base variant
    (built from the base tag, build.from_base()), nor for any variant of a
    kernel base the series does not apply to yet (bases.Base.series)."""
    return bases.current().series and not build.from_base(variant)


def threshold_table(scx: bool = False, series: bool = True) -> dict[str, Threshold]:
    """The minimums' definitions for a run under sched_ext or not, on a
    kernel with the series or not."""
    table = dict(THRESHOLDS)
    if scx:
        table.update(SCX_THRESHOLDS)
    if not series:
        table.update(NO_SERIES_THRESHOLDS)
    return table


def thresholds(seconds: float, scx: bool = False, steal: str = "toggle",
               series: bool = True) -> dict[str, int]:
    table = threshold_table(scx, series)
    return {k: t.minimum(seconds) for k, t in table.items()
            if not (scx and k in NOT_UNDER_SCX)
            and not (steal == "off" and not scx and k in NOT_WITHOUT_STEAL)
            and not (not series and k in NOT_WITHOUT_SERIES)}


# ------------------------------------------------------------------ guest script

@dataclass(frozen=True)
class Params:
    seconds: int
    ncpus: int
    # Message-passing sizes (small: KASAN + lockdep under TCG are slow).
    # Fewer, lighter tasks steal more: with ~100 runnable tasks the CPUs
    # are hardly ever idle.  wakelat (request/response wakeups) is the
    # steadiest steal generator measured here (~300 steals/s alone).
    hackbench: str = "-g 1 -f 6 -l 40"
    msgcount: tuple[int, int, int] = (1, 6, 30)          # groups, fds, loops
    wakelat: str = "-m 4 -w 4"
    throttled_msgcount: tuple[int, int, int] = (1, 2, 10)
    throttled_hackbench: str = "-g 1 -f 2 -l 10"
    partition_hackbench: str = "-g 1 -f 4 -l 10"
    affinity: str = "-t 6 -c 20"                         # affinity_check args
    affinity_run: int = 15                               # seconds per affinity_check run
    hotplug_sleep: str = "0.5"
    partition_sleep: str = "1"
    # Time between partitions: while one exists, the root tasks lose its
    # CPUs (a whole LLC on 2x2x2/2node) and those CPUs barely steal.
    partition_gap: str = "3"
    msgcount_timeout: int = 300
    # A sched_ext loader (argv) in charge for the whole load (docs/scx.md):
    # started after the setup, stopped before the cleanup; () = EEVDF.
    scx: tuple[str, ...] = ()
    # "toggle": STEAL on 3/4 of the time, toggled every second; "off":
    # NO_STEAL for the whole run (`stress --steal off`), to tell the
    # series' moves from the rest of the kernel's.
    steal: str = "toggle"
    # Trace ring buffer per CPU (KiB) and the lines of it kept from a run
    # with an affinity violation (guest/stress.sh, section affinity_trace).
    trace_buffer_kb: int = 2048
    trace_excerpt: int = 400
    # False: a kernel without the series (a %base variant; series_kernel()):
    # the checks of CHECKS_OFF_WITHOUT_SERIES are off (SERIES=0 in the guest).
    series: bool = True

    def checks_off(self) -> dict[str, str]:
        """The checks this run leaves out, with why."""
        return {} if self.series else dict(CHECKS_OFF_WITHOUT_SERIES)

    @property
    def low_cpus(self) -> str:
        """affinity_check runs here; partitions never take these CPUs."""
        return f"0-{self.ncpus // 2 - 1}"

    def partition_choices(self) -> list[str]:
        """cpuset.cpus of the partitions: subsets of the upper half (the
        second LLC on 2x2x2 and 2node), whole, split, odd and across cores."""
        lo = self.ncpus // 2
        hi = self.ncpus - 1
        return [f"{lo}-{hi}", f"{lo}-{lo + 1}", f"{hi - 1}-{hi}", f"{lo + 1}-{hi}",
                f"{lo},{lo + 2}", f"{lo + 1}-{lo + 2}", f"{lo}-{hi - 1}"]


WORKERS = ("hackbench0", "hackbench1", "msgcount0", "msgcount1", "wakelat", "thr_msgcount",
           "thr_hackbench", "thr_busy", "hotplug", "partition", "affinity", "taskset",
           "features", "monitor")


def script_params(p: Params) -> dict[str, object]:
    """The shell variables guest/stress.sh reads (it checks each is set)."""
    n = p.ncpus
    g, f, l = p.msgcount
    tg, tf, tl = p.throttled_msgcount
    return {
        "N": n, "DURATION": p.seconds, "FEAT": FEATURES, "OVERLOAD": OVERLOAD,
        "THROTTLE_MAX": THROTTLE_MAX,
        "HACKBENCH": p.hackbench, "MSGCOUNT": f"-g {g} -f {f} -l {l}",
        "MSGCOUNT_EXPECT": g * f * f * l,
        "THR_MSGCOUNT": f"-g {tg} -f {tf} -l {tl}", "THR_MSGCOUNT_EXPECT": tg * tf * tf * tl,
        "THR_HACKBENCH": p.throttled_hackbench, "PART_HACKBENCH": p.partition_hackbench,
        "AFFINITY": p.affinity, "AFFINITY_RUN": p.affinity_run, "WAKELAT": p.wakelat,
        "LOW_CPUS": p.low_cpus, "HOTPLUG_SLEEP": p.hotplug_sleep,
        "PART_SLEEP": p.partition_sleep, "PART_GAP": p.partition_gap,
        "PART_CHOICES": " ".join(p.partition_choices()), "MAXOFF": max(1, n // 2 - 1),
        "MAXMASK": (1 << n) - 1, "MC_TIMEOUT": p.msgcount_timeout,
        "WORKERS": " ".join(WORKERS), "SCX": shlex.join(p.scx),
        "STEAL_MODE": p.steal, "TRACE_BUFFER_KB": p.trace_buffer_kb,
        "TRACE_EXCERPT": p.trace_excerpt, "SERIES": int(p.series),
    }


def script(p: Params) -> str:
    """The busybox-ash guest script: a generated preamble (the run's
    parameters as shell variables, script_params(), and the functions
    guest_topology and overload_settled) followed by idlesteal/guest/stress.sh."""
    pre = ["# idlesteal stress run: parameters (generated by idlesteal/runs/stress.py)"]
    pre += [f"{k}={shlex.quote(str(v))}" for k, v in script_params(p).items()]
    pre += ["guest_topology() {", topology.GUEST_SNIPPET.strip(), "}",
            "overload_settled() {", overload_settled("$D/ov").strip(), "}"]
    return "\n".join(pre) + "\n\n" + guest_file("stress.sh")


# ------------------------------------------------------------------ parsing

_KV = re.compile(r"(\w+)=(-?\d+)")


def parse_counters(text: str) -> dict[str, dict[str, int]]:
    """'name key=value ...' lines -> {name: {key: value}}; 'name missing'
    gives {name: {"missing": 1}}."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        tok = line.split()
        if not tok:
            continue
        name = tok[0]
        if tok[1:] == ["missing"]:
            out[name] = {"missing": 1}
            continue
        out[name] = {k: int(v) for k, v in _KV.findall(line)}
    return out


@dataclass
class RunRecord:
    """One msgcount / affinity_check run as the guest logged it."""
    kind: str                  # MSGCOUNT, AFFINITY or WAKELAT
    worker: str
    rc: int
    expect: int | None
    result: dict | None        # the RESULT json, None when missing/garbled

    def problems(self) -> list[str]:
        what = f"{self.kind.lower()} {self.worker}".strip()
        if self.result is None:
            return [f"{what}: no RESULT line (rc={self.rc})"]
        r = self.result
        out = []
        if self.rc != 0:
            out.append(f"{what}: exit code {self.rc}")
        if self.kind == "MSGCOUNT":
            sent, recv = r.get("sent"), r.get("received")
            if sent != recv or (self.expect is not None and sent != self.expect):
                out.append(f"{what}: sent {sent}, received {recv}, expected {self.expect}")
            for k in ("errors", "seq_gaps", "seq_backwards", "malformed", "payload_errors"):
                if r.get(k, 0):
                    out.append(f"{what}: {k}={r[k]}")
            if r.get("timeout") or r.get("system_error"):
                out.append(f"{what}: timeout={r.get('timeout')} system_error={r.get('system_error')}")
        elif self.kind == "AFFINITY":
            if r.get("violations", 0):
                out.append(f"{what}: {r['violations']} affinity violation(s)")
        return out


_RUN_RE = re.compile(r"^(MSGCOUNT|AFFINITY|WAKELAT)\s+(?:(\S+)\s+)??rc=(-?\d+)(?:\s+expect=(\d+))?"
                     r"(?:\s+RESULT\s+(\{.*\}))?\s*$")


def parse_runs(text: str) -> list[RunRecord]:
    runs = []
    for line in text.splitlines():
        m = _RUN_RE.match(line.strip())
        if not m:
            continue
        try:
            result = json.loads(m.group(5)) if m.group(5) else None
        except ValueError:
            result = None
        runs.append(RunRecord(m.group(1), m.group(2) or "", int(m.group(3)),
                              int(m.group(4)) if m.group(4) else None, result))
    return runs


def parse_cpustat(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) == 2 and tok[1].lstrip("-").isdigit():
            out[tok[0]] = int(tok[1])
    return out


# ------------------------------------------------------------------ evaluation

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


_MIGRATE_RE = re.compile(r"sched_migrate_task: comm=\S+ pid=(\d+) prio=\d+ "
                         r"orig_cpu=(\d+) dest_cpu=(\d+)")
_STAMP_TRACE_RE = re.compile(r"\s(\d+\.\d+):\s")


def affinity_excerpt(text: str) -> list[str]:
    """The trace lines guest/stress.sh kept for the first violation ([] when
    the run had none, or ran without tracing)."""
    lines = [l.rstrip() for l in text.splitlines() if l.strip()]
    if not lines or lines == ["no violation in the trace"]:
        return []
    return lines


_LINE_RE = re.compile(r"\[(\d+)\]\s+\S+\s+(\d+\.\d+):\s+(\w+):\s+(.*)$")
_SETAFF_RE = re.compile(r"affinity_check: tid (\d+) setaffinity (\S+)")
_VIOL_RE = re.compile(r"affinity_check: VIOLATION tid (\d+) rseq_cpu (-?\d+) getcpu (-?\d+) "
                      r"stat_cpu (-?\d+) mask (\S+)")
_SWITCH_RE = re.compile(r"prev_pid=(\d+) .*==> next_comm=(\S+) next_pid=(\d+)")
_DEACT_RE = re.compile(r"^cpu: (\d+) .*\(sched_cpu_deactivate\)")


def _events(lines: list[str]) -> list[tuple[int, float, str, str]]:
    """(cpu, time, event, text) of each event line of an excerpt."""
    out = []
    for line in lines:
        m = _LINE_RE.search(line)
        if m:
            out.append((int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)))
    return out


def stopper_race(lines: list[str]) -> dict | None:
    """Does the trace show the mainline race of docs/stress.md (a
    sched_setaffinity() that returned with the thread outside its new
    mask because the destination CPU was deactivated before the stopper
    moved it)?  Evidence required, in the excerpt of the violating thread:

      * the violation's CPU C is outside the mask M, and the thread's last
        mask change before it set M while running on C;
      * between the thread's previous mask change and that one, the
        stopper of C (migration/C) preempted the thread and handed C back
        to it, and no sched_migrate_task moved the thread;
      * a sched_cpu_deactivate() of a CPU of M began before the stopper ran.

    Returns what was found, or None when any piece is missing."""
    ev = _events(lines)
    viol = next(((i, e) for i, e in enumerate(ev) if _VIOL_RE.search(e[3])), None)
    if viol is None:
        return None
    vi, (vcpu, vtime, _, vtext) = viol
    vm = _VIOL_RE.search(vtext)
    assert vm is not None
    tid, mask_text = vm.group(1), vm.group(5)
    mask = set(topology.parse_cpulist(mask_text))
    cpu = int(vm.group(3))
    if cpu in mask:
        return None
    sets = [i for i in range(vi) if (m := _SETAFF_RE.search(ev[i][3])) and m.group(1) == tid]
    if not sets:
        return None
    last = sets[-1]
    m = _SETAFF_RE.search(ev[last][3])
    if m is None or m.group(2) != mask_text or ev[last][0] != cpu:
        return None
    prev = sets[-2] if len(sets) > 1 else -1
    stopper = None
    for i in range(last - 1, prev, -1):
        c, t, name, text = ev[i]
        if name == "sched_migrate_task" and f"pid={tid} " in text:
            return None
        sw = _SWITCH_RE.search(text) if name == "sched_switch" else None
        if sw and c == cpu and sw.group(1) == tid and sw.group(2) == f"migration/{cpu}":
            stopper = i
            break
    if stopper is None:
        return None
    deact = [(ev[i][1], int(d.group(1))) for i in range(stopper)
             if ev[i][2] == "cpuhp_enter" and (d := _DEACT_RE.search(ev[i][3]))
             and int(d.group(1)) in mask]
    if not deact:
        return None
    return {"tid": int(tid), "cpu": cpu, "mask": mask_text,
            "deactivated_cpu": deact[-1][1], "deactivate_time": deact[-1][0],
            "stopper_time": ev[stopper][1], "setaffinity_time": ev[last][1],
            "violation_time": vtime}


def trace_moves(lines: list[str]) -> list[dict]:
    """Every sched_migrate_task of the excerpt with the kernel stack that
    made it: [{"time", "pid", "orig_cpu", "dest_cpu", "stack": [func, ...]}].
    The path of a move is read from its stack (steal_from: the series'
    steal; sched_balance_rq: load balancing; migration_cpu_stop: an
    affinity change or active balance; select_fallback_rq: hotplug
    fallback; try_to_wake_up: wakeup placement)."""
    moves: list[dict] = []
    cur: dict | None = None
    for line in lines:
        m = _MIGRATE_RE.search(line)
        if m:
            t = _STAMP_TRACE_RE.search(line)
            cur = {"time": float(t.group(1)) if t else None, "pid": int(m.group(1)),
                   "orig_cpu": int(m.group(2)), "dest_cpu": int(m.group(3)), "stack": []}
            moves.append(cur)
        elif line.lstrip().startswith("=> ") and cur is not None:
            cur["stack"].append(line.split("=>", 1)[1].strip())
        elif "<stack trace>" not in line:
            cur = None
    return moves


def evaluate_scx(text: str, v: Verdict) -> None:
    """The loader's section: still in charge at the end, unloaded cleanly;
    "steals" is the sum of its final counters (scx.parse_stats())."""
    lines = [l.strip() for l in text.splitlines()]
    if "rc 0" not in lines or "state disabled" not in lines:
        v.failures.append(f"sched_ext loader did not unload cleanly: {lines[:3]}")
    finals = [r for r in scx.parse_stats(text) if r["kind"] == "final"]
    v.counts["scx_loads"] = len(finals)
    v.counts["scx_restarts"] = sum("restarting" in l for l in lines)
    v.counts["steals"] = sum(int(r["steals"]) for r in finals)
    v.counts["steal_fail"] = sum(int(r["failed"]) for r in finals)
    v.counts["steal_search_ns"] = sum(int(r["search_ns"]) for r in finals)
    if not finals:
        v.failures.append("no final counter line from the sched_ext loader")


# ------------------------------------------------------------------ known mainline warnings

@dataclass(frozen=True)
class KnownWarning:
    """A kernel warning reproduced on the kernel without the series and
    documented in docs/stress.md: recognised by its WARNING line (file:line,
    function, the task) and by its call path on the console, nothing else.
    A run that prints it is not failed for it; the report and the summary
    name it loudly.  The same line with another call path is a failure."""
    name: str
    anchor: str                  # docs/stress.md#...
    line: re.Pattern[str]        # the WARNING line; group "cpu": the CPU it names
    path: tuple[str, ...]        # the call path, innermost first (reliable frames)
    skip: frozenset[str]         # frames allowed before the path (inlined or not)
    about: str

    def path_matches(self, frames: list[str]) -> bool:
        rest = [f for f in frames if f not in self.skip]
        return rest[:len(self.path)] == list(self.path)


CPUSET_OVERLAP = KnownWarning(
    name="cpuset-partition-hotplug-overlap",
    anchor="docs/stress.md#a-mainline-cpuset-warning-overlapping-partitions-after-hotplug",
    line=re.compile(r"WARNING: \S*kernel/cgroup/cpuset\.c:888 at "
                    r"rebuild_sched_domains_locked\+0x[0-9a-f]+/0x[0-9a-f]+, "
                    r"CPU#(?P<cpu>\d+): cpuhp/(?P=cpu)/\d+"),
    path=("cpuset_handle_hotplug", "cpuset_update_active_cpus", "sched_cpu_activate",
          "cpuhp_invoke_callback"),
    skip=frozenset({"rebuild_sched_domains_locked", "rebuild_sched_domains_cpuslocked",
                    "generate_sched_domains"}),
    about="Linux 7.2 cpuset: a populated partition root that lost all its CPUs to "
          "hotplug and got two back one at a time shares the second with the top cpuset "
          "(overlapping partition roots in generate_sched_domains())",
)
KNOWN_WARNINGS: tuple[KnownWarning, ...] = (CPUSET_OVERLAP,)


def known_tolerated() -> re.Pattern[str]:
    """Console lines vm.run_script() does not fail a run for: the WARNING
    lines of KNOWN_WARNINGS (each then checked by known_warnings())."""
    return re.compile("|".join(f"(?:{k.line.pattern})" for k in KNOWN_WARNINGS))


def tolerated(kcsan_races: bool) -> re.Pattern[str]:
    pats = [known_tolerated().pattern] + ([kcsan.DATA_RACE.pattern] if kcsan_races else [])
    return re.compile("|".join(f"(?:{p})" for p in pats))


_FRAME_RE = re.compile(r"^\[\s*[\d.]+\]\s+(\? )?([A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+")
_CONSOLE_TS_RE = re.compile(r"^\[\s*([\d.]+)\]")
_KLOG_PART_RE = re.compile(r"stress: partition (\d+) cpus (\S+) (root: .*|remove)$")
_CPU_OFF_RE = re.compile(r"smpboot: CPU (\d+) is now offline")
_CPU_ON_RE = re.compile(r"smpboot: Booting Node \d+ Processor (\d+) ")


def call_trace(lines: list[str], start: int) -> list[str]:
    """The reliable frames (no '? ') of the Call Trace that follows the
    report at lines[start], innermost first ([] when there is none)."""
    frames: list[str] = []
    in_trace = False
    for line in lines[start + 1:start + 200]:
        if "Call Trace:" in line:
            in_trace = True
            continue
        if not in_trace:
            if "---[ end trace" in line:
                break
            continue
        if "</TASK>" in line or "---[ end trace" in line:
            break
        m = _FRAME_RE.match(line.strip())
        if m and not m.group(1):
            frames.append(m.group(2))
    return frames


def partition_sequence(lines: list[str], upto: int, cpu: int) -> dict:
    """The evidence on the console for the documented sequence, from the
    stress script's partition lines (klog) and the kernel's hotplug lines
    before lines[upto]: the last partition created before it and not
    removed, whose CPUs include `cpu`, had all its CPUs offline at some
    point after it was made, and another of its CPUs came online after that
    and before `cpu` did.  {"markers": False} when the console has no
    partition lines (runs before 2026-11-25)."""
    online: set[int] | None = None
    part: dict | None = None
    steps: list[str] = []
    markers = False
    for line in lines[:upto]:
        ts = _CONSOLE_TS_RE.match(line.strip())
        t = ts.group(1) if ts else "?"
        if (m := _KLOG_PART_RE.search(line)):
            markers = True
            if m.group(3) == "remove":
                part = None
                continue
            cpus = set(topology.parse_cpulist(m.group(2)))
            state = m.group(3)[len("root: "):]
            on = re.search(r"online (\S+)$", state)
            online = set(topology.parse_cpulist(on.group(1))) if on else online
            part = {"id": int(m.group(1)), "cpus": m.group(2), "set": cpus, "emptied": False,
                    "back_first": None}
            steps = [f"{t} partition {m.group(1)} cpus {m.group(2)} root: {state}"]
        elif (m := _CPU_OFF_RE.search(line)) or (m := _CPU_ON_RE.search(line)):
            c = int(m.group(1))
            going_on = bool(_CPU_ON_RE.search(line))
            if online is not None:
                (online.add if going_on else online.discard)(c)
            if part is not None and c in part["set"]:
                steps.append(f"{t} CPU {c} {'online' if going_on else 'offline'}")
                if online is not None and not going_on and not (part["set"] & online):
                    part["emptied"], part["back_first"] = True, None
                elif going_on and part["emptied"] and part["back_first"] is None and c != cpu:
                    part["back_first"] = c
    if not markers:
        return {"markers": False}
    ok = bool(part and cpu in part["set"] and len(part["set"]) >= 2 and part["emptied"]
              and part["back_first"] is not None)
    return {"markers": True, "matches": ok, "partition": part["cpus"] if part else None,
            "steps": steps[-12:]}


def known_warnings(console_text: str) -> tuple[list[dict], list[str]]:
    """(the known warnings the console shows, failures): every line that
    known_tolerated() let through must be a KNOWN_WARNINGS entry with its
    call path, and -- where the console has the stress script's partition
    lines -- after the documented sequence; otherwise it is a failure."""
    lines = console_text.splitlines()
    found: list[dict] = []
    failures: list[str] = []
    tol = known_tolerated()
    for i, line in enumerate(lines):
        if not tol.search(line):
            continue
        k = next(k for k in KNOWN_WARNINGS if k.line.search(line))
        m = k.line.search(line)
        assert m is not None
        cpu = int(m.group("cpu"))
        frames = call_trace(lines, i)
        seq = partition_sequence(lines, i, cpu)
        rec = {"name": k.name, "anchor": k.anchor, "line": line.strip(), "cpu": cpu,
               "call_path": frames[:8], "sequence": seq}
        if not k.path_matches(frames):
            failures.append(f"kernel warning with the line of {k.name} but not its call path "
                            f"({' <- '.join(k.path)}): {line.strip()} [{' <- '.join(frames[:6])}]")
        elif seq["markers"] and not seq["matches"]:
            failures.append(f"kernel warning {k.name} ({line.strip()}) without the documented "
                            f"partition/hotplug sequence before it on the console "
                            f"({k.anchor}): {'; '.join(seq['steps'][-6:]) or 'no partition'}")
        else:
            found.append(rec)
    return found, failures


def known_line(k: dict) -> str:
    return (f"KNOWN MAINLINE WARNING (not a failure of the series; {k['anchor']}): "
            f"{k['line']}")


# ------------------------------------------------------------------ running

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


# The suite's own CPU change period under sched_ext too: scx_idlesteal stays
# in charge through hotplug (it was "2" while every change restarted it).
SCX_HOTPLUG_SLEEP = "0.5"


STEAL_MODES = ("toggle", "off")


def params_for(preset: topology.Preset, seconds: int, scx_loader: tuple[str, ...] = (),
               steal: str = "toggle", series: bool = True) -> Params:
    if steal not in STEAL_MODES:
        raise HarnessError(f"stress: steal mode {steal!r}, expected one of {', '.join(STEAL_MODES)}")
    if not series and (steal != "toggle" or scx_loader):
        raise HarnessError("stress: --steal off and --scx need a kernel with the series")
    if scx_loader:
        return Params(seconds=seconds, ncpus=preset.ncpus, scx=scx_loader,
                      hotplug_sleep=SCX_HOTPLUG_SLEEP, steal=steal)
    return Params(seconds=seconds, ncpus=preset.ncpus, steal=steal, series=series)


def timeout_for(p: Params) -> float:
    """Script time limit: the load, the slowest in-flight run after the
    deadline (msgcount -T), cleanup."""
    return p.seconds + p.msgcount_timeout + 240


_SMP_UP_RE = re.compile(r"^\[\s*([0-9.]+)\] smp: Bringing up secondary CPUs", re.M)
_STAMP_RE = re.compile(r"^\[\s*([0-9.]+)\]")


def errors_before_smp(console_text: str) -> list[str]:
    """The kernel error lines of a console log if *all* of them were printed
    before the secondary CPUs came up, else [].

    Before SMP bring-up the boot CPU runs alone: no sched domain, no overload
    mask and no steal exists yet, so such a report (e.g. the debug kernel's
    early-boot KASAN report in handle_edge_irq() seen once under TCG) is not
    the series' and says nothing about the load.  Anything later counts."""
    errs = vm.kernel_errors(console_text, known_tolerated())
    m = _SMP_UP_RE.search(console_text)
    if not errs or not m:
        return []
    smp_at = float(m.group(1))
    for e in errs:
        t = _STAMP_RE.match(e)
        if not t or float(t.group(1)) >= smp_at:
            return []
    return errs


def check_preset(preset: topology.Preset) -> None:
    """Raise unless the stress script can run on `preset` (half the CPUs
    stay out of partitions, one partition choice spans two CPUs above)."""
    if preset.ncpus < 4 or preset.ncpus % 2:
        raise HarnessError(f"stress needs an even number of >= 4 CPUs, {preset.name} has {preset.ncpus}")


def run(preset_name: str, seconds: int, kernel: Path, initrd: Path, *,
        variant: str = VARIANT, outdir: Path | None = None,
        append: list[str] | None = None, kcsan_races: bool = False,
        scx_loader: tuple[str, ...] = (), steal: str = "toggle") -> tuple[dict, Path]:
    """Boot, stress, evaluate; write and return the JSON summary (never
    raises for a failed run: the summary says why).

    kcsan_races: the kernel has KCSAN; its data-race reports are collected
    and sorted (idlesteal/measure/kcsan.py) instead of failing the boot, and the run
    fails if one touches the series.

    scx_loader: a sched_ext loader's argv (in `initrd`, on a kernel with
    sched_ext) in charge during the load; the run also fails if sched_ext
    ejects it (scx.EJECTED: an error or the watchdog's stall)."""
    preset = dataclasses.replace(topology.get(preset_name),
                                 boot_timeout=max(BOOT_TIMEOUT, topology.get(preset_name).boot_timeout))
    check_preset(preset)
    p = params_for(preset, seconds, scx_loader, steal, series_kernel(variant))
    log(f"stress: {preset.name} for {seconds} s on kernel {kernel}"
        + (f" under {shlex.join(scx_loader)}" if scx_loader else "")
        + ("" if p.series else f" (variant {variant}: no series, checks off: "
           f"{', '.join(p.checks_off())})"))
    error = None
    guest: dict = {}
    v = Verdict(minimums=thresholds(seconds))
    uname = ""
    retried: list[dict] = []
    try:
        for attempt in (1, 2):
            try:
                res = vm.run_script(script(p), preset, kernel, initrd, timeout=timeout_for(p),
                                    name="stress", cmdline=[*CMDLINE, *(append or [])],
                                    meta=run_meta(preset.name, seconds, variant, p.steal),
                                    tolerate=tolerated(kcsan_races))
                break
            except vm.GuestKernelError as e:
                early = errors_before_smp(e.console.read_text(errors="replace"))
                if attempt == 2 or not early:
                    raise
                # Kept in the summary and printed; one retry only.
                log(f"stress: kernel error before SMP bring-up (not the series'), booting "
                    f"again: {early[0]}")
                retried.append({"console": str(e.console), "kernel_errors": early[:10]})
        guest = {"run_dir": str(res.run_dir), "console": str(res.console),
                 "boot_seconds": round(res.boot_seconds, 1),
                 "total_seconds": round(res.seconds, 1),
                 "stale_code_retries": [str(d) for d in res.retried]}
        uname = res.sections.get("meta", "").strip()
        try:
            topology.verify(preset, res.sections.get("topology", ""))
        except topology.TopologyError as e:
            v.failures.append(str(e))
        ev = evaluate(res.sections, p)
        ev.failures = v.failures + ev.failures
        v = ev
        known, unknown = known_warnings(res.console.read_text(errors="replace"))
        if known:
            v.details["known_warnings"] = known
        v.failures += unknown
        ejected = scx.EJECTED.search(res.console.read_text(errors="replace"))
        if ejected:
            v.failures.append(f"sched_ext ejected the scheduler: {ejected.group(0)}")
        if kcsan_races:
            races = kcsan.summarize(kcsan.parse(res.console.read_text(errors="replace")))
            v.details["kcsan"] = races
            if races["series"]:
                v.failures.append(f"KCSAN: {sum(races['series'].values())} data-race "
                                  f"report(s) touch the series: {', '.join(races['series'])}")
    except vm.GuestError as e:
        error = f"{type(e).__name__}: {e}"
        guest = {"run_dir": str(e.run_dir), "console": str(e.console)}
        try:
            text = e.console.read_text(errors="replace")
            guest["kernel_errors"] = vm.kernel_errors(text, tolerated(kcsan_races))[:50]
            m = re.search(r"Linux version (\S+)", text)
            uname = m.group(1) if m else ""
            known, unknown = known_warnings(text)
            if known:
                v.details["known_warnings"] = known
            v.failures += unknown
        except OSError:
            pass
        # Whatever the guest managed to print is still worth counting.
        out = e.run_dir / "output.log"
        if out.exists():
            parsed = _parse_partial(out.read_text(errors="replace"))
            if parsed:
                try:
                    part = evaluate(parsed, p)
                    v.counts = part.counts
                except Exception:  # partial output: counts only, best effort
                    pass
    if retried:
        guest["retried_boots"] = retried
    s = summary(preset, p, v, variant=variant, uname=uname, guest=guest, error=error)
    path = write_summary(s, outdir)
    return s, path


def run_meta(preset_name: str, seconds: int, variant: str, steal: str = "toggle") -> dict:
    """What run() keeps as the run directory's run.json (vm.RUN_META), for
    reevaluate() / `idlesteal collect` (which tells a kernel without the
    series by its variant, series_kernel(), as run() does)."""
    return {"kind": "stress", "preset": preset_name, "seconds": seconds, "variant": variant,
            "steal": steal}


def reevaluate(run_dir: Path, preset_name: str, seconds: int, *, variant: str = VARIANT,
               note: str = "", steal: str = "toggle") -> dict:
    """Judge a kept run (build/runs/<id>/) again with the current rules,
    as run() would have: topology check, evaluate(), and the kernel-error
    check repeated on its console log.  A truncated output (no END marker)
    is judged on what it has and fails.  Raises OSError when output.log or
    console.log cannot be read."""
    preset = topology.get(preset_name)
    p = params_for(preset, seconds, steal=steal, series=series_kernel(variant))
    raw = (run_dir / "output.log").read_text(errors="replace")
    console = (run_dir / "console.log").read_text(errors="replace")
    sections = _parse_partial(raw)
    v = evaluate(sections, p)
    try:
        topology.verify(preset, sections.get("topology", ""))
    except topology.TopologyError as e:
        v.failures.insert(0, str(e))
    errs = vm.kernel_errors(console, tolerated(False))
    known, unknown = known_warnings(console)
    if known:
        v.details["known_warnings"] = known
    v.failures += unknown
    problems = []
    if errs:
        problems.append("kernel reported errors: " + "; ".join(errs[:10]))
    parsed = image.parse_output(raw)
    if parsed is None:
        problems.append("guest output ends without the END marker (truncated)")
    elif parsed.rc != 0:
        problems.append(f"guest script exited with rc={parsed.rc}")
    guest = {"run_dir": str(run_dir), "console": str(run_dir / "console.log"),
             "kernel_errors": errs[:50]}
    m = re.search(r"Linux version (\S+)", console)
    uname = sections.get("meta", "").strip() or (m.group(1) if m else "")
    s = summary(preset, p, v, variant=variant, uname=uname, guest=guest,
                error="; ".join(problems) or None)
    if note:
        s["note"] = note
    return s


def _parse_partial(raw: str) -> dict[str, str]:
    parsed = image.parse_output(raw)
    if parsed is not None:
        return parsed.sections
    if image.BEGIN not in raw:
        return {}
    return image.parse_output(raw + "\n@@IDLESTEAL END rc=99@@\n").sections  # type: ignore[union-attr]


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
            "overload_reads"]
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
