"""Stress suite: try to break task stealing on the debug kernel.

One guest boot per topology runs hackbench, msgcount, wakelat and
affinity_check for S seconds while CPU hotplug, cpuset partitions, a
throttled cgroup and the STEAL / DELAY_DEQUEUE features churn, then checks
that everything came back (docs/stress.md).  By concern, in import order:
scenario (Params, THRESHOLDS, the guest script), parse (the guest's
sections), trace (the affinity trace: moves, the mainline stopper race),
console (known mainline warnings, early-boot errors), verdict (Verdict,
evaluate()), results (the JSON summary, report(), tally()) and runner
(run(), reevaluate()).  This package re-exports their public names, so
`stress.X` works for each; the submodules import each other directly,
never this package.
"""
from __future__ import annotations

from .console import (CPUSET_OVERLAP, KNOWN_WARNINGS, KnownWarning, call_trace,
                      errors_before_smp, known_line, known_tolerated, known_warnings,
                      partition_sequence, tolerated)
from .parse import RunRecord, parse_counters, parse_cpustat, parse_runs
from .results import report, results_dir, series_commit, summary, tally, write_summary
from .runner import reevaluate, run, run_meta
from .scenario import (BOOT_TIMEOUT, CHECKS_OFF_WITHOUT_SERIES, CMDLINE, FEATURES,
                       NO_SERIES_THRESHOLDS, NOT_UNDER_SCX, NOT_WITHOUT_SERIES,
                       NOT_WITHOUT_STEAL, SCX_HOTPLUG_SLEEP, SCX_THRESHOLDS, STEAL_MODES,
                       THRESHOLDS, THROTTLE_MAX, VARIANT, WORKERS, Params, Threshold,
                       check_preset, params_for, script, script_params, series_kernel,
                       threshold_table, thresholds, timeout_for)
from .trace import affinity_excerpt, stopper_race, trace_moves
from .verdict import Verdict, check_overload, evaluate, evaluate_scx, steal_counter_cpus

__all__ = [
    # scenario
    "BOOT_TIMEOUT", "CHECKS_OFF_WITHOUT_SERIES", "CMDLINE", "FEATURES",
    "NO_SERIES_THRESHOLDS", "NOT_UNDER_SCX", "NOT_WITHOUT_SERIES", "NOT_WITHOUT_STEAL",
    "SCX_HOTPLUG_SLEEP", "SCX_THRESHOLDS", "STEAL_MODES", "THRESHOLDS", "THROTTLE_MAX",
    "VARIANT", "WORKERS", "Params", "Threshold", "check_preset", "params_for", "script",
    "script_params", "series_kernel", "threshold_table", "thresholds", "timeout_for",
    # parse
    "RunRecord", "parse_counters", "parse_cpustat", "parse_runs",
    # trace
    "affinity_excerpt", "stopper_race", "trace_moves",
    # console
    "CPUSET_OVERLAP", "KNOWN_WARNINGS", "KnownWarning", "call_trace", "errors_before_smp",
    "known_line", "known_tolerated", "known_warnings", "partition_sequence", "tolerated",
    # verdict
    "Verdict", "check_overload", "evaluate", "evaluate_scx", "steal_counter_cpus",
    # results
    "report", "results_dir", "series_commit", "summary", "tally", "write_summary",
    # runner
    "reevaluate", "run", "run_meta",
]
