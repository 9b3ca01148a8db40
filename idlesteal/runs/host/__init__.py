"""Host mode: the bench on the machine you are on, no VM.  The
same script bench.script() writes for a guest runs here under /bin/sh with
the same helpers, and its output is measured by the same
bench/tracerun/report code; what differs is only around it.  By concern,
in import order: common (the paths, HostError/Refused/Stopped, one-file
helpers), cpus (the topology from sysfs), probe (what the kernel offers,
the load), state (the machine's state saved and put back), script
(run_script()), lock (the lock and session()) and sweep (bench() and
results()).  This package re-exports their names, so `host.X` works for
each; the submodules import each other directly, never this package.
`suite()` lives here, above them: it calls `bench` through this package,
as `host.bench`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ...util import HarnessError, log
from .common import (DEBUGFS, DEFAULT_MAX_LOAD, EVENTS, FEATURES, INSTANCE, LOCK, ROOT,
                     SCHED_EXT, SCHEDSTATS, STATE, STEAL, TRACEFS, VERBOSE, HostError,
                     Refused, Stopped, _p)
from .cpus import SysTopology, _cpulist, check_same, read_topology
from .lock import Session, end_leftover, group_members, proc_stats, session
from .probe import (Load, Offer, cpuinfo_hypervisor, feature_names, load_between, mounted,
                    offer, parse_features, parse_loadavg, parse_schedstat_version,
                    parse_trace_clock, procs_running, sample_load)
from .script import HELPERS, HostResult, end_group, run_script, script_path
from .state import (SYSRQ, Mounter, State, Unmounter, _buffer_kb, _same_kb, differences,
                    real_mount, real_umount, restore, scx_off, snapshot)
from .sweep import (RUN_KIND, SCHEDSTAT_FIELDS, TRACE_KB, TRACE_MEM_SHARE, _stub_schedstat,
                    bench, mem_mb, no_schedstat, paths_of_files,
                    program_missing, provenance_record, results, sides, skip_note, trace_kb)

if TYPE_CHECKING:   # bench imports nothing of host; annotations only
    from .. import bench as bench_mod

__all__ = [
    # common
    "DEBUGFS", "DEFAULT_MAX_LOAD", "EVENTS", "FEATURES", "INSTANCE", "LOCK", "ROOT",
    "SCHED_EXT", "SCHEDSTATS", "STATE", "STEAL", "TRACEFS", "VERBOSE", "HostError", "Refused",
    "Stopped", "_p",
    # cpus
    "SysTopology", "_cpulist", "check_same", "read_topology",
    # probe
    "Load", "Offer", "cpuinfo_hypervisor", "feature_names", "load_between", "mounted",
    "offer", "parse_features", "parse_loadavg", "parse_schedstat_version",
    "parse_trace_clock", "procs_running", "sample_load",
    # state
    "SYSRQ", "Mounter", "State", "Unmounter", "_buffer_kb", "_same_kb", "differences",
    "real_mount", "real_umount", "restore", "scx_off", "snapshot",
    # script
    "HELPERS", "HostResult", "end_group", "run_script", "script_path",
    # lock
    "Session", "end_leftover", "group_members", "proc_stats", "session",
    # sweep
    "RUN_KIND", "SCHEDSTAT_FIELDS", "TRACE_KB", "TRACE_MEM_SHARE", "_stub_schedstat",
    "bench", "mem_mb", "no_schedstat", "paths_of_files", "program_missing",
    "provenance_record", "results", "sides", "skip_note", "trace_kb",
    # here
    "SuiteResult", "suite",
]


@dataclass
class SuiteResult:
    """What `suite --host` did: entry names done, failed (with why) and
    skipped (with why); `stopped`: the refusal that ended it, "" if none."""
    done: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stopped: str = ""


def suite(specs: list[tuple[str, "bench_mod.BenchSpec"]], outdir: Path, *, explicit_ab: bool,
          max_load: float = DEFAULT_MAX_LOAD, force_load: bool = False,
          show: Callable[[str], None] = print, root: Path = ROOT) -> SuiteResult:
    """`suite --host`: each (name, spec) as `bench --host` runs it, one after
    the other, each in its own session (the state put back after each).  A
    workload whose program is not installed is skipped with one line; a
    refusal (Refused: not root, the A/B asked for, the load, no measure,
    another host run) ends the suite, since every later entry would meet it
    too; a run that fails is counted and the next entry runs.  The kernel's
    offer and the skipped A/B's line are shown once, for the first entry."""
    from .. import bench as bench_mod
    from ...util import Stopwatch
    if os.geteuid() != 0 and root == ROOT:
        return SuiteResult(stopped="--host needs root (sched features, tracefs, the schedstats "
                           "sysctl, mounting debugfs/tracefs); run it with sudo")
    res = SuiteResult()
    todo = []
    for name, spec in specs:
        why = program_missing(spec, paths_of_files(spec.files))
        if why:
            res.skipped.append((name, why))
            show(f"suite --host: {name} skipped: {why}")
        else:
            todo.append((name, spec))
    shown: set[str] = set()

    def once(text: str) -> None:
        key = "offer" if text.startswith("host: ") else text
        if key not in shown:
            shown.add(key)
            show(text)
    sw = Stopwatch()
    for i, (name, spec) in enumerate(todo, 1):
        log(f"suite entry {i}/{len(todo)}: {name} ({len(bench_mod.plan(spec))} runs)")
        try:
            out = bench(spec, name, outdir, explicit_ab=explicit_ab, max_load=max_load,
                        force_load=force_load, show=once, root=root)
        except Refused as e:
            res.stopped = str(e)
            break
        except HarnessError as e:        # keep going: one broken entry must not lose the rest
            log(f"suite entry {name} FAILED: {e}")
            res.failed.append((name, str(e)))
        else:
            show(f"== {name}\n{out['table']}".rstrip("\n"))
            res.done.append(name)
        log(f"suite --host: {i}/{len(todo)} done, {len(res.failed)} failed, "
            f"{sw.elapsed():.0f} s elapsed")
    return res

