"""The series' debugfs view of its overload masks, read in the guest.

/sys/kernel/debug/sched/overload_cpus lists, per LLC, the CPUs marked
overloaded (series v3 adds a consistency check under each runqueue's
lock).  `overload_settled()` is the guest shell that reads it once the
marks have settled; `parse_overload()` reads what it printed.  Used by the
stress suite and by A/B runs (a mark left after a run is a leak).
"""
from __future__ import annotations

import re

OVERLOAD = "/sys/kernel/debug/sched/overload_cpus"


def overload_settled(tmp: str, reads: int = 5) -> str:
    """Guest shell: print overload_cpus once no CPU is marked in it.

    A CPU is marked for a moment whenever two tasks are runnable on it -- the
    reader itself and a kworker flushing the console are enough.  A bit the
    kernel forgot to clear stays through every read; so read up to @reads
    times, 1 s apart, and print the last read.
    """
    return f"""
for t in $(seq {reads}); do
    cat {OVERLOAD} > {tmp}
    grep -q "overloaded *[0-9]" {tmp} || break
    sleep 1
done
cat {tmp}
"""


_OVERLOAD_RE = re.compile(r"^llc (\S+) overloaded\s*(\S*)\s*$")


def parse_overload(text: str) -> list[tuple[str, str]]:
    """overload_cpus -> [(llc cpulist, overloaded cpulist or '')]."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if " inconsistent " in line:
            # The kernel checked each CPU's runqueue against the mask under
            # its lock (series v3, sched/debug): any CPU listed is a bug.
            raise ValueError(f"overload_cpus: a runqueue disagrees with its LLC's mask: "
                             f"{line.strip()!r}")
        m = _OVERLOAD_RE.match(line.strip())
        if not m:
            raise ValueError(f"unexpected overload_cpus line: {line!r}")
        out.append((m.group(1), m.group(2)))
    return out
