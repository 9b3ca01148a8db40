"""Schedulers side by side: EEVDF with and without STEAL and sched_ext
schedulers, the same workloads, one boot per preset, the runs interleaved.

The schedulers are contenders (EEVDF with sched features set, or a
sched_ext loader run in the background); each repetition switches to each
in turn, the order rotated, and runs every workload at every level of
configs/scx.suite's entries for the preset (docs/scx.md).  The first
contender is the baseline the others' ratios, intervals and p-values are
against, and the call says which is best where Welch's test can tell.

By concern, in import order: contender (Contender, the built-in ones,
--contender, --idlesteal-build and --sched parsing), spec (Spec, the
plan, the guest script), output (reading a boot's output: collect(), ejected(), the state after
each run) and runner (run(), finish(), write_summary()).  The summary --
the statistics, the table and the plot -- is the report stage's
(idlesteal/report/sidebyside.py), which also holds the records it reads
(Measurement, SideBySideError).  This package re-exports their public
names, so `sidebyside.X` works for each; the submodules import each other
directly, never this package.
"""
from __future__ import annotations

from ...report.sidebyside import (Measurement, SideBySideError, plot, summarize, table,
                                  tally)
from .contender import (BUILD_NAME, BUILD_WANT, CONTENDER_NAME, CONTENDER_WANT, CONTENDERS,
                        DEFAULT, FEATURE_WORD, Contender, contenders, feature_base,
                        needs_sched_ext, parse_contender, parse_idlesteal_build,
                        sched_names)
from .output import (check_state, collect, ejected, idlesteal_steals, left_out_lines,
                     loader_tails, ops_matches, run_counters, timelines, without)
from .runner import (RUN_KIND, binaries, builds, estimate_seconds, finish, loader_path,
                     results_dir, run, write_summary)
from .spec import (_FEATURE_FUNCS, _STATE, BOOT_FEATURES, FEATURES, Load, Run, Spec,
                   default_suite, plan, rotation, script, specs, switch_features)

__all__ = [
    # contender
    "BUILD_NAME", "BUILD_WANT", "CONTENDER_NAME", "CONTENDER_WANT", "CONTENDERS", "DEFAULT",
    "FEATURE_WORD", "Contender", "contenders", "feature_base", "needs_sched_ext",
    "parse_contender", "parse_idlesteal_build", "sched_names",
    # spec
    "_FEATURE_FUNCS", "_STATE", "BOOT_FEATURES", "FEATURES", "Load", "Run", "Spec",
    "default_suite", "plan", "rotation", "script", "specs", "switch_features",
    # output
    "check_state", "collect", "ejected", "idlesteal_steals", "left_out_lines",
    "loader_tails", "ops_matches", "run_counters", "timelines", "without",
    # runner
    "RUN_KIND", "binaries", "builds", "estimate_seconds", "finish", "loader_path",
    "results_dir", "run", "write_summary",
    # report/sidebyside.py
    "Measurement", "SideBySideError", "plot", "summarize", "table", "tally",
]
