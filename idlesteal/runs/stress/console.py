"""Stress suite: the console log beyond "any kernel error fails".

Known mainline warnings (KNOWN_WARNINGS, docs/stress.md): kernel warnings
reproduced without the series, tolerated by vm.run_script() only with
their call path (call_trace()) and, where the console has the stress
script's partition lines, after the documented partition/hotplug sequence
(partition_sequence()); known_warnings() sorts them from failures.  Also
errors_before_smp(): kernel errors all printed before the secondary CPUs
came up, which run() retries the boot for once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...guest import topology, vm
from ...measure import kcsan

@dataclass(frozen=True)
class KnownWarning:
    """A kernel warning reproduced on the kernel without the series and
    documented in docs/stress.md: recognised by its WARNING line (file:line,
    function, the task) and by its call path on the console, nothing else.
    A run that prints it is not failed for it; the report and the summary
    name it loudly.  The same line with another call path is a failure."""
    name: str
    anchor: str                  # docs/stress.md#...
    line: re.Pattern[str]        # the WARNING line; group "cpu": the CPU it names
    path: tuple[str, ...]        # the call path, innermost first (reliable frames)
    skip: frozenset[str]         # frames allowed before the path (inlined or not)
    about: str

    def path_matches(self, frames: list[str]) -> bool:
        rest = [f for f in frames if f not in self.skip]
        return rest[:len(self.path)] == list(self.path)


CPUSET_OVERLAP = KnownWarning(
    name="cpuset-partition-hotplug-overlap",
    anchor="docs/stress.md#a-mainline-cpuset-warning-overlapping-partitions-after-hotplug",
    line=re.compile(r"WARNING: \S*kernel/cgroup/cpuset\.c:888 at "
                    r"rebuild_sched_domains_locked\+0x[0-9a-f]+/0x[0-9a-f]+, "
                    r"CPU#(?P<cpu>\d+): cpuhp/(?P=cpu)/\d+"),
    path=("cpuset_handle_hotplug", "cpuset_update_active_cpus", "sched_cpu_activate",
          "cpuhp_invoke_callback"),
    skip=frozenset({"rebuild_sched_domains_locked", "rebuild_sched_domains_cpuslocked",
                    "generate_sched_domains"}),
    about="Linux 7.2 cpuset: a populated partition root that lost all its CPUs to "
          "hotplug and got two back one at a time shares the second with the top cpuset "
          "(overlapping partition roots in generate_sched_domains())",
)
KNOWN_WARNINGS: tuple[KnownWarning, ...] = (CPUSET_OVERLAP,)


def known_tolerated() -> re.Pattern[str]:
    """Console lines vm.run_script() does not fail a run for: the WARNING
    lines of KNOWN_WARNINGS (each then checked by known_warnings())."""
    return re.compile("|".join(f"(?:{k.line.pattern})" for k in KNOWN_WARNINGS))


def tolerated(kcsan_races: bool) -> re.Pattern[str]:
    pats = [known_tolerated().pattern] + ([kcsan.DATA_RACE.pattern] if kcsan_races else [])
    return re.compile("|".join(f"(?:{p})" for p in pats))


_FRAME_RE = re.compile(r"^\[\s*[\d.]+\]\s+(\? )?([A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+")
_CONSOLE_TS_RE = re.compile(r"^\[\s*([\d.]+)\]")
_KLOG_PART_RE = re.compile(r"stress: partition (\d+) cpus (\S+) (root: .*|remove)$")
_CPU_OFF_RE = re.compile(r"smpboot: CPU (\d+) is now offline")
_CPU_ON_RE = re.compile(r"smpboot: Booting Node \d+ Processor (\d+) ")


def call_trace(lines: list[str], start: int) -> list[str]:
    """The reliable frames (no '? ') of the Call Trace that follows the
    report at lines[start], innermost first ([] when there is none)."""
    frames: list[str] = []
    in_trace = False
    for line in lines[start + 1:start + 200]:
        if "Call Trace:" in line:
            in_trace = True
            continue
        if not in_trace:
            if "---[ end trace" in line:
                break
            continue
        if "</TASK>" in line or "---[ end trace" in line:
            break
        m = _FRAME_RE.match(line.strip())
        if m and not m.group(1):
            frames.append(m.group(2))
    return frames


def partition_sequence(lines: list[str], upto: int, cpu: int) -> dict:
    """The evidence on the console for the documented sequence, from the
    stress script's partition lines (klog) and the kernel's hotplug lines
    before lines[upto]: the last partition created before it and not
    removed, whose CPUs include `cpu`, had all its CPUs offline at some
    point after it was made, and another of its CPUs came online after that
    and before `cpu` did.  {"markers": False} when the console has no
    partition lines (runs before 2026-11-25)."""
    online: set[int] | None = None
    part: dict | None = None
    steps: list[str] = []
    markers = False
    for line in lines[:upto]:
        ts = _CONSOLE_TS_RE.match(line.strip())
        t = ts.group(1) if ts else "?"
        if (m := _KLOG_PART_RE.search(line)):
            markers = True
            if m.group(3) == "remove":
                part = None
                continue
            cpus = set(topology.parse_cpulist(m.group(2)))
            state = m.group(3)[len("root: "):]
            on = re.search(r"online (\S+)$", state)
            online = set(topology.parse_cpulist(on.group(1))) if on else online
            part = {"id": int(m.group(1)), "cpus": m.group(2), "set": cpus, "emptied": False,
                    "back_first": None}
            steps = [f"{t} partition {m.group(1)} cpus {m.group(2)} root: {state}"]
        elif (m := _CPU_OFF_RE.search(line)) or (m := _CPU_ON_RE.search(line)):
            c = int(m.group(1))
            going_on = bool(_CPU_ON_RE.search(line))
            if online is not None:
                (online.add if going_on else online.discard)(c)
            if part is not None and c in part["set"]:
                steps.append(f"{t} CPU {c} {'online' if going_on else 'offline'}")
                if online is not None and not going_on and not (part["set"] & online):
                    part["emptied"], part["back_first"] = True, None
                elif going_on and part["emptied"] and part["back_first"] is None and c != cpu:
                    part["back_first"] = c
    if not markers:
        return {"markers": False}
    ok = bool(part and cpu in part["set"] and len(part["set"]) >= 2 and part["emptied"]
              and part["back_first"] is not None)
    return {"markers": True, "matches": ok, "partition": part["cpus"] if part else None,
            "steps": steps[-12:]}


def known_warnings(console_text: str) -> tuple[list[dict], list[str]]:
    """(the known warnings the console shows, failures): every line that
    known_tolerated() let through must be a KNOWN_WARNINGS entry with its
    call path, and -- where the console has the stress script's partition
    lines -- after the documented sequence; otherwise it is a failure."""
    lines = console_text.splitlines()
    found: list[dict] = []
    failures: list[str] = []
    tol = known_tolerated()
    for i, line in enumerate(lines):
        if not tol.search(line):
            continue
        k = next(k for k in KNOWN_WARNINGS if k.line.search(line))
        m = k.line.search(line)
        assert m is not None
        cpu = int(m.group("cpu"))
        frames = call_trace(lines, i)
        seq = partition_sequence(lines, i, cpu)
        rec = {"name": k.name, "anchor": k.anchor, "line": line.strip(), "cpu": cpu,
               "call_path": frames[:8], "sequence": seq}
        if not k.path_matches(frames):
            failures.append(f"kernel warning with the line of {k.name} but not its call path "
                            f"({' <- '.join(k.path)}): {line.strip()} [{' <- '.join(frames[:6])}]")
        elif seq["markers"] and not seq["matches"]:
            failures.append(f"kernel warning {k.name} ({line.strip()}) without the documented "
                            f"partition/hotplug sequence before it on the console "
                            f"({k.anchor}): {'; '.join(seq['steps'][-6:]) or 'no partition'}")
        else:
            found.append(rec)
    return found, failures


def known_line(k: dict) -> str:
    return (f"KNOWN MAINLINE WARNING (not a failure of the series; {k['anchor']}): "
            f"{k['line']}")


_SMP_UP_RE = re.compile(r"^\[\s*([0-9.]+)\] smp: Bringing up secondary CPUs", re.M)
_STAMP_RE = re.compile(r"^\[\s*([0-9.]+)\]")


def errors_before_smp(console_text: str) -> list[str]:
    """The kernel error lines of a console log if *all* of them were printed
    before the secondary CPUs came up, else [].

    Before SMP bring-up the boot CPU runs alone: no sched domain, no overload
    mask and no steal exists yet, so such a report (e.g. the debug kernel's
    early-boot KASAN report in handle_edge_irq() seen once under TCG) is not
    the series' and says nothing about the load.  Anything later counts."""
    errs = vm.kernel_errors(console_text, known_tolerated())
    m = _SMP_UP_RE.search(console_text)
    if not errs or not m:
        return []
    smp_at = float(m.group(1))
    for e in errs:
        t = _STAMP_RE.match(e)
        if not t or float(t.group(1)) >= smp_at:
            return []
    return errs
