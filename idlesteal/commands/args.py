"""Every command-line argument checked in one place, before any work.

Each checker here is an argparse `type=` callable: it takes the text of one
option and returns its value, or raises argparse.ArgumentTypeError with
"invalid value 'TEXT' (want WHAT IS ALLOWED)", which the parser prints as
one line, `idlesteal CMD: error: argument --OPT: invalid value ...`, exit
status 2.  Checks that need two options (a custom workload's --command and
--metric, a suite file and the --presets that filter it) run right after
parsing, in each command's check_*() (commands/*.py), and raise UsageError
(the same line, the same status).  Nothing is fetched, built, booted or
written before both passed.

Limits: numbers are bounded above as well (a typo of three extra zeros is an
error, not a week of guest time); names that become file names take
[A-Za-z0-9._-] only, never a path; sched feature words are those of the
kernel tree the harness builds: mainline 7.2's kernel/sched/features.h
(FEATURES_72, a table: the tree exists only after `prepare`) plus the ones
patches/series adds (read from the patches).
"""
from __future__ import annotations

import argparse
import math
import re
import shlex
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

from .. import paths
from ..util import HarnessError, invalid

# ---------------------------------------------------------------- limits

MAX_LEVEL = 4096          # a load level: hackbench/perf groups, threads, messengers
MAX_SIZE = 10 ** 9        # work per run: loops, events, locks, seconds of wakelat
MAX_REPS = 1000           # repetitions per side (or scheduler) and level
MAX_WARMUP = 100          # discarded warm-up runs
MAX_BOOTS = 100           # boots per kernel
MAX_RUNS = 1000           # placement runs per boot
MAX_ROUNDS = 10 ** 6      # placement rounds per run
MAX_THREADS = 1024        # placement threads
MAX_SECONDS = 86400       # a timeout or a stress duration: one day
MAX_MS = 60000.0          # placement spin / idle time (ms)
MAX_CMDLINE = 2048        # x86's COMMAND_LINE_SIZE
MAX_TEXT = 4096           # one line of text for the guest (extra arguments)
MAX_NAME = 100            # a name that becomes a file name

NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
NAME_RULE = (f"a name of letters, digits and . _ - (not starting with . or -, no / or .., "
             f"at most {MAX_NAME} characters)")


class UsageError(HarnessError):
    """A bad argument found after parsing (by a check that needs two
    options): printed like argparse's own errors, one line, exit status 2."""

    def __init__(self, option: str, value: object, want: str) -> None:
        super().__init__(f"argument {option}: {invalid(value, want)}")


def _bad(value: object, want: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(invalid(value, want))


def one_line(message: str) -> str:
    """A message as one line (several lines joined with '; ')."""
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


# ---------------------------------------------------------------- numbers

def integer(lo: int, hi: int, what: str = "an integer") -> Callable[[str], int]:
    """An integer from lo to hi (decimal, no sign tricks: '1e3' and '' fail)."""
    want = f"{what} from {lo} to {hi}"

    def check(text: str) -> int:
        if not re.fullmatch(r"\s*-?[0-9]+\s*", text):
            raise _bad(text, want)
        n = int(text)
        if not lo <= n <= hi:
            raise _bad(text, want)
        return n
    check.__name__ = what
    return check


def number(lo: float, hi: float, what: str, *, lo_open: bool = False) -> Callable[[str], float]:
    """A finite number in [lo, hi] (or (lo, hi] with lo_open)."""
    want = f"{what} {'above' if lo_open else 'from'} {lo:g} {'and up to' if lo_open else 'to'} {hi:g}"

    def check(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise _bad(text, want) from None
        if not math.isfinite(x) or x > hi or x < lo or (lo_open and x == lo):
            raise _bad(text, want)
        return x
    check.__name__ = what
    return check


seconds = number(0, MAX_SECONDS, "seconds", lo_open=True)
level = integer(1, MAX_LEVEL, "a load level")
size = integer(1, MAX_SIZE, "an amount of work")
reps = integer(1, MAX_REPS, "a number of repetitions")
reps2 = integer(2, MAX_REPS, "a number of repetitions (2 or more: intervals)")
warmup = integer(0, MAX_WARMUP, "a number of warm-up runs")
boots = integer(1, MAX_BOOTS, "a number of boots")
boots2 = integer(2, MAX_BOOTS, "a number of boots (2 or more: a spread)")
runs = integer(1, MAX_RUNS, "a number of runs")
rounds = integer(1, MAX_ROUNDS, "a number of rounds")
threads = integer(1, MAX_THREADS, "a number of threads")
stress_seconds = integer(1, MAX_SECONDS, "whole seconds")
spin_ms = number(0, MAX_MS, "milliseconds", lo_open=True)
idle_ms = number(0, MAX_MS, "milliseconds")
max_load = number(0, 1, "a fraction of the CPUs")


def int_list(lo: int, hi: int, what: str) -> Callable[[str], list[int]]:
    """'1,2,4' -> [1, 2, 4]: comma-separated integers from lo to hi, no repeats."""
    want = f"comma-separated {what} from {lo} to {hi}, each once"

    def check(text: str) -> list[int]:
        words = text.split(",")
        if not all(re.fullmatch(r"\s*[0-9]+\s*", w) for w in words):
            raise _bad(text, want)
        out = [int(w) for w in words]
        if min(out) < lo or max(out) > hi or len(set(out)) != len(out):
            raise _bad(text, want)
        return out
    check.__name__ = what
    return check


levels = int_list(1, MAX_LEVEL, "load levels")
thread_counts = int_list(1, MAX_THREADS, "thread counts")


# ---------------------------------------------------------------- names and text

def name(text: str) -> str:
    """A name that becomes a file name: never a path."""
    if len(text) > MAX_NAME or not NAME_RE.fullmatch(text) or ".." in text:
        raise _bad(text, NAME_RULE)
    return text


def names(text: str) -> list[str]:
    """'a,b' -> ['a', 'b'], each a name(), each once."""
    words = text.split(",")
    if not all(len(w) <= MAX_NAME and NAME_RE.fullmatch(w) and ".." not in w for w in words) \
            or len(set(words)) != len(words):
        raise _bad(text, f"comma-separated names, each once; {NAME_RULE}")
    return words


def _printable(text: str) -> bool:
    return all(c.isprintable() for c in text)


def word(text: str) -> str:
    """One printable word (a unit): no spaces."""
    if not text or len(text) > 32 or not _printable(text) or any(c.isspace() for c in text):
        raise _bad(text, "one word of at most 32 printable characters, no spaces")
    return text


def line(text: str) -> str:
    """One line of printable text (extra arguments for a guest command)."""
    if len(text) > MAX_TEXT or not _printable(text):
        raise _bad(text, f"one line of printable text, at most {MAX_TEXT} characters")
    return text


def cmdline(text: str) -> str:
    """Extra kernel command line: printable, one line, what x86 takes."""
    if len(text) > MAX_CMDLINE or not _printable(text):
        raise _bad(text, f"a kernel command line: one line of printable text, at most "
                   f"{MAX_CMDLINE} characters")
    return text


def regex(text: str) -> str:
    """A regular expression with at least one group (the metric)."""
    want = "a regular expression whose first group is the metric, e.g. 'p99: ([0-9.]+)'"
    try:
        rx = re.compile(text, re.M)
    except re.error:
        raise _bad(text, want) from None
    if rx.groups < 1:
        raise _bad(text, want)
    return text


def template(text: str) -> str:
    """A command template for the guest: splits like a shell, uses {level}."""
    want = "a command that uses {level} (and optionally {size}), e.g. 'prog -t {level}'"
    try:
        words = shlex.split(text)
    except ValueError:
        raise _bad(text, want) from None
    if not words or not any("{level}" in w for w in words) or not _printable(text):
        raise _bad(text, want)
    return text


# ---------------------------------------------------------------- files

def existing_file(text: str) -> str:
    if not text or not Path(text).is_file():
        raise _bad(text, "an existing file")
    return text


def existing_dir(text: str) -> str:
    if not text or not Path(text).is_dir():
        raise _bad(text, "an existing directory")
    return text


def scx_tree(text: str) -> str:
    """A clone of sched-ext/scx: a git work tree with its crates and schedulers."""
    p = Path(text)
    if not text or not (p / ".git").exists() or not (p / "rust/scx_utils/Cargo.toml").is_file() \
            or not (p / "scheds/rust").is_dir():
        raise _bad(text, "a clone of sched-ext/scx: a git work tree with rust/scx_utils/ "
                         "and scheds/rust/")
    return text


def outdir(text: str) -> str:
    """A directory to write into: it exists, or can be made (no file on the way)."""
    want = "a directory (existing, or one that can be created)"
    if not text or "\0" in text:
        raise _bad(text, want)
    p = Path(text)
    for q in (p, *p.parents):
        if q.exists():
            if not q.is_dir():
                raise _bad(text, want)
            break
    return text


def out_file(text: str) -> str:
    """A file to write: not a directory, in a directory that exists."""
    p = Path(text)
    if not text or text.endswith("/") or p.is_dir() or not p.parent.is_dir():
        raise _bad(text, "a file path in an existing directory")
    return text


def file_spec(text: str) -> str:
    """--file HOST[:GUEST] (image.parse_file_spec()), written out whole."""
    from ..guest import image
    try:
        return str(image.parse_file_spec(text))
    except HarnessError as e:
        raise _bad(text, f"HOST[:GUEST], HOST an existing file or directory: {one_line(str(e))}") \
            from None


# ---------------------------------------------------------------- tables

def _one_of(table: Sequence[str], what: str) -> Callable[[str], str]:
    def check(text: str) -> str:
        if text not in table:
            raise _bad(text, f"{what}: {', '.join(table)}")
        return text
    check.__name__ = what
    return check


def _list_of(table: Callable[[], Sequence[str]], what: str, *, count: int = 0,
             unique: bool = True) -> Callable[[str], list[str]]:
    """'a,b' -> ['a', 'b'], each from table() (count: exactly that many)."""
    def check(text: str) -> list[str]:
        known = list(table())
        words = text.split(",")
        n = f"{count} " if count else ""
        want = f"{n}comma-separated {what}{', each once' if unique else ''}; known: " \
            f"{', '.join(known)}"
        if any(w not in known for w in words) or (count and len(words) != count) \
                or (unique and len(set(words)) != len(words)):
            raise _bad(text, want)
        return words
    check.__name__ = what
    return check


def steal_mode(text: str) -> str:
    from ..runs import stress
    return _one_of(stress.STEAL_MODES, "a steal mode")(text)


def waste_mode(text: str) -> str:
    from ..measure import tracerun
    return _one_of(tracerun.MODES, "a waste mode")(text)


def base(text: str) -> str:
    """A kernel base of bases.BASES.  Selected at once, for the rest of the
    parse (a later --variant is one of that base's) and the command."""
    from .. import bases
    name = _one_of(list(bases.BASES), "a kernel base")(text)
    bases.select(name)
    return name


def _variants() -> list[str]:
    from ..kernel import build
    return list(build.variants())


def variant(text: str) -> str:
    from ..kernel import build
    return _one_of(_variants(), f"a kernel variant of configs/{build.variants_file().name}")(text)


variants2 = _list_of(_variants, "kernel variants of configs/variants", count=2)


def _presets() -> list[str]:
    from ..guest import topology
    return list(topology.PRESETS)


def preset(text: str) -> str:
    return _one_of(_presets(), "a topology preset (idlesteal presets)")(text)


presets = _list_of(_presets, "topology presets")


def stress_presets(text: str) -> list[str]:
    """Presets the stress script can run on (an even number of >= 4 CPUs)."""
    from ..runs import stress
    from ..guest import topology
    names = presets(text)
    for n in names:
        try:
            stress.check_preset(topology.get(n))
        except HarnessError as e:
            raise _bad(text, f"presets with an even number of 4 or more CPUs ({one_line(str(e))})") \
                from None
    return names


def asym_preset(text: str) -> str:
    from ..runs import asym
    return _one_of(list(asym.PRESETS), "an asymmetric arm64 preset")(text)


def builtin_workload(text: str) -> str:
    from ..measure import workload
    return _one_of(list(workload.WORKLOADS), "a workload")(text)


def tools(text: str) -> list[str]:
    from ..guest import image
    return [] if text == "" else _list_of(lambda: list(image.TOOLS), "image tools")(text)


def contenders(text: str) -> list[str]:
    """side-by-side --sched: two or more schedulers, the first the baseline."""
    from ..runs import sidebyside
    names = _list_of(lambda: list(sidebyside.CONTENDERS), "schedulers")(text)
    if len(names) < 2:
        raise _bad(text, "two or more comma-separated schedulers, the first the baseline; "
                   f"known: {', '.join(sidebyside.CONTENDERS)}")
    return names


def _scx_all() -> list[str]:
    from ..scx import peers, own as scx
    return [*scx.SCHEDULERS, *peers.PEERS]


scx_schedulers = _list_of(_scx_all, "sched_ext schedulers")


def scx_loader(text: str) -> tuple[str, ...]:
    """stress --scx 'LOADER ARGS': one of our schedulers, with its arguments."""
    from ..scx import own as scx
    try:
        words = tuple(shlex.split(text))
    except ValueError:
        words = ()
    if not words or words[0] not in scx.SCHEDULERS or not _printable(text):
        raise _bad(text, f"'LOADER [ARGS]', LOADER one of ours: {', '.join(scx.SCHEDULERS)}")
    return words


# ---------------------------------------------------------------- sched features

# kernel/sched/features.h of linux-source-7.2 7.2.13-1 (Debian), every
# SCHED_FEAT name once (some are defined in both branches of an #ifdef).
# tests/test_args.py compares this with build/linux's features.h when the
# tree is there.
FEATURES_72: tuple[str, ...] = (
    "PLACE_LAG", "PLACE_DEADLINE_INITIAL", "PLACE_REL_DEADLINE", "RUN_TO_PARITY",
    "PREEMPT_SHORT", "NEXT_BUDDY", "PICK_BUDDY", "CACHE_HOT_BUDDY", "DELAY_DEQUEUE",
    "DELAY_ZERO", "PARANOID_AVG", "WAKEUP_PREEMPTION", "HRTICK", "HRTICK_DL",
    "NONTASK_CAPACITY", "TTWU_QUEUE", "SIS_UTIL", "WARN_DOUBLE_CLOCK", "RT_PUSH_IPI",
    "RT_RUNTIME_SHARE", "LB_MIN", "ATTACH_AGE_LOAD", "WA_IDLE", "WA_WEIGHT", "WA_BIAS",
    "UTIL_EST", "LATENCY_WARN", "NI_RANDOM", "NI_RATE",
)

_FEAT_RE = re.compile(r"^\s*SCHED_FEAT\((\w+),", re.M)
_FEAT_ADDED = re.compile(r"^\+\s*SCHED_FEAT\((\w+),", re.M)
_FEAT_REMOVED = re.compile(r"^-\s*SCHED_FEAT\((\w+),", re.M)


def features_in(header: str) -> list[str]:
    """The SCHED_FEAT names of a features.h, in order, each once."""
    return list(dict.fromkeys(_FEAT_RE.findall(header)))


def series_features(patch_texts: Sequence[str]) -> tuple[list[str], list[str]]:
    """(added, removed) SCHED_FEAT names of a patch series, in order."""
    added: list[str] = []
    removed: list[str] = []
    for text in patch_texts:
        for n in _FEAT_REMOVED.findall(text):
            if n in added:
                added.remove(n)
            else:
                removed.append(n)
        added += [n for n in _FEAT_ADDED.findall(text) if n not in added]
    return added, removed


def series_texts(d: Path) -> list[str]:
    """The patches of d/series, in order ([] when there is no series)."""
    try:
        names = [n.split("#", 1)[0].strip() for n in (d / "series").read_text().splitlines()]
        return [(d / n).read_text(errors="replace") for n in names if n]
    except OSError:
        return []


@lru_cache(maxsize=None)
def known_features(patches_dir: Path | None = None) -> tuple[str, ...]:
    """The sched features of the tree the harness builds: mainline 7.2's
    plus those patches/series adds, less those it removes."""
    added, removed = series_features(series_texts(patches_dir or paths.patches_dir()))
    return tuple(n for n in (*FEATURES_72, *added) if n not in removed)


def features(text: str) -> tuple[str, ...]:
    """--a/--b: 'NO_STEAL' or 'NO_STEAL,NI_RANDOM' or 'NO_STEAL NI_RANDOM'
    -> words, each a known feature, optionally with NO_ in front."""
    known = known_features()
    words = tuple(w for w in re.split(r"[,\s]+", text.strip()) if w)
    bases = [w[3:] if w.startswith("NO_") and w[3:] in known else w for w in words]
    if not words or any(b not in known for b in bases) or len(set(bases)) != len(bases):
        raise _bad(text, "one or more sched feature words of this tree, each once, optionally "
                   "with NO_: " + " ".join(known))
    return words

