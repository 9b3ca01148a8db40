"""The benchmark programs run in the guest: how to call them, how to read them.

A workload is swept over load levels (hackbench/perf groups, sysbench
threads, wakelat messengers) at a fixed amount of work (`size`: loops,
events, seconds).  Each run's output is reduced to a dict of metrics; one of
them is the primary metric the A/B comparison is about.

    hackbench[-thread][-pipe]  rt-tests hackbench, Time: s (lower is better)
    perf-messaging             perf bench sched messaging, Total time (lower)
    perf-pipe                  perf bench sched pipe, `level` pairs at once,
                               usecs/op, the mean over the pairs (lower)
    sysbench-threads           sysbench threads, fixed events, total time (lower)
    sysbench-mutex             sysbench mutex, fixed locks/thread, total time (lower)
    wakelat                    workloads/wakelat.c, requests/s (higher) + latency
                               percentiles
    schbench                   schbench (vendor/) -F 64 -n 1, a request sized for
                               TCG: the workers' p99 wakeup latency, us (lower)
    schbench-storm             schbench -L -n 0 -s 0, requests that do no work:
                               a wakeup and sleep storm, requests/s (higher)

Any other program is a custom workload (custom()): a command template with
`{level}` (and optionally `{size}`), a regular expression whose first group
is the primary metric, and whether higher or lower is better.  A custom
workload serializes to its definition (Workload.to_json(), from_json()), so a
kept run can be parsed again; the builtin ones are referenced by name.
"""
from __future__ import annotations

import json
import math
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable

from ..util import HarnessError, ParseError


class WorkloadParseError(ParseError):
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


_SCHBENCH_BLOCK = re.compile(r"^(Wakeup|Request) Latencies percentiles \(usec\)[^\n]*\n"
                             r"((?:\s+(?:\*\s*)?[0-9.]+th: .*\n|\s+min=.*\n)+)", re.M)
_SCHBENCH_PCT = re.compile(r"^\s+(?:\*\s*)?([0-9.]+)th:\s+(\d+)", re.M)


def parse_schbench(text: str) -> dict[str, float]:
    """schbench's last report: its wakeup latency percentiles (the time from
    a message thread posting a request to the worker running) and request
    latency p99, in us, and "average rps"."""
    blocks: dict[str, str] = {}
    for m in _SCHBENCH_BLOCK.finditer(text):
        blocks[m.group(1)] = m.group(2)     # the last report of each kind
    rps = re.findall(r"^average rps:\s*([0-9.]+)", text, re.M)
    if "Wakeup" not in blocks or "Request" not in blocks or not rps:
        raise WorkloadParseError(f"no schbench report (latency percentiles, 'average rps') "
                                 f"in the output:\n{text[-500:]}")
    out = {"rps": float(rps[-1])}
    for kind, prefix in (("Wakeup", "wake"), ("Request", "req")):
        pct = {p: float(v) for p, v in _SCHBENCH_PCT.findall(blocks[kind])}
        mx = re.search(r"max=(\d+)", blocks[kind])
        if not {"50.0", "99.0", "99.9"} <= pct.keys() or not mx:
            raise WorkloadParseError(f"schbench's {kind} latencies lack p50/p99/p99.9 or max:\n"
                                     f"{blocks[kind]}")
        out.update({f"{prefix}_p50_us": pct["50.0"], f"{prefix}_p99_us": pct["99.0"],
                    f"{prefix}_p999_us": pct["99.9"], f"{prefix}_max_us": float(mx.group(1))})
    return out


# After its report, schbench reads each thread's /proc/<tid>/schedstat; a
# thread that exits between the open and the read makes it print this and
# exit 1 (seen once in 49 runs in a guest).  The report before it is whole.
SCHBENCH_EXIT_RACE = r"^Failed to parse /proc/[0-9]+/schedstat$"


def _schbench(flags: list[str], workers: int) -> Callable[[int, int], list[str]]:
    """`level` message threads with `workers` workers each for `size`
    seconds after a second of warmup; -i: no interval report before the end."""
    return lambda m, s: ["schbench", *flags, "-m", str(m), "-t", str(workers), "-r", str(s),
                         "-w", "1", "-i", "3600"]


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
    # A non-zero exit that still leaves a whole report: an extended regular
    # expression the output's last line matches (the parser then checks
    # the report); "" when any non-zero exit fails the run.
    benign_exit: str = ""
    # The tasks one level starts (a hackbench group: 20 senders and 20
    # receivers): how a level written against the machine's CPUs (`cpus*2`,
    # runs/levels.py) becomes a number of groups, pairs or messengers.
    tasks: int = 1
    # custom(): the arguments it was made from (to_json()); None: builtin.
    definition: dict[str, Any] | None = field(default=None, compare=False)

    def argv(self, level: int, size: int, extra: list[str] | None = None) -> list[str]:
        return [*self.command(level, size), *(extra or [])]

    @property
    def is_custom(self) -> bool:
        return self.definition is not None

    def to_json(self) -> dict[str, Any]:
        """{'name': ...} for a builtin workload, custom()'s arguments for a
        custom one; from_json() turns either back into the workload."""
        return dict(self.definition) if self.definition is not None else {"name": self.name}


_HACKBENCH_TIME = _float_after(r"^Time:\s*([0-9.]+)", "Time:")


def parse_perf_pipe(text: str) -> dict[str, float]:
    """perf bench sched pipe: one "usecs/op" line per pair that ran; every
    "# Executed" header must have one (a pair that died is an error)."""
    ops = [float(x) for x in re.findall(r"^\s*([0-9.]+)\s+usecs/op\s*$", text, re.M)]
    started = len(re.findall(r"^# Executed \d+ pipe operations", text, re.M))
    if not ops:
        raise WorkloadParseError(f"no 'usecs/op' in perf bench sched pipe's output:\n{text[-500:]}")
    if started != len(ops):
        raise WorkloadParseError(f"perf bench sched pipe: {started} pair(s) started, {len(ops)} "
                                 f"reported usecs/op:\n{text[-500:]}")
    return {"usecs_op": sum(ops) / len(ops), "usecs_op_max": max(ops), "pairs": float(len(ops))}


def _perf_pipe(pairs: int, loops: int) -> list[str]:
    one = ["perf", "bench", "sched", "pipe", "-l", str(loops)]
    if pairs == 1:
        return one
    # `pairs` copies at once; extra arguments reach each copy as "$@".
    script = (f"p=; for i in $(seq {pairs}); do {shlex.join(one)} \"$@\" & p=\"$p $!\"; done; "
              "fail=0; for j in $p; do wait $j || fail=1; done; exit $fail")
    return ["sh", "-c", script, "sh"]


def _hackbench(flags: list[str]) -> Callable[[int, int], list[str]]:
    return lambda g, n: ["hackbench", *flags, "-g", str(g), "-l", str(n)]


WORKLOADS: dict[str, Workload] = {w.name: w for w in [
    Workload("hackbench", "groups", "loops", 200, "time", "s", False,
             _hackbench([]), _HACKBENCH_TIME, "hackbench", tasks=40),
    Workload("hackbench-thread", "groups", "loops", 200, "time", "s", False,
             _hackbench(["-T"]), _HACKBENCH_TIME, "hackbench", tasks=40),
    Workload("hackbench-pipe", "groups", "loops", 200, "time", "s", False,
             _hackbench(["-p"]), _HACKBENCH_TIME, "hackbench", tasks=40),
    Workload("hackbench-thread-pipe", "groups", "loops", 200, "time", "s", False,
             _hackbench(["-T", "-p"]), _HACKBENCH_TIME, "hackbench", tasks=40),
    Workload("perf-messaging", "groups", "loops", 200, "time", "s", False,
             lambda g, n: ["perf", "bench", "sched", "messaging", "-g", str(g), "-l", str(n)],
             _float_after(r"Total time:\s*([0-9.]+)", "Total time:"), "perf", tasks=40),
    # Two tasks passing a token through a pipe, `size` round trips: the
    # wakeup/sleep path alone (the off-cost check of results/README.md).
    Workload("perf-pipe", "pairs", "loops", 20000, "usecs_op", "us/op", False,
             _perf_pipe, parse_perf_pipe, "perf", tasks=2),
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
             parse_wakelat, "wakelat", tasks=5),
    # schbench's request at a TCG guest's size, 4 workers per message
    # thread: the p99 wakeup latency the newidle changes upstream were
    # judged by.  Its default request (five multiplications of matrices
    # that fill 256 KiB) takes 65-350 ms under TCG, where the latency then
    # measures a saturated guest; one multiplication over 64 KiB is about
    # a fortieth of the work.
    Workload("schbench", "messengers", "seconds", 5, "wake_p99_us", "us", False,
             _schbench(["-F", "64", "-n", "1"], 4), parse_schbench, "schbench",
             benign_exit=SCHBENCH_EXIT_RACE, tasks=5),
    # Requests with no work and no sleep (-n 0 -s 0, no locking), 16
    # workers per message thread: nearly every wakeup finds a CPU about to
    # go idle, the newidle storm of upstream's `schbench -L -m 4 -M auto
    # -t 256 -n 0 -r 0 -s 0` at a guest's size (message threads not pinned).
    Workload("schbench-storm", "messengers", "seconds", 5, "rps", "req/s", True,
             _schbench(["-L", "-n", "0", "-s", "0"], 16), parse_schbench, "schbench",
             benign_exit=SCHBENCH_EXIT_RACE, tasks=17),
]}


def get(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise HarnessError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}") from None


# custom()'s arguments, as to_json() writes them.
CUSTOM_KEYS = ("name", "command", "metric", "higher_better", "unit", "default_size",
               "level_name", "size_name", "tasks")
# Keys of report.metadata()'s "workload" dict, which a level or size name must not shadow.
_RESERVED_NAMES = {"name", "metric", "unit", "higher_better", "command", "extra_args",
                   "definition", "files"}
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_BINARY_RE = re.compile(r"[A-Za-z0-9_./+-]+")
_WORD_RE = re.compile(r"[a-z][a-z0-9_-]*")


def _custom_parser(rx: re.Pattern[str], key: str) -> Callable[[str], dict[str, float]]:
    def parse(text: str) -> dict[str, float]:
        m = rx.search(text)
        if not m:
            raise WorkloadParseError(f"no match for the metric regex {rx.pattern!r} "
                                     f"in the output:\n{text[-500:]}")
        raw = m.group(1)
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise WorkloadParseError(f"the metric regex {rx.pattern!r} matched "
                                     f"{m.group(0)!r}, but its first group {raw!r} is not a "
                                     "number") from None
        if not math.isfinite(value):
            raise WorkloadParseError(f"metric {key} is {raw!r}, not a finite number")
        return {key: value}
    return parse


def custom(name: str, command: str, metric: str, higher_better: bool, unit: str = "",
           default_size: int = 1, level_name: str = "level", size_name: str = "size",
           tasks: int = 1) -> Workload:
    """A workload for any program in the guest image.

    `command` is split like a shell would (shlex; no pipes or variables: use
    `sh -c '...'` for those); in each word `{level}` becomes the load level
    and `{size}` the size (other braces are left alone).  It must use
    `{level}`; its first word is the program (`binary`).  `metric` is a
    regular expression searched in the output (multi-line: ^ and $ match at
    line ends); its first group is the primary metric, named after the group
    when it is a named one (`(?P<p99>...)`), else "value".  `tasks`: the
    tasks one level starts (for levels scaled to the machine).
    """
    where = f"custom workload {name!r}"
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise HarnessError(f"{where}: the name must be letters, digits and . _ + - "
                           "(it names result files)")
    if name in WORKLOADS:
        raise HarnessError(f"{where}: the name is a builtin workload's; choose another")
    if not isinstance(command, str):
        raise HarnessError(f"{where}: the command must be a string, got {command!r}")
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise HarnessError(f"{where}: cannot split the command {command!r}: {e}") from None
    if not words:
        raise HarnessError(f"{where}: the command is empty")
    if not any("{level}" in w for w in words):
        raise HarnessError(f"{where}: the command {command!r} does not use {{level}} "
                           "(the swept load level)")
    binary = words[0]
    if not _BINARY_RE.fullmatch(binary):
        raise HarnessError(f"{where}: the program {binary!r} (the command's first word) must "
                           "be a plain name or path (letters, digits, _ . / + -)")
    if not isinstance(metric, str):
        raise HarnessError(f"{where}: the metric must be a regular expression, got {metric!r}")
    try:
        rx = re.compile(metric, re.M)
    except re.error as e:
        raise HarnessError(f"{where}: the metric regex {metric!r} does not compile: {e}") \
            from None
    if rx.groups < 1:
        raise HarnessError(f"{where}: the metric regex {metric!r} has no group; put the "
                           "number in parentheses, e.g. 'p99: ([0-9.]+)'")
    key = next((k for k, i in rx.groupindex.items() if i == 1), "value")
    if not isinstance(higher_better, bool):
        raise HarnessError(f"{where}: higher_better must be true or false, got {higher_better!r}")
    if not isinstance(unit, str) or any(c.isspace() for c in unit):
        raise HarnessError(f"{where}: the unit must be one word, got {unit!r}")
    if isinstance(default_size, bool) or not isinstance(default_size, int) or default_size < 1:
        raise HarnessError(f"{where}: the default size must be an integer >= 1, "
                           f"got {default_size!r}")
    for what, word in (("level name", level_name), ("size name", size_name)):
        if not isinstance(word, str) or not _WORD_RE.fullmatch(word) or word in _RESERVED_NAMES:
            raise HarnessError(f"{where}: the {what} must be a lower-case word other than "
                               f"{', '.join(sorted(_RESERVED_NAMES))}; got {word!r}")
    if level_name == size_name:
        raise HarnessError(f"{where}: the level and size names are both {level_name!r}")
    if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1:
        raise HarnessError(f"{where}: tasks (per level) must be an integer >= 1, got {tasks!r}")

    def argv(level: int, size: int) -> list[str]:
        return [w.replace("{level}", str(level)).replace("{size}", str(size)) for w in words]

    definition: dict[str, Any] = {
        "name": name, "command": command, "metric": metric, "higher_better": higher_better,
        "unit": unit, "default_size": default_size, "level_name": level_name,
        "size_name": size_name, "tasks": tasks}
    return Workload(name, level_name, size_name, default_size, key, unit, higher_better,
                    argv, _custom_parser(rx, key), binary, tasks=tasks, definition=definition)


def from_json(d: dict[str, Any] | str) -> Workload:
    """The inverse of Workload.to_json(); a plain name is a builtin workload."""
    if isinstance(d, str):
        return get(d)
    if not isinstance(d, dict) or not isinstance(d.get("name"), str):
        raise HarnessError(f"not a workload definition (want a dict with a name): {d!r}")
    if set(d) == {"name"}:
        return get(d["name"])
    unknown = sorted(set(d) - set(CUSTOM_KEYS))
    if unknown:
        raise HarnessError(f"workload definition {d['name']!r}: unknown key(s) "
                           f"{', '.join(unknown)}; known: {', '.join(CUSTOM_KEYS)}")
    missing = [k for k in ("command", "metric", "higher_better") if k not in d]
    if missing:
        raise HarnessError(f"workload definition {d['name']!r} lacks {', '.join(missing)}")
    return custom(**d)
