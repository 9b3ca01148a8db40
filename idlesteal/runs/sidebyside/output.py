"""Reading one side-by-side boot's output (or a host run's): the
measurements, and which scheduler was in charge of each run.

collect() measures every non-warm-up run (the workload's metric, %busy,
the wasted-CPU measure of a traced run, the kernel's steal counters) and
checks the state the guest printed after each run (check_state()): a
sched_ext scheduler not in charge is an error, not a silent EEVDF
measurement.  ejected() names the contenders to leave out of a boot's
results instead (the state after a run, the kernel's console), without()
takes them out of the plan.  timelines(), loader_tails() and
idlesteal_steals() are the rest the results keep.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Iterable

from ...guest import topology
from ...measure import procstat, schedstat, tracerun
from ...measure import waste as wst
from ...report.sidebyside import Measurement, SideBySideError
from ...scx import own as scx
from ...util import HarnessError, ParseError
from .contender import Contender
from .spec import Load, Run, Spec


def ops_matches(ops: str, name: str) -> bool:
    """The published Rust schedulers register as NAME_VERSION_TARGET
    ("p2dq_1.1.4_x86_64_unknown_linux_gnu"), the C ones as NAME."""
    return ops == name or ops.startswith(name + "_")


def check_state(run: Run, c: Contender, text: str) -> None:
    """The guest's "<state> <ops>" after a run: the contender was in charge."""
    words = text.split()
    ok = (len(words) == 2 and words[0] == "enabled" and ops_matches(words[1], c.ops)) \
        if c.loader else words in (["disabled"], ["absent"])   # absent: no sched_ext
    if not ok:
        want = f"enabled {c.ops}" if c.loader else "disabled"
        raise SideBySideError(f"{run.tag} ({c.name}): sched_ext reads {' '.join(words)!r} "
                              f"after the run, want {want!r} (ejected?)")


def ejected(spec: Spec, loads: list[Load], sections: dict[str, str],
            console: str = "") -> dict[str, str]:
    """The sched_ext contenders to leave out of a boot's results, name ->
    why: those not in charge after one of their runs (check_state()) and
    those the kernel's console says it ejected (scx.EJECTED: a stall, an
    error).  A contender is left out whole, every repetition: the runs it
    finished before the ejection are of a scheduler that does not survive
    the plan.  An ejection on the console is put on the contenders whose
    runs saw it, else on every contender registering under that name (two
    scx_idlesteal variants share "idlesteal"); one naming none of them
    raises, as does an EEVDF contender finding sched_ext in charge."""
    out: dict[str, str] = {}
    for ld in loads:
        for r in ld.runs:
            state = sections.get(f"{r.tag}.state")
            if state is None or not ld.contender.loader or ld.contender.name in out:
                continue                  # a missing section: collect() says so
            try:
                check_state(r, ld.contender, state)
            except SideBySideError as e:
                out[ld.contender.name] = f"{e} (load {ld.index}, repetition {ld.rep})"
    for m in scx.EJECTED.finditer(console):
        ops, why = m.group(1), m.group(2)
        named = [c for c in spec.contenders if c.loader and ops_matches(ops, c.ops)]
        if not named:
            raise SideBySideError(f"the console says {m.group(0)!r}, and none of the "
                                  f"schedulers registers as {ops!r}")
        for c in [c for c in named if c.name in out] or named:
            first = f"the kernel ejected it ({why})"
            out[c.name] = first if c.name not in out or out[c.name].startswith(first) \
                else f"{first}: {out[c.name]}"
    return out


def without(spec: Spec, loads: list[Load], names: Iterable[str]) -> tuple[Spec, list[Load]]:
    """The plan with the contenders `names` left out (ejected()); the
    baseline and at least one other must stay."""
    gone = set(names)
    if not gone:
        return spec, loads
    if spec.contenders[0].name in gone:
        raise SideBySideError(f"the baseline {spec.contenders[0].name} cannot be left out")
    kept = [c for c in spec.contenders if c.name not in gone]
    if len(kept) < 2:
        raise SideBySideError(f"{spec.preset}: only {kept[0].name} is left once "
                              f"{', '.join(sorted(gone))} are left out: nothing to compare")
    return (dataclasses.replace(spec, contenders=kept),
            [ld for ld in loads if ld.contender.name not in gone])


def left_out_lines(dropped: dict[str, str]) -> str:
    """The table's lines for the contenders ejected() left out."""
    return "".join(f"  {name}: left out of this boot's results: {why}\n"
                   for name, why in dropped.items())


def collect(spec: Spec, loads: list[Load], sections: dict[str, str],
            topo: wst.Topology | None = None) -> list[Measurement]:
    """Measurements of the non-warm-up runs; checks each run's scheduler.
    Traced runs (spec.waste) are measured with `topo` (default: the preset's)."""
    out: list[Measurement] = []
    if spec.waste and topo is None:
        topo = wst.from_preset(topology.get(spec.preset))
    for ld in loads:
        for r in ld.runs:
            try:
                text = sections[f"{r.tag}.output"]
                s0 = procstat.parse(sections[f"{r.tag}.stat.before"])
                s1 = procstat.parse(sections[f"{r.tag}.stat.after"])
                state = sections[f"{r.tag}.state"]
            except KeyError as e:
                raise SideBySideError(f"{r.tag}: guest output lacks section {e}") from None
            check_state(r, ld.contender, state)
            if r.warmup:
                continue
            wl = spec.entries[r.entry].wl
            try:
                metrics = wl.parse(text)
            except ParseError as e:
                raise SideBySideError(f"{r.tag} ({ld.contender.name}): {wl.name}: {e}") from None
            w = None
            if spec.waste:
                assert topo is not None
                try:
                    w = tracerun.measure(sections, r.tag, topo).as_dict()
                except HarnessError as e:
                    raise SideBySideError(f"{r.tag} ({ld.contender.name}): wasted-time "
                                          f"measure: {e}") from None
            out.append(Measurement(r.tag, r.rep, ld.contender.name, wl.name, r.level,
                                   metrics[wl.metric], metrics, procstat.busy(s0, s1), w,
                                   run_counters(sections, r.tag)))
    return out


def run_counters(sections: dict[str, str], tag: str) -> dict[str, int] | None:
    """The kernel's steal and kick counters over one run (after - before,
    summed over CPUs); None without both snapshots (an output of before
    they were taken)."""
    try:
        before, after = sections[f"{tag}.sched.before"], sections[f"{tag}.sched.after"]
    except KeyError:
        return None
    try:
        d = schedstat.delta(schedstat.parse(before), schedstat.parse(after))
    except ParseError as e:
        raise SideBySideError(f"{tag}: scheduler counters: {e}") from None
    return {n: d.totals[n] for n in schedstat.COUNTERS}


def timelines(spec: Spec, loads: list[Load], sections: dict[str, str], outdir: Path,
              topo: wst.Topology | None = None) -> list[Path]:
    """outdir/<preset>-timeline-<scheduler>.png: for each scheduler, its
    first measured run of the first entry at that entry's highest level
    (`topo`: the machine's, default the preset's).  An older run set's
    pictures of the preset that this one does not redraw (a scheduler
    left out, or not in --sched) are removed: they would sit beside the
    new table as if they were its own."""
    out: list[Path] = []
    top = max(spec.entries[0].levels)
    for c in (spec.contenders if spec.waste else []):
        runs = [r for ld in loads if ld.contender == c for r in ld.runs
                if not r.warmup and r.entry == 0 and r.level == top]
        if not runs:
            continue
        topo = topo or wst.from_preset(topology.get(spec.preset))
        path = outdir / f"{spec.preset}-timeline-{c.name}.png"
        tl = tracerun.timeline(sections, runs[0].tag, topo)
        title = (f"{spec.preset}: {c.name}, {runs[0].tag}, {spec.entries[0].workload} "
                 f"{spec.entries[0].wl.level} {top}")
        if wst.plot_timeline(tl, path, title):
            out.append(path)
    for old in sorted(outdir.glob(f"{spec.preset}-timeline-*.png")):
        if old not in out:
            old.unlink()
    return out


def loader_tails(loads: list[Load], sections: dict[str, str]) -> dict[str, list[str]]:
    """The last lines of each loader's output ("L007" -> lines)."""
    return {f"L{ld.index:03d}": sections.get(f"L{ld.index:03d}.stop", "").splitlines()
            for ld in loads if ld.contender.loader}


def idlesteal_steals(loads: list[Load], sections: dict[str, str]) -> dict[str, list[int]]:
    """scx_idlesteal's final steal count of each of its loads, per contender
    (its variants and other builds of it too: all register as "idlesteal")."""
    out: dict[str, list[int]] = {}
    for ld in loads:
        if ld.contender.ops != "idlesteal":
            continue
        final = scx.final_stats(sections.get(f"L{ld.index:03d}.stop", ""))
        out.setdefault(ld.contender.name, []).append(int(final["steals"]))
    return out
