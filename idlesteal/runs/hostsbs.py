"""side-by-side --host (docs/host.md): EEVDF, EEVDF+STEAL and sched_ext
schedulers one after the other on this machine's running kernel.

The plan and the script are a guest's side by side (sidebyside.plan(),
sidebyside.script()); host mode runs the script (host.session(),
host.run_script()), and its output is measured and written by the same code
(sidebyside.finish()) with the machine's topology from sysfs.  Before any
load, what the kernel cannot run is left out with its reason (fit()): a
scheduler that needs a sched feature the kernel lacks (eevdf+steal without
the series), every sched_ext one where the kernel has no sched_ext; a NO_X
word of a feature the kernel does not have is dropped, as there is nothing
to turn off.  A scheduler still in charge after the run is put out
(host.scx_off()) with the rest of the machine's state."""
from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Callable, Optional

from . import host, sidebyside
from ..guest import image
from ..scx import peers, own as scx
from .host import ROOT, Refused
from .sidebyside import Contender, feature_base
from ..util import HarnessError, log

# run.json's kind of a host side by side (the guest's is "sidebyside")
RUN_KIND = "host-sidebyside"


def fit(cs: list[Contender], o: host.Offer) -> tuple[list[Contender], list[tuple[str, str]]]:
    """The contenders this kernel can run (their NO_X words of features it
    lacks dropped), and (name, why) of those it cannot."""
    have = host.feature_names(o.features) if o.features is not None else set()
    scx_why = o.scx_reason()
    kept: list[Contender] = []
    skipped: list[tuple[str, str]] = []
    for c in cs:
        if c.loader and scx_why:
            skipped.append((c.name, scx_why))
            continue
        words = tuple(w for w in c.features if not (w.startswith("NO_") and w[3:] not in have))
        lacking = sorted({feature_base(w) for w in words} - have)
        if lacking:
            if o.features is None:
                why = (f"/{host.FEATURES} is not readable ({o.features_note}), so "
                       f"{' '.join(words)} cannot be set")
            else:
                why = f"sched/features has no {' '.join(lacking)}" + (
                    ": the running kernel is not built with the series"
                    if host.STEAL in lacking else "")
            skipped.append((c.name, why))
            continue
        kept.append(dataclasses.replace(c, features=words))
    return kept, skipped


def missing_programs(spec: sidebyside.Spec) -> list[str]:
    """The workloads' programs that are not on this machine's PATH."""
    out = []
    for e in spec.entries:
        b = e.wl.binary
        if b in image.workload_names():
            continue
        extra = host.paths_of_files(list(e.files))
        if not shutil.which(b, path=host.script_path(extra)):
            pkg = image.TOOLS.get(b, ("", "rt-tests" if b == "hackbench" else ""))[1]
            out.append(f"{b} is not installed on this machine"
                       + (f" (Debian package {pkg})" if pkg else ""))
    return list(dict.fromkeys(out))


def _path_dirs(spec: sidebyside.Spec, bins: dict[str, Path]) -> list[Path]:
    dirs = [p.parent for p in bins.values()]
    for e in spec.entries:
        dirs += host.paths_of_files(list(e.files))
    if any(e.wl.binary in image.workload_names() for e in spec.entries):
        dirs += [p.parent for p in image.compile_workloads()[:1]]
    return list(dict.fromkeys(dirs))


def skipped_lines(skipped: list[tuple[str, str]]) -> str:
    return "".join(f"side by side: {n} skipped: {why}\n" for n, why in skipped)


def side_by_side(spec: sidebyside.Spec, outdir: Path, *, max_load: float = host.DEFAULT_MAX_LOAD,
                 force_load: bool = False, timeout: float = 0,
                 show: Callable[[str], None] = print, root: Path = ROOT) -> Optional[dict]:
    """One side by side on this machine.  Returns sidebyside.finish()'s
    paths and table, or None when fewer than two of the schedulers can run
    here (each one's reason shown).  Refusals are host.Refused (one line)."""
    if os.geteuid() != 0 and root == ROOT:
        raise Refused("--host needs root (sched features, sched_ext, tracefs, mounting "
                      "debugfs/tracefs); run it with sudo")
    try:
        return _run(spec, outdir, max_load=max_load, force_load=force_load, timeout=timeout,
                    show=show, root=root)
    except host.Stopped as e:            # session() has put the state back by now
        log(f"{e}: the run is abandoned; the machine's state was put back")
        raise


def _run(spec: sidebyside.Spec, outdir: Path, *, max_load: float, force_load: bool,
         timeout: float, show: Callable[[str], None], root: Path) -> Optional[dict]:
    with host.session(root, need_tracefs=spec.waste) as s:
        o = host.offer(root, made=tuple(s.state.mounts_made))
        o.load = host.sample_load(root)
        show(o.block())
        kept, skipped = fit(spec.contenders, o)
        if skipped:
            show(skipped_lines(skipped))
        if len(kept) < 2:
            show(f"side by side skipped: {len(kept)} of the schedulers can run on this "
                 "kernel, two are needed; the EEVDF part is `bench --host` (docs/host.md)")
            return None
        why = o.measure_reason()
        if spec.waste and why:
            raise Refused(f"--host: no wasted-time measure here: {why}; run with --no-waste")
        try:                                  # before any load
            wtopo = o.topology.waste_topology() if spec.waste else None
        except host.HostError as e:           # side-by-side's switch is --no-waste
            raise Refused(str(e).replace("--waste off", "--no-waste")) from None
        too = o.load.too_high(max_load)
        if too and not force_load:
            raise Refused(f"--host: the machine is already loaded ({too}; above --max-load "
                          f"{max_load:g} of its CPUs): the figures would measure that load "
                          "too; wait until it is quiet or pass --force-load")
        if too:
            log(f"going on under load (--force-load): {too}")
        missing = missing_programs(spec)
        if missing:
            raise Refused(f"--host: {'; '.join(missing)}")
        bins = sidebyside.binaries(kept)     # HarnessError: not built, `make scx`
        spec = dataclasses.replace(spec, contenders=kept)
        loads = sidebyside.plan(spec)
        nruns = sum(len(ld.runs) for ld in loads)
        log(f"side by side on this machine: {', '.join(c.name for c in kept)}; "
            f"{len(loads)} loads, {nruns} runs")
        topo = o.topology
        mem = host.mem_mb(root)
        text = sidebyside.script(spec, loads, trace_kb=host.trace_kb(topo.ncpus, mem))
        res = host.run_script(text, name="sidebyside", timeout=timeout or 300 + 240 * nruns,
                              path_dirs=_path_dirs(spec, bins),
                              tracefs=host._p(root, s.state.instance_made)
                              if s.state.instance_made else None, on_start=s.started,
                              meta={"kind": RUN_KIND, "spec": spec.to_json(),
                                    "offer": o.to_json(), "skipped": skipped,
                                    "forced_under_load": bool(too)})
        changed = host.check_same(topo, res.sections.get("topology", ""))
        if changed:
            raise host.HostError("the machine's CPUs changed during the run: "
                                 + "; ".join(changed))
        sections = res.sections
        if o.schedstat_version is None:   # no counters to difference: run_counters() None
            sections = {k: v for k, v in sections.items()
                        if not k.endswith((".sched.before", ".sched.after"))}
        end = host.sample_load(root)
    meta = {"provenance": host.provenance_record(o), "preset": spec.preset,
            "kernel_variant": "host", "kernel_label": f"the running kernel {o.kernel}",
            "peers": peers.versions(tuple(c.binary for c in kept if c.binary in peers.PEERS)),
            "scx_idlesteal_sha256": scx.source_digest(),
            "guest": {"uname": sections.get("meta", "").strip().splitlines()[:1],
                      "run_dir": str(res.run_dir), "boot_seconds": 0.0,
                      "total_seconds": round(res.seconds, 1), "runs": nruns},
            "host_mode": {"offer": o.to_json(), "skipped": skipped,
                          "load_start": dataclasses.asdict(o.load) if o.load else None,
                          "load_end": dataclasses.asdict(end), "forced_under_load": bool(too),
                          "topology": topo.to_json()}}
    beside = ("\n" + o.block() + skipped_lines(skipped) + f"  load at end: {end.describe()}\n")
    try:
        return sidebyside.finish(spec, loads, sections, meta, outdir, wtopo, beside)
    except HarnessError as e:
        raise host.HostError(f"{e} (output: {res.run_dir / 'output.log'})") from None
