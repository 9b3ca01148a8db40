"""Stress suite: the trace kept from a run with an affinity violation.

guest/stress.sh keeps, for the first affinity_check violation, the trace
lines of the violating thread, hotplug and partitions (section
affinity_trace).  affinity_excerpt() reads it, trace_moves() lists every
sched_migrate_task with the stack that made it, and stopper_race() says
whether the trace shows the mainline sched_setaffinity()/hotplug race of
docs/stress.md (the stopper leaving the thread outside its new mask).
"""
from __future__ import annotations

import re

from ...guest import topology

_MIGRATE_RE = re.compile(r"sched_migrate_task: comm=\S+ pid=(\d+) prio=\d+ "
                         r"orig_cpu=(\d+) dest_cpu=(\d+)")
_STAMP_TRACE_RE = re.compile(r"\s(\d+\.\d+):\s")


def affinity_excerpt(text: str) -> list[str]:
    """The trace lines guest/stress.sh kept for the first violation ([] when
    the run had none, or ran without tracing)."""
    lines = [l.rstrip() for l in text.splitlines() if l.strip()]
    if not lines or lines == ["no violation in the trace"]:
        return []
    return lines


_LINE_RE = re.compile(r"\[(\d+)\]\s+\S+\s+(\d+\.\d+):\s+(\w+):\s+(.*)$")
_SETAFF_RE = re.compile(r"affinity_check: tid (\d+) setaffinity (\S+)")
_VIOL_RE = re.compile(r"affinity_check: VIOLATION tid (\d+) rseq_cpu (-?\d+) getcpu (-?\d+) "
                      r"stat_cpu (-?\d+) mask (\S+)")
_SWITCH_RE = re.compile(r"prev_pid=(\d+) .*==> next_comm=(\S+) next_pid=(\d+)")
_DEACT_RE = re.compile(r"^cpu: (\d+) .*\(sched_cpu_deactivate\)")


def _events(lines: list[str]) -> list[tuple[int, float, str, str]]:
    """(cpu, time, event, text) of each event line of an excerpt."""
    out = []
    for line in lines:
        m = _LINE_RE.search(line)
        if m:
            out.append((int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)))
    return out


def stopper_race(lines: list[str]) -> dict | None:
    """Does the trace show the mainline race of docs/stress.md (a
    sched_setaffinity() that returned with the thread outside its new
    mask because the destination CPU was deactivated before the stopper
    moved it)?  Evidence required, in the excerpt of the violating thread:

      * the violation's CPU C is outside the mask M, and the thread's last
        mask change before it set M while running on C;
      * between the thread's previous mask change and that one, the
        stopper of C (migration/C) preempted the thread and handed C back
        to it, and no sched_migrate_task moved the thread;
      * a sched_cpu_deactivate() of a CPU of M began before the stopper ran.

    Returns what was found, or None when any piece is missing."""
    ev = _events(lines)
    viol = next(((i, e) for i, e in enumerate(ev) if _VIOL_RE.search(e[3])), None)
    if viol is None:
        return None
    vi, (vcpu, vtime, _, vtext) = viol
    vm = _VIOL_RE.search(vtext)
    assert vm is not None
    tid, mask_text = vm.group(1), vm.group(5)
    mask = set(topology.parse_cpulist(mask_text))
    cpu = int(vm.group(3))
    if cpu in mask:
        return None
    sets = [i for i in range(vi) if (m := _SETAFF_RE.search(ev[i][3])) and m.group(1) == tid]
    if not sets:
        return None
    last = sets[-1]
    m = _SETAFF_RE.search(ev[last][3])
    if m is None or m.group(2) != mask_text or ev[last][0] != cpu:
        return None
    prev = sets[-2] if len(sets) > 1 else -1
    stopper = None
    for i in range(last - 1, prev, -1):
        c, t, name, text = ev[i]
        if name == "sched_migrate_task" and f"pid={tid} " in text:
            return None
        sw = _SWITCH_RE.search(text) if name == "sched_switch" else None
        if sw and c == cpu and sw.group(1) == tid and sw.group(2) == f"migration/{cpu}":
            stopper = i
            break
    if stopper is None:
        return None
    deact = [(ev[i][1], int(d.group(1))) for i in range(stopper)
             if ev[i][2] == "cpuhp_enter" and (d := _DEACT_RE.search(ev[i][3]))
             and int(d.group(1)) in mask]
    if not deact:
        return None
    return {"tid": int(tid), "cpu": cpu, "mask": mask_text,
            "deactivated_cpu": deact[-1][1], "deactivate_time": deact[-1][0],
            "stopper_time": ev[stopper][1], "setaffinity_time": ev[last][1],
            "violation_time": vtime}


def trace_moves(lines: list[str]) -> list[dict]:
    """Every sched_migrate_task of the excerpt with the kernel stack that
    made it: [{"time", "pid", "orig_cpu", "dest_cpu", "stack": [func, ...]}].
    The path of a move is read from its stack (steal_from: the series'
    steal; sched_balance_rq: load balancing; migration_cpu_stop: an
    affinity change or active balance; select_fallback_rq: hotplug
    fallback; try_to_wake_up: wakeup placement)."""
    moves: list[dict] = []
    cur: dict | None = None
    for line in lines:
        m = _MIGRATE_RE.search(line)
        if m:
            t = _STAMP_TRACE_RE.search(line)
            cur = {"time": float(t.group(1)) if t else None, "pid": int(m.group(1)),
                   "orig_cpu": int(m.group(2)), "dest_cpu": int(m.group(3)), "stack": []}
            moves.append(cur)
        elif line.lstrip().startswith("=> ") and cur is not None:
            cur["stack"].append(line.split("=>", 1)[1].strip())
        elif "<stack trace>" not in line:
            cur = None
    return moves
