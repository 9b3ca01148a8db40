"""`bench --host` (idlesteal/runs/host/): one A/B sweep on this machine.
`bench()` takes the session (lock.py), shows the kernel's offer
(probe.py), picks the sides the kernel can do (`sides()`: the STEAL A/B,
or an A/A run on a kernel without the series), checks the load, the
measure and the workload's program, runs bench.script() (script.py) and
measures its output as a guest's (`results()`, also what `collect` of a
kept run directory uses), with the host's topology and, on a kernel
without /proc/schedstat, the schedstat fields nan.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from ...guest import image
from ...kernel import provenance
from ...util import log
from .common import DEFAULT_MAX_LOAD, ROOT, STEAL, HostError, Refused, Stopped, _p, _read
from .cpus import check_same
from .lock import session
from .probe import Load, Offer, feature_names, offer, sample_load
from .script import run_script, script_path

if TYPE_CHECKING:   # bench imports nothing of host; annotations only
    from .. import bench as bench_mod


def provenance_record(o: Offer) -> dict:
    """The build record of a host run: the running kernel, not a build."""
    return {"variant": "host", "kernel_release": o.kernel, "kernel_version": o.version,
            "arch": o.arch, "host": provenance.host_info()}


def paths_of_files(files: list[str]) -> list[Path]:
    """The directories of --file programs (FileSpec text 'HOST:GUEST')."""
    out = []
    for f in files:
        spec = image.parse_file_spec(f)
        out.append(spec.host if spec.host.is_dir() else spec.host.parent)
    return out


# ---------------------------------------------------------------- bench on the host

def sides(spec: "bench_mod.BenchSpec", o: Offer, explicit: bool
          ) -> tuple["bench_mod.BenchSpec", str]:
    """The A/B the running kernel can do.  Feature words it has: as asked.
    Otherwise: refused (HostError, one line) when --a/--b were given; with
    the default NO_STEAL/STEAL on a kernel without the series, both sides
    run the kernel as it is (an A/A run), but for the words both sides
    share that the kernel has (suite --host --delay-dequeue off's
    NO_DELAY_DEQUEUE), and the note says why."""
    words = spec.a.features + spec.b.features
    if o.has_features(words):
        return spec, ""
    if STEAL in feature_names(list(words)) and o.features is not None and not o.steal:
        reason = o.steal_reason()
    elif o.features is None:
        reason = o.steal_reason()
    else:
        missing = sorted(feature_names(list(words)) - feature_names(o.features))
        reason = f"sched/features has no {' '.join(missing)}"
    if explicit:
        raise Refused(f"--host: the A/B {spec.a.name} against {spec.b.name} cannot run on "
                        f"this kernel: {reason}; without --a/--b host mode runs the kernel as "
                        "it is on both sides (A/A) with the wasted-time measure")
    shared = tuple(w for w in spec.a.features if w in spec.b.features and o.has_features((w,)))
    spec = dataclasses.replace(spec, a=dataclasses.replace(spec.a, features=shared),
                               b=dataclasses.replace(spec.b, features=shared))
    return spec, skip_note(reason)


def skip_note(reason: str) -> str:
    """The line that says the STEAL A/B was skipped, and why."""
    return (f"STEAL A/B skipped: {reason}; both sides run the kernel as it is (A/A): "
            "%speedup and 'B removes' are then this machine's run-to-run noise")


# Per-CPU trace buffer on the host (KB): every task of the machine is traced,
# not only the workload (a hackbench -g 1 run on a 2-CPU VM at load 30 filled
# the guest's 8 MB); at most TRACE_MEM_SHARE of the memory in all.
TRACE_KB, TRACE_MEM_SHARE = 65536, 1 / 16


def trace_kb(ncpus: int, mem: int) -> int:
    """TRACE_KB per CPU, less where that would take over TRACE_MEM_SHARE of
    `mem` (MB); never under tracerun's guest size."""
    from ...measure import tracerun
    return max(tracerun.DEFAULT_KB,
               min(TRACE_KB, int(mem * 1024 * TRACE_MEM_SHARE) // max(ncpus, 1)))


def mem_mb(root: Path = ROOT) -> int:
    m = re.search(r"^MemTotal:\s+(\d+) kB", _read(_p(root, "proc/meminfo")) or "", re.M)
    return int(m.group(1)) // 1024 if m else 1024


def _stub_schedstat(sections: dict[str, str], runs: list, cpus: list[int]) -> dict[str, str]:
    """Sections with an all-zero /proc/schedstat in place of the missing one,
    so bench.measure() reads the rest; the schedstat fields are then set
    to nan (no_schedstat())."""
    stub = "version 17\ntimestamp 0\n" + "".join(f"cpu{c}" + " 0" * 9 + "\n" for c in cpus)
    out = dict(sections)
    for r in runs:
        for w in ("before", "after"):
            out[f"{r.tag}.schedstat.{w}"] = stub
    return out


# Measurement fields that come from /proc/schedstat or sched/debug.
SCHEDSTAT_FIELDS = ("sched", "idle", "wake", "steal", "steal_fail", "steal_ns", "newidle_lb",
                    "newidle_gained")


def no_schedstat(ms: list) -> None:
    """A kernel without /proc/schedstat: its fields are nan, not 0."""
    for m in ms:
        for f in SCHEDSTAT_FIELDS:
            setattr(m, f, float("nan"))
        if hasattr(m, "split"):
            m.split = None


def bench(spec: "bench_mod.BenchSpec", name: str, outdir: Path, *, explicit_ab: bool,
          max_load: float = DEFAULT_MAX_LOAD, force_load: bool = False, timeout: float = 0,
          show: Callable[[str], None] = print, root: Path = ROOT) -> dict:
    """One A/B sweep on this machine: the lock, the state saved, the kernel's
    offer shown, the sides it can do, the load checked, bench.script() run
    under /bin/sh, the same measurements and results as a guest run
    (bench.finish()), the state put back.  Returns bench.finish()'s paths
    and table; refusals are HostError (one line)."""
    if os.geteuid() != 0 and root == ROOT:
        raise Refused("--host needs root (sched features, tracefs, the schedstats sysctl, "
                        "mounting debugfs/tracefs); run it with sudo")
    try:
        return _bench(spec, name, outdir, explicit_ab=explicit_ab, max_load=max_load,
                      force_load=force_load, timeout=timeout, show=show, root=root)
    except Stopped as e:            # session() has put the state back by now
        log(f"{e}: the run is abandoned; the machine's state was put back")
        raise


def _bench(spec: "bench_mod.BenchSpec", name: str, outdir: Path, *, explicit_ab: bool,
           max_load: float, force_load: bool, timeout: float,
           show: Callable[[str], None], root: Path) -> dict:
    from .. import bench as bench_mod
    with session(root, need_tracefs=spec.waste != "off") as s:
        o = offer(root, made=tuple(s.state.mounts_made))
        o.load = sample_load(root)
        show(o.block())
        spec, note = sides(spec, o, explicit_ab)
        if note:
            show(note)
        why = o.measure_reason()
        if spec.waste != "off" and why:
            raise Refused(f"--host: no wasted-time measure here: {why}; run with --waste off")
        too = o.load.too_high(max_load)
        if too and not force_load:
            raise Refused(f"--host: the machine is already loaded ({too}; above --max-load "
                            f"{max_load:g} of its CPUs): the figures would measure that load "
                            "too; wait until it is quiet or pass --force-load (the load is "
                            "recorded in the results)")
        if too:
            log(f"going on under load (--force-load): {too}")
        w = spec.wl
        runs = bench_mod.plan(spec)
        log(f"bench {name} on this machine: {len(runs)} {w.name} runs ({w.level} "
            f"{','.join(map(str, spec.levels))}, {w.size_name} {spec.size}); "
            f"A = {spec.a.name}, B = {spec.b.name}")
        extra = paths_of_files(spec.files)
        missing = program_missing(spec, extra)
        if missing:
            raise Refused(f"--host: {missing}; --file PROG puts your own program's "
                            "directory on the PATH")
        if w.binary in image.workload_names():      # wakelat, schbench: built here
            extra += [p.parent for p in image.compile_workloads()[:1]]
        topo = o.topology
        script = bench_mod.script(spec, runs, topo.ncpus, mem_mb(root),
                                  trace_kb=trace_kb(topo.ncpus, mem_mb(root)))
        res = run_script(script, name="bench", timeout=timeout or 120 + 240 * len(runs),
                         path_dirs=extra, tracefs=_p(root, s.state.instance_made)
                         if s.state.instance_made else None, on_start=s.started,
                         meta={"kind": RUN_KIND, "name": name, "spec": spec.to_json(),
                               "offer": o.to_json(), "skipped": note,
                               "forced_under_load": bool(too)})
        end = sample_load(root)
        return results(spec, res.sections, o, name, outdir, res.run_dir,
                       seconds=res.seconds, note=note, end=end, forced=bool(too))


# run.json's kind of a host bench run (collect.py reads it back)
RUN_KIND = "host-bench"


def results(spec: "bench_mod.BenchSpec", sections: dict[str, str], o: Offer, name: str,
            outdir: Path, run_dir: Path, *, seconds: Optional[float], note: str,
            end: Optional[Load], forced: bool, collected: bool = False) -> dict:
    """The results of a host run's output: its sections measured as a
    guest's are, with the host's topology (checked against the script's),
    schedstat fields nan on a kernel without /proc/schedstat, the offer and
    the loads in the JSON and beside the table.  Used by the run itself and
    by `collect` of its run directory (`end` None: not recorded there)."""
    from .. import bench as bench_mod
    from ...report import ab as report
    topo = o.topology
    runs = bench_mod.plan(spec)
    changed = check_same(topo, sections.get("topology", ""))
    if changed:
        raise HostError("the machine's CPUs changed during the run: " + "; ".join(changed))
    wtopo = topo.waste_topology()
    has_ss = o.schedstat_version is not None
    if not has_ss:
        sections = _stub_schedstat(sections, runs, topo.online)
    ms = bench_mod.collect(spec, runs, sections, wtopo)
    if has_ss:
        bench_mod.check_schedstat(sections, runs, topo.ncpus)
    else:
        no_schedstat(ms)
    overload = sections.get("overload.after", "")
    info = {"uname": sections.get("meta", "").strip(), "run_dir": str(run_dir),
            "boot_seconds": 0.0,
            "total_seconds": None if seconds is None else round(seconds, 1),
            "possible_cpus": sections.get("possible", "").strip(),
            "overload_after": overload.splitlines()}
    if collected:
        info["collected"] = True
    meta = report.metadata(spec, "host", provenance_record(o), "none (host mode)", info)
    meta["kernel_label"] = f"the running kernel {o.kernel}"
    meta["host_mode"] = {"offer": o.to_json(),
                         "load_start": asdict(o.load) if o.load else None,
                         "load_end": asdict(end) if end else None, "forced_under_load": forced,
                         "skipped": note, "topology": topo.to_json()}
    out = bench_mod.finish(spec, runs, ms, sections, wtopo, name, outdir, meta, run_dir)
    out.update(bench_mod.traces(spec, runs, sections, outdir, name))
    beside = ("\n" + o.block() + (note + "\n" if note else "")
              + (f"  load at end: {end.describe()}\n" if end else
                 "  load at end: not recorded in the run directory\n"))
    with open(out["txt"], "a") as f:
        f.write(beside)
    out["table"] += beside
    return out


def program_missing(spec: "bench_mod.BenchSpec", extra: list[Path]) -> str:
    """Why the workload's program cannot run here ("" when it can): not on
    the PATH (with `extra`, the --file directories, first).  The programs of
    workloads/ and schbench count as there: they are built here before the run."""
    b = spec.wl.binary
    if b in image.workload_names() or shutil.which(b, path=script_path(extra)):
        return ""
    pkg = image.TOOLS.get(b, ("", "rt-tests" if b == "hackbench" else ""))[1]
    return f"{b} is not installed on this machine" + (f" (Debian package {pkg})" if pkg else "")

