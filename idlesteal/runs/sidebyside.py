"""Schedulers side by side: EEVDF with and without STEAL and sched_ext
schedulers, the same workloads, one boot per preset.

A contender is either EEVDF with sched features set (`eevdf`: NO_STEAL,
`eevdf+steal`: STEAL, or one of your own: --contender NAME=FEAT,...,
parse_contender()) or a sched_ext loader run in the background
(scx_idlesteal, the kernel's scx_simple, the published peers of
idlesteal/scx/peers.py).  At boot the guest checks that the kernel has every
feature a contender names (a missing one fails the boot, naming it); a
switch puts the features other contenders set back to their boot values
before setting its own (switch_features()).  With EEVDF contenders only,
the kernel needs no sched_ext (`side-by-side --variant steal`).  The plan: for each repetition, each contender in turn
(the order rotated by one per repetition, so no contender always follows
the same one) is switched in -- features set, loader started and checked
in charge -- then every workload runs at every level of configs/scx.suite's
entries for that preset, then the loader is stopped.  The first run after
each switch is a warm-up and is discarded.  After every run the guest
prints sched_ext's state, so a scheduler ejected mid-run is an error, not a
silent EEVDF measurement.  Every measured run is traced for the wasted-CPU
measure (idlesteal/measure/tracerun.py; `waste=False` turns it off): a task waiting
in a DSQ is a runnable task that is not running, as it is for EEVDF.

summarize() gives, per workload and level, each contender's mean with its
95% interval, its ratio to the baseline (the first contender, `eevdf`) with
a delta-method interval and Welch's p against it, and the call: the
contender with the best mean is "best" only when Welch's test separates it
from every other one (p < 0.05), otherwise the contenders it cannot be told
apart from are listed with it.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shlex
from dataclasses import asdict, dataclass
from typing import Any, Iterable
from pathlib import Path

from ..kernel import build, provenance
from ..guest import image, topology, vm
from .. import paths
from ..scx import peers, own as scx
from ..measure import procstat, schedstat, stats, tracerun
from ..report import ab as report
from . import suite
from ..measure import waste as wst
from ..util import HarnessError, ParseError, invalid, log, pyplot


class SideBySideError(ParseError):
    pass


@dataclass(frozen=True)
class Contender:
    name: str
    features: tuple[str, ...]      # EEVDF sched features set when switching to it
    loader: tuple[str, ...] = ()   # sched_ext loader argv; () = EEVDF itself
    ops: str = ""                  # the name it registers (root/ops)

    @property
    def binary(self) -> str:
        return self.loader[0] if self.loader else ""


# The fair class' own stealing is off under every sched_ext scheduler
# (NO_STEAL): with full switching no task is left in the fair class anyway.
CONTENDERS: dict[str, Contender] = {c.name: c for c in [
    Contender("eevdf", ("NO_STEAL",)),
    Contender("eevdf+steal", ("STEAL",)),
    Contender("scx_idlesteal", ("NO_STEAL",), ("scx_idlesteal",), "idlesteal"),
    Contender("scx_idlesteal-nosteal", ("NO_STEAL",), ("scx_idlesteal", "-o"), "idlesteal"),
    Contender("scx_idlesteal-node", ("NO_STEAL",), ("scx_idlesteal", "-n"), "idlesteal"),
    Contender("scx_idlesteal-nokick", ("NO_STEAL",), ("scx_idlesteal", "-k"), "idlesteal"),
    # kicks any idle CPU, not a fully idle core first (issue 21: results/scx/whole-core/)
    Contender("scx_idlesteal-anycpu", ("NO_STEAL",), ("scx_idlesteal", "-c"), "idlesteal"),
    # fixed slices and no wakeup preemption: scx_idlesteal before its latency story
    Contender("scx_idlesteal-fixed", ("NO_STEAL",), ("scx_idlesteal", "-f", "-p"), "idlesteal"),
    Contender("scx_simple", ("NO_STEAL",), ("scx_simple",), "simple"),
    *[Contender(n, ("NO_STEAL",), (n,), peers.OPS_NAMES[n]) for n in peers.PEERS],
]}
DEFAULT = ("eevdf", "eevdf+steal", "scx_idlesteal", *peers.PEERS)


# --contender NAME=FEAT[,FEAT...]: an EEVDF contender defined by sched features
# (docs/scx.md).  The feature words are checked for form only: the kernel the
# guest boots says which it has (script(): a missing one fails the boot).
CONTENDER_NAME = re.compile(r"[a-z0-9][a-z0-9_+.-]{0,39}")
FEATURE_WORD = re.compile(r"(NO_)?[A-Z][A-Z0-9_]*")
CONTENDER_WANT = ("NAME=FEAT[,FEAT...]: NAME of a-z 0-9 _ + . - (starting with a letter or "
                  "digit, at most 40 characters, not a built-in scheduler's: "
                  + ", ".join(CONTENDERS) + "), each FEAT a sched feature word such as "
                  "STEAL_KICK or NO_NI_RANDOM, each feature once")


def feature_base(word: str) -> str:
    """NO_STEAL -> STEAL; STEAL -> STEAL."""
    return word[3:] if word.startswith("NO_") else word


def parse_contender(text: str) -> Contender:
    """side-by-side --contender (an argparse type): 'NAME=FEAT[,FEAT...]'."""
    name, eq, feats = text.partition("=")
    words = tuple(feats.split(","))
    bases = [feature_base(w) for w in words]
    if not eq or not CONTENDER_NAME.fullmatch(name) or name in CONTENDERS \
            or not all(FEATURE_WORD.fullmatch(w) and FEATURE_WORD.fullmatch(b)
                       for w, b in zip(words, bases)) \
            or len(set(bases)) != len(bases):
        raise argparse.ArgumentTypeError(invalid(text, CONTENDER_WANT))
    return Contender(name, words)


def sched_names(text: str) -> list[str]:
    """side-by-side --sched (an argparse type): the form only, 'a,b,...' of
    two or more names, none twice; whether each is built in or defined by
    --contender is checked after parsing (contenders())."""
    words = text.split(",")
    if len(words) < 2 or not all(CONTENDER_NAME.fullmatch(w) for w in words) \
            or len(set(words)) != len(words):
        raise argparse.ArgumentTypeError(invalid(text, "two or more comma-separated "
                                                 "schedulers, each once, the first the "
                                                 "baseline; known: " + ", ".join(CONTENDERS)
                                                 + ", or one of --contender"))
    return words


def contenders(names: str | tuple[str, ...] | list[str],
               defined: tuple[Contender, ...] | list[Contender] = ()) -> list[Contender]:
    """'a,b,c' (or a sequence) -> Contenders, built in or `defined`
    (--contender); unknown or repeated names fail."""
    table = {**CONTENDERS}
    for c in defined:
        if c.name in table:
            raise HarnessError(f"scheduler {c.name} is defined twice (or is a built-in one)")
        table[c.name] = c
    words = [w for w in names.split(",") if w] if isinstance(names, str) else list(names)
    unknown = [w for w in words if w not in table]
    if unknown:
        raise HarnessError(f"unknown scheduler(s) {', '.join(unknown)}; known: "
                           f"{', '.join(table)}")
    if len(set(words)) != len(words):
        raise HarnessError(f"a scheduler is named twice: {','.join(words)}")
    if len(words) < 2:
        raise HarnessError("side by side needs at least two schedulers")
    return [table[w] for w in words]


def needs_sched_ext(cs: list[Contender]) -> list[str]:
    """The contenders that are sched_ext schedulers (need a kernel with it)."""
    return [c.name for c in cs if c.loader]


def default_suite() -> Path:
    return paths.configs_dir() / "scx.suite"


@dataclass(frozen=True)
class Run:
    tag: str
    rep: int
    contender: str
    entry: int               # index into Spec.entries
    level: int
    warmup: bool = False


@dataclass(frozen=True)
class Load:
    index: int
    rep: int
    contender: Contender
    runs: tuple[Run, ...]


@dataclass
class Spec:
    preset: str
    entries: list[suite.Entry]     # this preset's entries of the suite file
    contenders: list[Contender]
    reps: int
    warmup: bool = True
    waste: bool = True             # trace the measured runs (wasted CPU time)

    def __post_init__(self) -> None:
        if self.reps < 2:
            raise HarnessError("side by side needs at least 2 repetitions (intervals)")
        other = [e.name for e in self.entries if e.preset != self.preset]
        if other or not self.entries:
            raise HarnessError(f"side-by-side spec for {self.preset}: entries {other or '[]'}")

    def command(self, entry: int, level: int) -> list[str]:
        e = self.entries[entry]
        return e.wl.argv(level, e.size or e.wl.default_size)

    def to_json(self) -> dict:
        return {"preset": self.preset, "reps": self.reps, "warmup": self.warmup,
                "waste": self.waste,
                "contenders": [asdict(c) for c in self.contenders],
                "entries": [{"workload": e.workload, "levels": e.levels,
                             "size": e.size or e.wl.default_size,
                             "command": self.command(i, e.levels[0]),
                             **({"custom": e.custom} if e.custom is not None else {})}
                            for i, e in enumerate(self.entries)]}

    @classmethod
    def from_json(cls, d: Any) -> "Spec":
        """A Spec back from to_json() (`idlesteal collect` of a kept run);
        each entry's command must come out as the run recorded it (a
        workload redefined since would measure something else)."""
        try:
            cs = [Contender(str(c["name"]), tuple(c["features"]), tuple(c["loader"]),
                            str(c["ops"])) for c in d["contenders"]]
            entries = [suite.Entry(str(d["preset"]), str(e["workload"]),
                                   [int(x) for x in e["levels"]], int(e["size"]),
                                   e.get("custom")) for e in d["entries"]]
            spec = cls(str(d["preset"]), entries, cs, int(d["reps"]), bool(d["warmup"]),
                       bool(d["waste"]))
            for i, e in enumerate(d["entries"]):
                now = spec.command(i, entries[i].levels[0])
                if now != e["command"]:
                    raise SideBySideError(f"{e['workload']}: the run's command was "
                                          f"{shlex.join(e['command'])}, the workload "
                                          f"now gives {shlex.join(now)}")
            return spec
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise SideBySideError(f"the side-by-side spec does not read back "
                                  f"({type(e).__name__}: {e})") from None


def rotation(names: list[str], rep: int) -> list[str]:
    k = rep % len(names)
    return names[k:] + names[:k]


def plan(spec: Spec) -> list[Load]:
    """Loads in boot order; each holds its warm-up run and measured runs."""
    by_name = {c.name: c for c in spec.contenders}
    loads: list[Load] = []
    n = 0
    for rep in range(spec.reps):
        for name in rotation([c.name for c in spec.contenders], rep):
            runs = []
            if spec.warmup:
                runs.append(Run(f"r{n:04d}", rep, name, 0,
                                max(spec.entries[0].levels), warmup=True))
                n += 1
            for i, e in enumerate(spec.entries):
                for lv in e.levels:
                    runs.append(Run(f"r{n:04d}", rep, name, i, lv))
                    n += 1
            loads.append(Load(len(loads), rep, by_name[name], tuple(runs)))
    return loads


FEATURES = "/sys/kernel/debug/sched/features"
BOOT_FEATURES = "/tmp/sched_features.boot"
# Guest shell functions of script(): sbs_need SCHEDULER FEATURE... fails the
# boot, naming the feature, unless the kernel has each (as NAME or NO_NAME);
# sbs_boot FEATURE... prints each one's word at boot.
_FEATURE_FUNCS = f"""sbs_need() {{
    _s=$1; shift
    for _f in "$@"; do
        tr ' ' '\\n' < {BOOT_FEATURES} | grep -qx -e "$_f" -e "NO_$_f" || fail "sched feature $_f is not in this kernel ({FEATURES}): scheduler $_s needs it"
    done
}}
sbs_boot() {{
    for _f in "$@"; do tr ' ' '\\n' < {BOOT_FEATURES} | grep -x -e "$_f" -e "NO_$_f"; done
}}"""
# After each run: sched_ext's state and ops, "absent" on a kernel without it.
_STATE = (f"if [ -e {scx.STATE} ]; then echo \"$(cat {scx.STATE}) $(cat {scx.OPS} 2>/dev/null)\"; "
          "else echo absent; fi")


def switch_features(c: Contender, cs: list[Contender]) -> list[str]:
    """The words set_features gets when switching to `c`: every feature
    another contender of the plan sets and `c` does not goes back to its
    boot value first (a guest command substitution, sbs_boot), so a
    contender never inherits the one before it (NO_NI_RANDOM, say)."""
    own = {feature_base(w) for w in c.features}
    others = sorted({feature_base(w) for o in cs for w in o.features} - own)
    return ([f"$(sbs_boot {' '.join(others)})"] if others else []) + list(c.features)


def script(spec: Spec, loads: list[Load], trace_kb: int | None = None) -> str:
    """The guest script of one boot (and host mode's: hostsbs.py, with the
    per-CPU trace buffer size `trace_kb` of the machine it runs on).  A
    plan in which no contender sets a sched feature does not read
    sched/features (a host kernel whose debugfs is closed)."""
    scx_needed = bool(needs_sched_ext(spec.contenders))
    feats = any(c.features for c in spec.contenders)
    lines = ["echo 1 > /sys/kernel/debug/sched/verbose 2>/dev/null || :",
             "section meta", "uname -a", "cat /proc/cmdline", "nproc",
             "section topology", topology.GUEST_SNIPPET.strip(),
             "section boot.state",
             f"cat {scx.STATE} || fail 'no sched_ext in this kernel'" if scx_needed
             else f"cat {scx.STATE} 2>/dev/null || echo absent"]
    if feats:
        lines += ["section features", _FEATURE_FUNCS,
                  f"cp {FEATURES} {BOOT_FEATURES} || fail 'cannot read {FEATURES}'",
                  f"cat {BOOT_FEATURES}"]
    lines += [f"sbs_need {c.name} {' '.join(sorted({feature_base(w) for w in c.features}))}"
              for c in spec.contenders if c.features]
    needed = {e.wl.binary for e in spec.entries} | {c.binary for c in spec.contenders if c.binary}
    lines += [f"command -v {b} >/dev/null || fail '{b} is not in the guest image'"
              for b in sorted(needed)]
    if spec.waste and trace_kb is not None:
        lines.append(f"trace_setup {trace_kb}")
    elif spec.waste:
        preset = topology.get(spec.preset)
        lines += tracerun.setup(preset.ncpus, preset.mem_mb)
    for ld in loads:
        c, lt = ld.contender, f"L{ld.index:03d}"
        lines += [f"# load {ld.index}: rep {ld.rep}, {c.name}", f"section {lt}.start"]
        if feats:
            lines.append(f"set_features {' '.join(switch_features(c, spec.contenders))}")
        if c.loader:
            lines.append(f"scx_start /tmp/{lt}.log {shlex.join(c.loader)} "
                         f"|| fail '{c.name} did not load (load {ld.index})'")
        for r in ld.runs:
            cmd = shlex.join(spec.command(r.entry, r.level))
            run = [f"{cmd} 2>&1 || fail '{spec.entries[r.entry].workload} failed in "
                   f"{r.tag} under {c.name}'"]
            traced = spec.waste and not r.warmup
            # The kernel's steal / kick counters around each measured run
            # (nothing but /proc/schedstat on a kernel without the series).
            snap = [] if r.warmup else [f"section {r.tag}.sched.before", "schedsnap"]
            lines += [*snap, f"section {r.tag}.stat.before", "cat /proc/stat",
                      f"section {r.tag}.output",
                      *(["trace_on", *run, "trace_off"] if traced else run),
                      f"section {r.tag}.stat.after", "cat /proc/stat",
                      f"section {r.tag}.state", _STATE]
            if snap:
                lines += [f"section {r.tag}.sched.after", "schedsnap"]
            if traced:
                lines.append(f"trace_dump {r.tag}")
        if c.loader:
            lines += [f"section {lt}.stop",
                      f"scx_stop || fail '{c.name} did not unload (load {ld.index})'",
                      f"tail -n 3 /tmp/{lt}.log"]
    return "\n".join(lines) + "\n"


@dataclass
class Measurement:
    tag: str
    rep: int
    contender: str
    workload: str
    level: int
    value: float
    metrics: dict[str, float]
    busy: float
    waste: dict | None = None      # waste.Waste.as_dict() of the run; None untraced
    # the run's STEAL / STEAL_KICK counters (schedstat.COUNTERS), summed over
    # CPUs; None where the guest output has no snapshots
    counters: dict[str, int] | None = None

    def to_json(self) -> dict:
        return asdict(self)


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
    (`topo`: the machine's, default the preset's)."""
    if not spec.waste:
        return []
    topo = topo or wst.from_preset(topology.get(spec.preset))
    out = []
    top = max(spec.entries[0].levels)
    for c in spec.contenders:
        runs = [r for ld in loads if ld.contender == c for r in ld.runs
                if not r.warmup and r.entry == 0 and r.level == top]
        if not runs:
            continue
        path = outdir / f"{spec.preset}-timeline-{c.name}.png"
        tl = tracerun.timeline(sections, runs[0].tag, topo)
        title = (f"{spec.preset}: {c.name}, {runs[0].tag}, {spec.entries[0].workload} "
                 f"{spec.entries[0].wl.level} {top}")
        if wst.plot_timeline(tl, path, title):
            out.append(path)
    return out


def loader_tails(loads: list[Load], sections: dict[str, str]) -> dict[str, list[str]]:
    """The last lines of each loader's output ("L007" -> lines)."""
    return {f"L{ld.index:03d}": sections.get(f"L{ld.index:03d}.stop", "").splitlines()
            for ld in loads if ld.contender.loader}


def idlesteal_steals(loads: list[Load], sections: dict[str, str]) -> dict[str, list[int]]:
    """scx_idlesteal's final steal count of each of its loads, per contender."""
    out: dict[str, list[int]] = {}
    for ld in loads:
        if ld.contender.binary != "scx_idlesteal":
            continue
        final = scx.final_stats(sections.get(f"L{ld.index:03d}.stop", ""))
        out.setdefault(ld.contender.name, []).append(int(final["steals"]))
    return out


# ------------------------------------------------------------------ statistics

def summarize(spec: Spec, ms: list[Measurement]) -> list[dict]:
    """One row per workload and level: every contender's figures and the call."""
    rows = []
    base = spec.contenders[0].name
    for e in spec.entries:
        wl = e.wl
        for lv in e.levels:
            vals = {c.name: [m.value for m in ms if m.contender == c.name
                             and m.workload == wl.name and m.level == lv]
                    for c in spec.contenders}
            if any(len(v) < 2 for v in vals.values()):
                raise SideBySideError(f"{wl.name} {lv}: fewer than 2 measurements for "
                                      + ", ".join(k for k, v in vals.items() if len(v) < 2))
            wasted = {c.name: [report.WASTE_KEYS["llc_pct"][1](m.waste) for m in ms
                               if m.contender == c.name and m.workload == wl.name
                               and m.level == lv and m.waste is not None]
                      for c in spec.contenders}
            figs: dict[str, dict[str, Any]] = {}
            for name, v in vals.items():
                s = stats.summarize(v)
                r = stats.ratio(v, vals[base])
                figs[name] = {"n": s.n, "mean": s.mean, "ci95": s.ci95,
                              "ratio": r.value, "ratio_low": r.low, "ratio_high": r.high,
                              "p_vs_base": stats.welch(v, vals[base]).p if name != base else None,
                              "busy": stats.mean([m.busy for m in ms if m.contender == name
                                                  and m.workload == wl.name
                                                  and m.level == lv])}
                if len(wasted[name]) == len(v):
                    s = stats.summarize(wasted[name])
                    figs[name]["wasted_llc_pct"] = {"mean": s.mean, "ci95": s.ci95}
                    traced = [m.waste for m in ms if m.contender == name
                              and m.workload == wl.name and m.level == lv
                              and m.waste is not None]
                    for key, (_, f) in report.MIGRATION_KEYS.items():
                        s = stats.summarize([f(w) for w in traced])
                        figs[name][key] = {"mean": s.mean, "ci95": s.ci95}
                    # how the wasted time began (docs/waste.md): the part no
                    # pull at idle entry can see is "arrival"
                    s = stats.summarize([100 * w["began_fraction"].get("arrival", 0.0)
                                         for w in traced])
                    figs[name]["arrival_pct"] = {"mean": s.mean, "ci95": s.ci95}
                    if name != base:
                        figs[name]["wasted_removed_pct"] = report.removed(wasted[base],
                                                                          wasted[name])
                cnt = [m.counters for m in ms if m.contender == name
                       and m.workload == wl.name and m.level == lv and m.counters is not None]
                if cnt and len(cnt) == len(v):
                    figs[name]["counters"] = {k: stats.mean([float(c[k]) for c in cnt])
                                              for k in schedstat.COUNTERS}
            pick = max if wl.higher_better else min
            best = pick(vals, key=lambda k: stats.mean(vals[k]))
            ties = [k for k in vals if k != best and not stats.welch(vals[best], vals[k]).significant]
            rows.append({"workload": wl.name, "level": lv, "level_name": wl.level,
                         "metric": wl.metric, "unit": wl.unit,
                         "higher_better": wl.higher_better, "base": base,
                         "contenders": figs, "best": best, "ties": ties,
                         "call": best if not ties else None})
    return rows


def tally(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Per contender: cells it is called best in, cells tied for best, and
    cells significantly better / worse than the baseline."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        for name, f in r["contenders"].items():
            t = out.setdefault(name, {"best": 0, "tied_best": 0, "better": 0, "worse": 0,
                                      "cells": 0})
            t["cells"] += 1
            if r["call"] == name:
                t["best"] += 1
            elif r["call"] is None and (name == r["best"] or name in r["ties"]):
                t["tied_best"] += 1
            p = f["p_vs_base"]
            if p is not None and p < 0.05:
                gain = f["ratio"] > 1 if r["higher_better"] else f["ratio"] < 1
                t["better" if gain else "worse"] += 1
    return out


def table(spec: Spec, rows: list[dict], steals: dict[str, list[int]] | None = None) -> str:
    base = spec.contenders[0].name
    w = max(len(c.name) for c in spec.contenders)
    out = [f"{spec.preset}: {len(spec.contenders)} schedulers, {spec.reps} repetitions "
           f"each, rotated, one boot; ratio = mean / mean of {base}"]
    for r in rows:
        better = "higher" if r["higher_better"] else "lower"
        out.append("")
        out.append(f"{r['workload']} {r['level_name']} {r['level']}: {r['metric']} "
                   f"({r['unit']}, {better} is better)")
        waste = all("wasted_llc_pct" in f for f in r["contenders"].values())
        kicks = any(f.get("counters", {}).get("steal_kicks_sent", 0) or
                    f.get("counters", {}).get("steal_tasks", 0)
                    for f in r["contenders"].values())
        out.append(f"  {'scheduler':<{w}}  {'mean ± 95% CI':>20}  {'ratio [95% CI]':>22}  "
                   f"{'p':>6}  {'%busy':>5}"
                   + (f"  {'wasted LLC %':>14}  {'removes % of ' + base:>20}"
                      f"  {'arrival %':>9}"
                      f"  {'wait-mig/CPU-s':>14}  {'bounce/CPU-s':>12}" if waste else "")
                   + (f"  {'steals':>7}  {'kicks':>7}  {'pulled':>6}" if kicks else ""))
        for name, f in r["contenders"].items():
            p = "" if f["p_vs_base"] is None else f"{f['p_vs_base']:.3f}"
            ratio = "1" if name == base else \
                f"{f['ratio']:.3f} [{f['ratio_low']:.3f}, {f['ratio_high']:.3f}]"
            line = (f"  {name:<{w}}  {f['mean']:>10.4g} ± {f['ci95']:<8.3g} "
                    f"{ratio:>22}  {p:>6}  {f['busy']:5.1f}")
            if waste:
                wl_ = f["wasted_llc_pct"]
                rm = f.get("wasted_removed_pct")
                removes = "" if rm is None else \
                    f"{rm['value']:>6.1f} [{rm['low']:.0f}, {rm['high']:.0f}]" \
                    + (" *" if rm["welch_p"] < 0.05 else "")
                line += f"  {wl_['mean']:>6.2f} ± {wl_['ci95']:<5.2f}  {removes:<20}"
                arr = f.get("arrival_pct")
                line += f"  {arr['mean']:>9.2f}" if arr else f"  {'':>9}"
                if "bounces_per_cpu_s" in f:
                    line += (f"  {f['migrations_waiting_per_cpu_s']['mean']:>14.1f}"
                             f"  {f['bounces_per_cpu_s']['mean']:>12.2f}")
            if kicks:
                c = f.get("counters")
                line += (f"  {c['steal_tasks']:>7.1f}  {c['steal_kicks_sent']:>7.1f}  "
                         f"{c['steal_kick_tasks']:>6.1f}") if c else ""
            out.append(line)
        if r["call"]:
            out.append(f"  best: {r['call']} (Welch p < 0.05 against each other scheduler)")
        else:
            out.append(f"  best mean: {r['best']}; cannot be told apart from: "
                       + ", ".join(r["ties"]))
    out.append("")
    out.append(f"{'scheduler':<{w}}  cells  best  tied-best  better/worse than {base} (p < 0.05)")
    for name, t in tally(rows).items():
        out.append(f"{name:<{w}}  {t['cells']:>5}  {t['best']:>4}  {t['tied_best']:>9}  "
                   f"{t['better']}/{t['worse']}")
    if any("wasted_llc_pct" in f for r in rows for f in r["contenders"].values()):
        out.append("wasted LLC % = CPU time a CPU sat idle while a task allowed on it waited "
                   "on another CPU of its LLC (guest-time scheduler trace, docs/waste.md), "
                   f"mean ± 95% CI; removes = how much of {base}'s wasted time the scheduler "
                   "removes, [95% CI], * = Welch p < 0.05; wait-mig/CPU-s = migrations of "
                   "waiting tasks (queued, not running: pulls, steals, balance moves; not "
                   "wakeup placements) per CPU-second, bounce/CPU-s = such moves undone by "
                   f"the task's next one within {wst.BOUNCE_WINDOW_NS / 1e6:g} ms, means "
                   "(95% CIs in the JSON); arrival % = the part of the wasted time that "
                   "began on a CPU already idle when the task started to wait (of the "
                   "run's CPU time)")
    if any("counters" in f for r in rows for f in r["contenders"].values()):
        out.append("steals = tasks the kernel's pulls from the overload mask took, kicks = "
                   "STEAL_KICK IPIs sent, pulled = kicks that took a task; means per run, "
                   "summed over CPUs (shown where any is non-zero)")
    if steals:
        for name, v in steals.items():
            out.append(f"{name}: steals per load (its own counter): "
                       + " ".join(str(x) for x in v))
    return "\n".join(out) + "\n"


def plot(spec: Spec, rows: list[dict], path: Path, title: str = "") -> bool:
    """The table's picture (outdir/<preset>.png): per workload and level,
    each scheduler's mean and 95% interval divided by the baseline's mean
    (the baseline at 1 with its own interval).  False when matplotlib is
    missing (util.pyplot() said so, once)."""
    plt = pyplot()
    if plt is None:
        return False
    names = [c.name for c in spec.contenders]
    base = names[0]
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(rows) + 2.5), 4.5))
    for j, name in enumerate(names):
        xs, ys, es = [], [], []
        for i, r in enumerate(rows):
            b = r["contenders"][base]["mean"]
            f = r["contenders"][name]
            xs.append(i + (j - (len(names) - 1) / 2) * width)
            ys.append(f["mean"] / b)
            es.append(f["ci95"] / abs(b))
        ax.errorbar(xs, ys, yerr=es, fmt="o", capsize=3, markersize=4, label=name)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"{r['workload']}\n{r['level_name']} {r['level']}\n"
                        f"{r['metric']}, {'higher' if r['higher_better'] else 'lower'} better"
                        for r in rows], fontsize=7)
    ax.set_ylabel(f"mean / mean of {base} (95% CI)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=min(len(names), 6), loc="upper center",
              bbox_to_anchor=(0.5, -0.2), frameon=False)
    ax.set_title(title or f"{spec.preset}: {len(names)} schedulers, {spec.reps} repetitions, "
                 f"relative to {base}", fontsize=9)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return True


# ------------------------------------------------------------------ running

def results_dir() -> Path:
    return paths.results_dir() / "scx"


def binaries(cs: list[Contender]) -> dict[str, Path]:
    """Host binary of every loader the contenders need (built before)."""
    out: dict[str, Path] = {}
    for c in cs:
        b = c.binary
        if not b:
            continue
        path = peers.binary(b) if b in peers.PEERS else scx.binary(b)
        if not path.exists():
            raise HarnessError(f"{path} is missing; build it with `make scx`")
        out[b] = path
    return out


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


RUN_KIND = "sidebyside"      # run.json's kind (collect.py)


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
                              "scx_idlesteal_sha256": scx.source_digest()})
    preset.verify(res.sections.get("topology", ""))
    console = res.console.read_text(errors="replace")
    meta = provenance.provenance({variant: build_meta})
    meta.update({"preset": spec.preset, "kernel_variant": variant,
                 "peers": versions, "scx_idlesteal_sha256": scx.source_digest(),
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


def specs(entries: list[suite.Entry], cs: list[Contender], reps: int,
          waste: bool = True) -> list[Spec]:
    """One Spec per preset, in the suite file's order."""
    order = list(dict.fromkeys(e.preset for e in entries))
    return [Spec(p, [e for e in entries if e.preset == p], cs, reps, waste=waste)
            for p in order]


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

