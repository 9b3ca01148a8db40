"""The benchmark programs run in the guest: how to call them, how to read them.

A workload is swept over load levels (hackbench/perf groups, sysbench
threads, wakelat messengers) at a fixed amount of work (`size`: loops,
events, seconds).  Each run's output is reduced to a dict of metrics; one of
them is the primary metric the A/B comparison is about.

    hackbench[-thread][-pipe]  rt-tests hackbench, Time: s (lower is better)
    perf-messaging             perf bench sched messaging, Total time (lower)
    sysbench-threads           sysbench threads, fixed events, total time (lower)
    sysbench-mutex             sysbench mutex, fixed locks/thread, total time (lower)
    wakelat                    workloads/wakelat.c, requests/s (higher) + latency
                               percentiles
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Callable

from .util import HarnessError


class WorkloadParseError(ValueError):
    pass


def _float_after(pattern: str, what: str) -> Callable[[str], dict[str, float]]:
    rx = re.compile(pattern, re.M)

    def parse(text: str) -> dict[str, float]:
        m = rx.search(text)
        if not m:
            raise WorkloadParseError(f"no {what!r} in the output:\n{text[-500:]}")
        return {"time": float(m.group(1))}
    return parse


def parse_wakelat(text: str) -> dict[str, float]:
    line = next((l for l in text.splitlines() if l.startswith("RESULT ")), None)
    if line is None:
        raise WorkloadParseError(f"no 'RESULT' line in wakelat's output:\n{text[-500:]}")
    try:
        r = json.loads(line[len("RESULT "):])
    except json.JSONDecodeError as e:
        raise WorkloadParseError(f"wakelat RESULT is not JSON ({e}): {line}") from None
    if r.get("stalled"):
        raise WorkloadParseError(f"wakelat reports stalled workers: {line}")
    return {"rps": float(r["rps"]), "p50_us": float(r["lat_p50_us"]),
            "p99_us": float(r["lat_p99_us"]), "p999_us": float(r["lat_p999_us"]),
            "max_us": float(r["lat_max_us"])}


@dataclass(frozen=True)
class Workload:
    name: str
    level: str                 # what the swept number is ("groups", "threads", ...)
    size_name: str             # what `size` is ("loops", "events", ...)
    default_size: int
    metric: str                # the primary metric (a key of parse()'s dict)
    unit: str
    higher_better: bool
    command: Callable[[int, int], list[str]]   # (level, size) -> argv
    parse: Callable[[str], dict[str, float]]
    binary: str                # what must exist in the guest image

    def argv(self, level: int, size: int, extra: list[str] | None = None) -> list[str]:
        return [*self.command(level, size), *(extra or [])]


_HACKBENCH_TIME = _float_after(r"^Time:\s*([0-9.]+)", "Time:")


def _hackbench(flags: list[str]) -> Callable[[int, int], list[str]]:
    return lambda g, n: ["hackbench", *flags, "-g", str(g), "-l", str(n)]


WORKLOADS: dict[str, Workload] = {w.name: w for w in [
    Workload("hackbench", "groups", "loops", 200, "time", "s", False,
             _hackbench([]), _HACKBENCH_TIME, "hackbench"),
    Workload("hackbench-thread", "groups", "loops", 200, "time", "s", False,
             _hackbench(["-T"]), _HACKBENCH_TIME, "hackbench"),
    Workload("hackbench-pipe", "groups", "loops", 200, "time", "s", False,
             _hackbench(["-p"]), _HACKBENCH_TIME, "hackbench"),
    Workload("hackbench-thread-pipe", "groups", "loops", 200, "time", "s", False,
             _hackbench(["-T", "-p"]), _HACKBENCH_TIME, "hackbench"),
    Workload("perf-messaging", "groups", "loops", 200, "time", "s", False,
             lambda g, n: ["perf", "bench", "sched", "messaging", "-g", str(g), "-l", str(n)],
             _float_after(r"Total time:\s*([0-9.]+)", "Total time:"), "perf"),
    # A fixed number of events (--time=0: no time limit), so the run time is
    # the measure; each event is sysbench's default 1000 yields over 8 locks.
    Workload("sysbench-threads", "threads", "events", 100, "time", "s", False,
             lambda t, n: ["sysbench", "threads", f"--threads={t}", f"--events={n}",
                           "--time=0", "run"],
             _float_after(r"total time:\s*([0-9.]+)s", "total time:"), "sysbench"),
    # Each thread takes --mutex-locks locks on one of 4096 mutexes.
    Workload("sysbench-mutex", "threads", "locks", 50000, "time", "s", False,
             lambda t, n: ["sysbench", "mutex", f"--threads={t}", f"--mutex-locks={n}",
                           "--mutex-loops=1000", "--time=0", "run"],
             _float_after(r"total time:\s*([0-9.]+)s", "total time:"), "sysbench"),
    # `level` messengers with 4 workers each for `size` seconds.
    Workload("wakelat", "messengers", "seconds", 5, "rps", "req/s", True,
             lambda m, s: ["wakelat", "-m", str(m), "-w", "4", "-d", str(s)],
             parse_wakelat, "wakelat"),
]}


def get(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise HarnessError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}") from None
