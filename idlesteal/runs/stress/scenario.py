"""Stress suite: what one run does, and how much of it a pass needs.

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

Here: the run's parameters (Params, params_for()), the debug kernel's boot
options, the minimums every activity counter must reach (THRESHOLDS, scaled
with the run length; the sched_ext and no-series tables beside them), and
the busybox-ash guest script (script(): a generated preamble followed by
idlesteal/guest/stress.sh).
"""
from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

from ... import bases
from ...guest import read as guest_file
from ...guest import topology
from ...kernel import build
from ...measure.overload import OVERLOAD, overload_settled
from ...util import HarnessError

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
# Recalibrated 2026-11-29 on a host whose TCG guests run ~3x slower: make
# test's two 60 s runs there (quiet host, CI alone) reached 9 and 13 hotplug
# ops, 10 and 8 partition switches, 100 and 122 domain attachments, 11 and
# 7 tasksets, 18 and 14 feature changes; the 2node run failed tasksets 7 < 8.
# Those five minimums are now about half of the slower run's count; the
# others were already at or below half of it (229 steals, 12048 affinity
# checks, 157 throttled periods, 9 msgcount and 15 hackbench runs).
# tasksets then failed again (the next clean-clone CI's 2x2x2 run: 3 < 4):
# on this host most `taskset -p` find their short-lived hackbench/msgcount
# pid gone ("No such process": 9 of 12, 10 of 17), so their count is noise
# from 3 to 11.  Its minimum is now 2 a minute (floor 1): the path ran on a
# live task; affinity changes under load are counted by affinity_checks.
# Over the four 60 s runs of those two CIs the slowest counts were 111
# steals (2node), 9 hotplug ops, 6 partition switches, 7 msgcount runs,
# 7737 affinity checks and 11 feature changes: partition_changes,
# msgcount_runs, affinity_checks and feature_toggles are now about half
# of those too (steals keeps 100 a minute: the 2node run's 111 passed it).
THRESHOLDS: dict[str, Threshold] = {
    "steals": Threshold(100, 60, "successful steals (schedstat delta, all CPUs)"),
    "hotplug_ops": Threshold(5, 4, "successful CPU offline + online operations"),
    "partition_changes": Threshold(3, 3, "successful cpuset partition root/member switches"),
    "domain_attach": Threshold(50, 30, "'CPUn attaching sched-domain(s)' log lines (rebuilds)"),
    "nr_throttled": Threshold(30, 20, "CFS bandwidth throttle events (cpu.stat nr_throttled)"),
    "msgcount_runs": Threshold(3, 3, "msgcount runs, every message accounted"),
    "hackbench_runs": Threshold(4, 4, "hackbench runs"),
    "affinity_checks": Threshold(4000, 2000, "affinity_check checks"),
    "taskset_ok": Threshold(2, 1, "taskset -p on running message-passing tasks"),
    "feature_toggles": Threshold(6, 5, "STEAL / DELAY_DEQUEUE changes"),
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
    "feature_toggles": Threshold(4, 3, "DELAY_DEQUEUE changes (no STEAL without the series)"),
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
    # -g: a worker unanswered 30 s after the end is a stall.  wakelat's
    # default 10 s is too short for a debug guest starved by its host: the
    # base kernel without the series (mainline-debug) answered a wakeup
    # after 14.7 s there (results/stress/mainline-debug/20261125-075300-*).
    wakelat: str = "-m 4 -w 4 -g 30"
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
    pre = ["# idlesteal stress run: parameters (generated by idlesteal/runs/stress/scenario.py)"]
    pre += [f"{k}={shlex.quote(str(v))}" for k, v in script_params(p).items()]
    pre += ["guest_topology() {", topology.GUEST_SNIPPET.strip(), "}",
            "overload_settled() {", overload_settled("$D/ov").strip(), "}"]
    return "\n".join(pre) + "\n\n" + guest_file("stress.sh")


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


def check_preset(preset: topology.Preset) -> None:
    """Raise unless the stress script can run on `preset` (half the CPUs
    stay out of partitions, one partition choice spans two CPUs above)."""
    if preset.ncpus < 4 or preset.ncpus % 2:
        raise HarnessError(f"stress needs an even number of >= 4 CPUs, {preset.name} has {preset.ncpus}")
