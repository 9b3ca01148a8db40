"""Running a side by side: one boot per preset (run()), its output
measured and written (finish(), which host mode (runs/hostsbs.py) and
`idlesteal collect` (runs/collect.py) share): outdir/<preset>.{txt,json,png}
and a timeline per scheduler, the presets' tables gathered in
outdir/summary.txt (write_summary()).  The loaders' host binaries
(binaries()) and the time a plan should take (estimate_seconds()) are here
too.
"""
from __future__ import annotations

import json
from pathlib import Path

from ... import paths
from ...guest import image, topology, vm
from ...kernel import build, provenance
from ...measure import waste as wst
from ...report.sidebyside import plot, summarize, table
from ...scx import peers
from ...scx import own as scx
from ...util import HarnessError, log, sha256_file
from .. import suite
from .contender import Contender
from .output import (collect, ejected, idlesteal_steals, left_out_lines, loader_tails,
                     timelines, without)
from .spec import Load, Spec, plan, script


def results_dir() -> Path:
    return paths.results_dir() / "scx"


def loader_path(c: Contender) -> Path:
    """Where a sched_ext contender's loader is on the host: the file of
    --idlesteal-build, a peer's install, or our build (`make scx`)."""
    b = c.binary
    return Path(c.build) if c.build else peers.binary(b) if b in peers.PEERS \
        else scx.binary(b)


def binaries(cs: list[Contender]) -> dict[str, Path]:
    """Host binary of every loader the contenders need (built before, or
    given: --idlesteal-build)."""
    out: dict[str, Path] = {}
    for c in cs:
        b = c.binary
        if not b:
            continue
        path = loader_path(c)
        if not path.exists():
            raise HarnessError(f"{path} is missing; " + ("it was given by --idlesteal-build"
                               if c.build else "build it with `make scx`"))
        out[b] = path
    return out


def builds(cs: list[Contender]) -> dict[str, dict[str, str]]:
    """The loaders of --idlesteal-build a result was measured with: name ->
    {"path", "sha256"}."""
    return {c.name: {"path": c.build, "sha256": sha256_file(Path(c.build))}
            for c in cs if c.build}


def estimate_seconds(spec: Spec, outdir: Path | None = None) -> float:
    """Time the plan should take: the last result for this preset's boot
    time per run (switches included) times this plan's runs; without one,
    a guess of 3 s per run and 6 s per switch."""
    loads = plan(spec)
    nruns = sum(len(ld.runs) for ld in loads)
    try:
        guest = json.loads(((outdir or results_dir()) / f"{spec.preset}.json").read_text()
                           )["meta"]["guest"]
        return float(guest["total_seconds"]) / int(guest["runs"]) * nruns
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        return nruns * 3.0 + len(loads) * 6.0


RUN_KIND = "sidebyside"      # run.json's kind (runs/collect.py)


def run(spec: Spec, kernel: Path, variant: str, outdir: Path) -> dict:
    """One boot: every contender, every workload; writes
    outdir/<preset>.{txt,json,png}; returns {"txt", "json", "table"} and
    "png" when matplotlib drew it."""
    preset = topology.get(spec.preset)
    cs = spec.contenders
    bins = binaries(cs)
    tools = tuple(sorted({e.wl.binary for e in spec.entries if e.wl.binary in image.TOOLS}))
    files = [*suite.files(spec.entries), *scx.image_files(bins)]
    initrd = image.build_base(tools=tools, files=files)
    loads = plan(spec)
    nruns = sum(len(ld.runs) for ld in loads)
    log(f"side by side on {spec.preset}: {', '.join(c.name for c in cs)}; {len(loads)} loads, "
        f"{nruns} runs (about {estimate_seconds(spec, outdir) / 60:.0f} min)")
    build_meta = build.read_meta(variant)
    versions = peers.versions(tuple(c.binary for c in cs if c.binary in peers.PEERS))
    res = vm.run_script(script(spec, loads), preset, kernel, initrd,
                        timeout=300 + 30 * nruns, name="sidebyside",
                        meta={"kind": RUN_KIND, "spec": spec.to_json(), "variant": variant,
                              "build": build_meta, "peers": versions,
                              "scx_idlesteal_sha256": scx.source_digest(),
                              "idlesteal_builds": builds(cs)})
    preset.verify(res.sections.get("topology", ""))
    console = res.console.read_text(errors="replace")
    meta = provenance.provenance({variant: build_meta})
    meta.update({"preset": spec.preset, "kernel_variant": variant,
                 "peers": versions, "scx_idlesteal_sha256": scx.source_digest(),
                 "idlesteal_builds": builds(cs),
                 "guest": {"uname": res.sections.get("meta", "").strip().splitlines()[:1],
                           "run_dir": str(res.run_dir), "boot_seconds": round(res.boot_seconds, 1),
                           "total_seconds": round(res.seconds, 1), "runs": nruns,
                           "stale_code_retries": [str(d) for d in res.retried]}})
    return finish(spec, loads, res.sections, meta, outdir, console=console)


def finish(spec: Spec, loads: list[Load], sections: dict[str, str], meta: dict, outdir: Path,
           topo: wst.Topology | None = None, beside: str = "", console: str = "") -> dict:
    """A boot's (or host run's) output measured and written:
    outdir/<preset>.{txt,json,png} and the timelines; `topo` the machine's
    (default the preset's), `beside` text under the table (host mode's
    offer), `console` the guest's kernel log (a host run has none: only
    the state after each run tells an ejection there).  A contender
    ejected() names is left out, said under the table and in
    meta["dropped"].  Returns {"txt", "json", "table", "dropped"}, "png"
    when matplotlib drew it, and "timelineN"."""
    dropped = ejected(spec, loads, sections, console)
    for name, why in dropped.items():
        log(f"{spec.preset}: {name} left out: {why}")
    spec, loads = without(spec, loads, dropped)
    meta = {**meta, "dropped": dropped}
    beside = left_out_lines(dropped) + beside
    ms = collect(spec, loads, sections, topo)
    rows = summarize(spec, ms)
    steals = idlesteal_steals(loads, sections)
    text = table(spec, rows, steals) + beside
    outdir.mkdir(parents=True, exist_ok=True)
    jpath, tpath = outdir / f"{spec.preset}.json", outdir / f"{spec.preset}.txt"
    jpath.write_text(json.dumps({"meta": meta, "spec": spec.to_json(), "rows": rows,
                                 "steals": steals, "loaders": loader_tails(loads, sections),
                                 "measurements": [m.to_json() for m in ms]}, indent=1) + "\n")
    tpath.write_text(text)
    out = {"txt": tpath, "json": jpath, "table": text, "dropped": dropped}
    png = outdir / f"{spec.preset}.png"
    if plot(spec, rows, png):
        out["png"] = png
    else:
        png.unlink(missing_ok=True)        # not an older run's; pyplot() said why
    for i, path in enumerate(timelines(spec, loads, sections, outdir, topo)):
        out[f"timeline{i}"] = path
    return out


def write_summary(outdir: Path, presets: list[str]) -> Path:
    """outdir/summary.txt: the presets' tables, in order, from their .txt files."""
    parts = []
    for p in presets:
        f = outdir / f"{p}.txt"
        parts.append(f.read_text() if f.exists() else f"{p}: not run yet\n")
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "summary.txt"
    path.write_text("\n".join(parts))
    return path
