"""Reading the trace text of the wasted-CPU-time measure (the package's
doc): one line -> an `Event` (sched_switch, the wakeups, sched_migrate_task,
sched_process_exit, trace_marker lines), the overrun checks of the trace's
headers and of per_cpu/cpuN/stats (`LostEvents`), and the errors of the
measure (`WasteError`)."""
from __future__ import annotations

import re
from typing import Iterable, Iterator, NamedTuple, Optional

from ...util import HarnessError, ParseError

NS = 1_000_000_000


class WasteError(HarnessError):
    """The trace cannot be analysed as asked (window, CPUs, no events)."""


class LostEvents(WasteError):
    """The ring buffer overflowed: the measurement failed."""

    def __init__(self, cpu: Optional[int], count: Optional[int], line: str, lineno: int = 0):
        self.cpu, self.count, self.line, self.lineno = cpu, count, line, lineno
        where = f"line {lineno}: " if lineno else ""
        super().__init__(f"{where}lost trace events ({line.strip()}): a failed measurement; "
                         "enlarge buffer_size_kb or read trace_pipe while tracing")


class Event(NamedTuple):
    """One trace line.  ``pid``/``comm`` are the event's task (prev_* for
    sched_switch); ``cpu_arg`` is target_cpu or dest_cpu; ``state`` is
    prev_state for sched_switch and the text for tracing_mark_write."""
    ts: int                 # ns
    cpu: int                # recorded on
    cur: int                # pid current on that CPU when recorded
    name: str
    pid: int = -1
    comm: str = ""
    cpu_arg: int = -1
    orig_cpu: int = -1
    state: str = ""
    next_pid: int = -1
    next_comm: str = ""


_LINE = re.compile(r"-(\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+): (\w+): ?(.*)$")
_SWITCH = re.compile(r"prev_comm=(.*?) prev_pid=(\d+) prev_prio=-?\d+ prev_state=(\S+) ==> "
                     r"next_comm=(.*?) next_pid=(\d+) next_prio=-?\d+")
_WAKE = re.compile(r"comm=(.*?) pid=(\d+) prio=-?\d+(?: success=\d+)? target_cpu=(\d+)")
_MIGRATE = re.compile(r"comm=(.*?) pid=(\d+) prio=-?\d+ orig_cpu=(\d+) dest_cpu=(\d+)")
_EXIT = re.compile(r"comm=(.*?) pid=(\d+) prio=-?\d+")
_LOST = re.compile(r"^CPU:(\d+) \[LOST (?:(\d+) )?EVENTS\]")
_STARTED = re.compile(r"^##### CPU (\d+) buffer started ####")
_ENTRIES = re.compile(r"^# entries-in-buffer/entries-written: (\d+)/(\d+)\s+#P:(\d+)")
_WAKE_EVENTS = ("sched_wakeup", "sched_wakeup_new", "sched_waking")
KNOWN_EVENTS = ("sched_switch", *_WAKE_EVENTS, "sched_migrate_task", "sched_process_exit",
                "tracing_mark_write")


def _ns(sec: str, frac: str) -> int:
    return int(sec) * NS + int((frac + "000000000")[:9])


def _body(name: str, body: str, line: str) -> re.Match[str]:
    pattern = (_SWITCH if name == "sched_switch" else _MIGRATE if name == "sched_migrate_task"
               else _EXIT if name == "sched_process_exit" else _WAKE)
    m = pattern.match(body)
    if m is None:
        raise ParseError(f"{name} line does not read as the 7.x format: {line.strip()!r}")
    return m


def check_header(line: str) -> Optional[int]:
    """A '#' line: raise LostEvents on an overrun mark; return #P (online
    CPUs) from the entries header, else None."""
    m = _STARTED.match(line)
    if m:
        raise LostEvents(int(m.group(1)), None, line)
    m = _ENTRIES.match(line)
    if m is None:
        return None
    kept, written = int(m.group(1)), int(m.group(2))
    if kept < written:
        raise LostEvents(None, written - kept,
                         line + f" ({written - kept} overwritten, or consumed by a reader)")
    return int(m.group(3))


_STATS_CPU = re.compile(r"cpu(\d+)")
_STATS_LOSS = re.compile(r"^(overrun|commit overrun|dropped events): (\d+)", re.M)


def check_stats(text: str) -> None:
    """Raise LostEvents when per_cpu/cpuN/stats show an overrun (the writer
    lapped the reader: events overwritten) or dropped events (a full
    buffer with options/overwrite off drops new events, and the trace text
    says nothing of it).  `text`: the stats files one after another, each
    after a line naming its path (``==> /sys/kernel/tracing/per_cpu/cpu3/stats``,
    as `head` prints them), or a single file."""
    cpu: Optional[int] = None
    for line in text.splitlines():
        if not line.startswith(("overrun", "commit overrun", "dropped events")):
            m = _STATS_CPU.search(line)
            if m and ("stats" in line or line.startswith("==")):
                cpu = int(m.group(1))
            continue
        m = _STATS_LOSS.match(line)
        if m and int(m.group(2)) > 0:
            raise LostEvents(cpu, int(m.group(2)), f"per_cpu stats: {line.strip()}")


def parse_line(line: str) -> Optional[Event]:
    """One event, or None for a line that is not one of KNOWN_EVENTS (a
    comment, a stack trace, another event).  Raises LostEvents on a lost
    events line, ParseError on a known event in an unknown format."""
    if line.startswith("#"):
        check_header(line)
        return None
    if line.startswith("CPU:"):
        lost = _LOST.match(line)
        if lost:
            raise LostEvents(int(lost.group(1)),
                             int(lost.group(2)) if lost.group(2) else None, line)
    m = _LINE.search(line)
    if m is None:
        return None
    name = m.group(5)
    if name not in KNOWN_EVENTS:
        return None
    ts, cpu, cur, body = _ns(m.group(3), m.group(4)), int(m.group(2)), int(m.group(1)), m.group(6)
    if name == "tracing_mark_write":
        return Event(ts, cpu, cur, name, state=body.strip())
    b = _body(name, body, line)
    if name == "sched_switch":
        return Event(ts, cpu, cur, name, int(b.group(2)), b.group(1), state=b.group(3),
                     next_pid=int(b.group(5)), next_comm=b.group(4))
    if name == "sched_migrate_task":
        return Event(ts, cpu, cur, name, int(b.group(2)), b.group(1), cpu_arg=int(b.group(4)),
                     orig_cpu=int(b.group(3)))
    if name == "sched_process_exit":
        return Event(ts, cpu, cur, name, int(b.group(2)), b.group(1))
    return Event(ts, cpu, cur, name, int(b.group(2)), b.group(1), cpu_arg=int(b.group(3)))


def parse(lines: Iterable[str]) -> Iterator[Event]:
    """The events of a trace, in order; LostEvents names the line number."""
    for n, line in enumerate(lines, 1):
        try:
            ev = parse_line(line)
        except LostEvents as e:
            raise LostEvents(e.cpu, e.count, e.line, n) from None
        if ev is not None:
            yield ev
