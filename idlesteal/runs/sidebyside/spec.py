"""What one side-by-side boot runs: the Spec (one preset's suite entries,
the contenders, the repetitions), its plan and the guest script.

The plan (plan()): for each repetition, each contender in turn (the order
rotated by one per repetition, so no contender always follows the same
one) is switched in -- features set, loader started and checked in charge
-- then every workload runs at every level of configs/scx.suite's entries
for that preset, then the loader is stopped.  The first run after each
switch is a warm-up and is discarded.

The script (script()): at boot the guest checks that the kernel has every
feature a contender names (a missing one fails the boot, naming it); a
switch puts the features other contenders set back to their boot values
before setting its own (switch_features()).  After every run the guest
prints sched_ext's state, so a scheduler ejected mid-run is an error, not a
silent EEVDF measurement (output.py reads it).  Every measured run is
traced for the wasted-CPU measure (idlesteal/measure/tracerun.py;
`waste=False` turns it off): a task waiting in a DSQ is a runnable task
that is not running, as it is for EEVDF.
"""
from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ... import paths
from ...guest import topology
from ...measure import tracerun
from ...report.sidebyside import SideBySideError
from ...scx import own as scx
from ...util import HarnessError
from .. import suite
from .contender import Contender, feature_base, needs_sched_ext


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
                            str(c["ops"]), str(c.get("build", ""))) for c in d["contenders"]]
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


def specs(entries: list[suite.Entry], cs: list[Contender], reps: int,
          waste: bool = True) -> list[Spec]:
    """One Spec per preset, in the suite file's order."""
    order = list(dict.fromkeys(e.preset for e in entries))
    return [Spec(p, [e for e in entries if e.preset == p], cs, reps, waste=waste)
            for p in order]


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
