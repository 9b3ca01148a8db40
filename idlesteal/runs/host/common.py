"""Host mode's ground (idlesteal/runs/host/): the files under /proc, /sys,
debugfs and tracefs that it reads and writes, the lock and saved-state
files, the series' feature name, its errors (HostError; Refused, what this
machine cannot do, said before any load; Stopped, SIGTERM unwinding like
Ctrl-C) and the small helpers that read and write one file.  Every path is
relative, under `root` ("/" for real; tests pass a fake tree).
"""
from __future__ import annotations

import signal
from pathlib import Path
from typing import Optional

from ...util import HarnessError
from ...guest import tracepins

ROOT = Path("/")
LOCK = "run/lock/idlesteal-host.lock"
# The saved state while a run holds the lock (removed once it is restored).
STATE = "run/lock/idlesteal-host.state.json"
TRACEFS = "sys/kernel/tracing"
# The tracefs instance host mode traces in (helpers.sh's IDLESTEAL_TRACEFS):
# its own ring buffers, clock and events, so the top-level buffer, and any
# tracing someone else does there, is left alone; removed after the run.
INSTANCE = "sys/kernel/tracing/instances/idlesteal"
DEBUGFS = "sys/kernel/debug"
FEATURES = "sys/kernel/debug/sched/features"
VERBOSE = "sys/kernel/debug/sched/verbose"
SCHEDSTATS = "proc/sys/kernel/sched_schedstats"
SCHED_EXT = "sys/kernel/sched_ext"
# The events of the wasted-time measure (helpers.sh trace_setup).
EVENTS = tracepins.EVENTS
DEFAULT_MAX_LOAD = 0.25
# The series' feature (patches/series, patch 8).
STEAL = "STEAL"


class HostError(HarnessError):
    pass


class Refused(HostError):
    """What this machine or its load cannot do, said before any load: not
    root, the A/B asked for, no measure, the load, a program not installed.
    `suite --host` stops at the first (the next entry would be refused too)."""


class Stopped(KeyboardInterrupt):
    """SIGTERM (or SIGHUP) during a host run: unwinds like Ctrl-C, so every
    `finally` on the way restores what it changed."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum



def _p(root: Path, rel: str) -> Path:
    return root / rel


def _read(path: Path) -> Optional[str]:
    """The file's text, or None when it is missing or not readable."""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def _why(path: Path) -> str:
    """Why a file cannot be read: 'missing' or the error's text."""
    try:
        path.read_bytes()
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        return e.strerror or str(e)
    return "readable"


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value + "\n")
