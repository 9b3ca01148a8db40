"""The machine's state that host mode changes (idlesteal/runs/host/): the
sched features, sched/verbose, the schedstats sysctl, sched_ext's state,
and in the top-level tracefs buffer tracing on/off, buffer size, clock,
overwrite and the measure's events.  `snapshot()` reads it as a State,
`differences()` compares two, `restore()` writes back only what differs
(removing host mode's own tracefs instance first, unmounting what it
mounted last) and `scx_off()` puts out a sched_ext scheduler a run left in
charge (SysRq-S).  Writes go through `_write` (common.py), which the
tests replace with what the kernel does where it is looked up: here and
in lock.py.
"""
from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ...util import HarnessError, log
from .common import (EVENTS, FEATURES, ROOT, SCHED_EXT, SCHEDSTATS, TRACEFS, VERBOSE,
                     HostError, _p, _read, _write)
from .probe import parse_features, parse_trace_clock

def _buffer_kb(text: str) -> str:
    """buffer_size_kb as the size to write back: '7 (expanded: 1408)' ->
    '1408' (a buffer never expanded is allocated at its default size once
    anything traces; it cannot be shrunk back to unexpanded), 'X' when the
    per-CPU sizes differ."""
    m = re.search(r"expanded:\s*(\d+)", text)
    return m.group(1) if m else text.strip()


@dataclass
class State:
    """What host mode may change, as it was.  None: the file was missing or
    not readable (nothing to put back)."""
    mounts_made: list[str] = field(default_factory=list)   # targets, in mount order
    instance_made: Optional[str] = None                     # INSTANCE, once made
    features: Optional[list[str]] = None
    verbose: Optional[str] = None
    schedstats: Optional[str] = None
    tracing_on: Optional[str] = None
    buffer_size_kb: Optional[str] = None
    per_cpu_kb: dict[str, str] = field(default_factory=dict)   # when buffer_size_kb is X
    trace_clock: Optional[str] = None
    overwrite: Optional[str] = None
    events: dict[str, str] = field(default_factory=dict)
    sched_ext: Optional[str] = None                        # /sys/kernel/sched_ext/state
    pid: int = 0
    # the script's process group and run directory, once started: what a
    # run killed with SIGKILL leaves running, for the next run to end
    script_pgid: int = 0
    script_dir: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> State:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def snapshot(root: Path = ROOT) -> State:
    """The current values of everything in State (mounts_made left empty)."""
    s = State(pid=os.getpid())
    f = _read(_p(root, FEATURES))
    s.features = parse_features(f) if f is not None else None
    v = _read(_p(root, VERBOSE))
    s.verbose = v.strip() if v is not None else None
    st = _read(_p(root, SCHEDSTATS))
    s.schedstats = st.strip() if st is not None else None
    sx = _read(_p(root, SCHED_EXT + "/state"))
    s.sched_ext = sx.strip() if sx is not None else None
    t = _p(root, TRACEFS)
    if (t / "trace").exists():
        on = _read(t / "tracing_on")
        s.tracing_on = on.strip() if on is not None else None
        kb = _read(t / "buffer_size_kb")
        s.buffer_size_kb = _buffer_kb(kb) if kb is not None else None
        if s.buffer_size_kb == "X":
            for d in sorted(t.glob("per_cpu/cpu[0-9]*")):
                pk = _read(d / "buffer_size_kb")
                if pk is not None:
                    s.per_cpu_kb[d.name] = _buffer_kb(pk)
        clock = _read(t / "trace_clock")
        s.trace_clock = parse_trace_clock(clock)[0] if clock is not None else None
        ow = _read(t / "options/overwrite")
        s.overwrite = ow.strip() if ow is not None else None
        for e in EVENTS:
            en = _read(t / f"events/sched/{e}/enable")
            if en is not None:
                s.events[e] = en.strip()
    return s


def _same_kb(a: Optional[str], b: Optional[str]) -> bool:
    """Two buffer sizes the kernel treats as one: it rounds a size up to
    whole data pages (4080 bytes of a 4 KiB page), so 1408 reads back 1410."""
    if a is None or b is None or not a.isdigit() or not b.isdigit():
        return a == b
    return -(-int(a) * 1024 // 4080) == -(-int(b) * 1024 // 4080)


def differences(want: State, have: State) -> list[str]:
    """What differs between two states (mounts and pid aside)."""
    out = []
    for f in dataclasses.fields(State):
        if f.name in ("mounts_made", "instance_made", "pid", "script_pgid", "script_dir"):
            continue
        a, b = getattr(want, f.name), getattr(have, f.name)
        if f.name == "features" and a is not None and b is not None:
            a, b = sorted(a), sorted(b)
        if f.name == "buffer_size_kb" and _same_kb(a, b):
            continue
        if f.name == "per_cpu_kb" and set(a) == set(b) and \
                all(_same_kb(a[k], b[k]) for k in a):
            continue
        if a != b:
            out.append(f"{f.name}: {b!r}, was {a!r}")
    return out


Mounter = Callable[[str, Path], None]     # (fstype, target)
Unmounter = Callable[[Path], None]


def real_mount(fstype: str, target: Path) -> None:
    r = subprocess.run(["mount", "-t", fstype, "none", str(target)], capture_output=True,
                       text=True)
    if r.returncode:
        raise HostError(f"cannot mount {fstype} at {target}: {r.stderr.strip()}")


def real_umount(target: Path) -> None:
    r = subprocess.run(["umount", str(target)], capture_output=True, text=True)
    if r.returncode:
        raise HostError(f"cannot unmount {target}: {r.stderr.strip()}")


def _try_write(path: Path, value: str, problems: list[str]) -> None:
    try:
        _write(path, value)
    except OSError as e:
        problems.append(f"{path}: cannot write {value!r}: {e.strerror or e}")


_TRACE_FIELDS = ("tracing_on", "buffer_size_kb", "per_cpu_kb", "trace_clock", "overwrite",
                 "events")


def restore(state: State, root: Path = ROOT, umount: Unmounter = real_umount) -> list[str]:
    """Remove host mode's tracefs instance, write back what differs from
    `state` (nothing else: a value as found is not written again), unmount
    what host mode mounted, and return what could not be put back (empty
    when all is as it was)."""
    problems: list[str] = []
    if state.instance_made:
        inst = _p(root, state.instance_made)
        if inst.exists():
            try:
                os.rmdir(inst)
            except OSError as e:
                problems.append(f"{inst}: cannot remove the tracefs instance: "
                                f"{e.strerror or e}")
    now = snapshot(root)
    differ = {d.split(":")[0] for d in differences(state, now)}
    t = _p(root, TRACEFS)
    if (t / "trace").exists() and state.tracing_on is not None and differ & set(_TRACE_FIELDS):
        # something traced in the top-level buffer: put it back as it was
        _try_write(t / "tracing_on", "0", problems)
        for ev, v in state.events.items():
            if now.events.get(ev) != v:
                _try_write(t / f"events/sched/{ev}/enable", v, problems)
        if state.overwrite is not None and "overwrite" in differ:
            _try_write(t / "options/overwrite", state.overwrite, problems)
        if state.trace_clock and "trace_clock" in differ:
            _try_write(t / "trace_clock", state.trace_clock, problems)
        if state.buffer_size_kb == "X":
            for cpu, kb in state.per_cpu_kb.items():
                _try_write(t / "per_cpu" / cpu / "buffer_size_kb", kb, problems)
        elif state.buffer_size_kb and "buffer_size_kb" in differ:
            _try_write(t / "buffer_size_kb", state.buffer_size_kb, problems)
        _try_write(t / "trace", "", problems)        # the run's events, not left behind
        _try_write(t / "tracing_on", state.tracing_on, problems)
    if state.sched_ext == "disabled" and "sched_ext" in differ:
        scx_off(root, problems)
    if state.features is not None and "features" in differ:
        have = set(now.features or [])
        for w in state.features:
            if w not in have:
                _try_write(_p(root, FEATURES), w, problems)
    if state.verbose is not None and "verbose" in differ:
        _try_write(_p(root, VERBOSE), state.verbose, problems)
    if state.schedstats is not None and "schedstats" in differ:
        _try_write(_p(root, SCHEDSTATS), state.schedstats, problems)
    left = differences(state, snapshot(root))
    # Unmount last: the values above live in the kernel, not in the mount.
    for target in reversed(state.mounts_made):
        try:
            umount(_p(root, target))
        except HarnessError as e:
            problems.append(str(e))
    return problems + [f"not restored: {d}" for d in left
                       if not any(d.split(":")[0] in p for p in problems)]


SYSRQ = "proc/sysrq-trigger"


def _scx_state(root: Path) -> str:
    return (_read(_p(root, SCHED_EXT + "/state")) or "").strip()


def scx_off(root: Path, problems: list[str], grace: float = 5.0, wait: float = 10.0) -> None:
    """A sched_ext scheduler that host mode started is still in charge (its
    loader outlived the run, or the harness was killed before it could stop
    it): give it `grace` s to finish disabling, then SysRq-S, the kernel's
    own way to put every task back in the fair class, and wait for
    "disabled".  Says in `problems` what did not work."""
    for step in ("wait", "sysrq"):
        if step == "sysrq":
            log(f"sched_ext is still {_scx_state(root)!r} after the run; SysRq-S puts the "
                "tasks back in the fair class")
            try:
                _write(_p(root, SYSRQ), "S")
            except OSError as e:
                problems.append(f"{_p(root, SYSRQ)}: cannot write 'S' to disable sched_ext: "
                                f"{e.strerror or e}")
                return
        deadline = time.monotonic() + (grace if step == "wait" else wait)
        while time.monotonic() < deadline:
            if _scx_state(root) in ("disabled", ""):
                return
            time.sleep(0.1)
    problems.append(f"sched_ext still {_scx_state(root)!r} after SysRq-S")
