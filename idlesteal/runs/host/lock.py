"""The lock and the session (idlesteal/runs/host/): `session()` holds a
lock so two host runs never overlap, mounts debugfs and tracefs where they
are not, saves the machine's state (state.py) first, also to a file next
to the lock, makes the tracefs instance the script traces in (INSTANCE,
removed after, so the top-level buffer and its settings are left alone),
turns schedstats on, and puts it all back on success, failure, Ctrl-C
and SIGTERM.  A run killed with SIGKILL is put back by the next one, from
that file, its script's process group ended first (`end_leftover()`).
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import signal
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ...util import HarnessError, log
from .common import (DEBUGFS, INSTANCE, LOCK, ROOT, SCHEDSTATS, STATE, TRACEFS, HostError,
                     Refused, Stopped, _p, _read, _write)
from .probe import mounted
from .script import end_group
from .state import Mounter, State, Unmounter, real_mount, real_umount, restore, snapshot

@dataclass
class Session:
    root: Path
    state: State                 # as found (after the mounts host mode made)
    recovered: str = ""          # what an earlier, killed run left and this one put back

    def started(self, pgid: int, run_dir: Path) -> None:
        """run_script()'s on_start: the script's process group, saved with
        the state, so that the next run can end it should this one be
        killed with SIGKILL (its script, workload and loader live on)."""
        self.state.script_pgid, self.state.script_dir = pgid, str(run_dir)
        _p(self.root, STATE).write_text(json.dumps(self.state.to_json(), indent=1) + "\n")


def proc_stats(proc: Path = Path("/proc")) -> dict[int, tuple[str, int, int]]:
    """Each process's state, parent and process group (fields 3-5 of
    /proc/PID/stat)."""
    out = {}
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 2:
            out[int(d.name)] = (fields[0], int(fields[1]), int(fields[2]))
    return out


def group_members(pgid: int, proc: Path = Path("/proc")) -> list[int]:
    """The processes of process group `pgid`."""
    return [pid for pid, (_, _, group) in proc_stats(proc).items() if group == pgid]


def end_leftover(pgid: int, run_dir: str, proc: Path = Path("/proc")) -> str:
    """End what is left of a killed run's script: its process group, if a
    member still works in `run_dir` (the group id may have been reused by
    an unrelated group since, which is left alone).  Returns what it did."""
    if pgid <= 0 or not run_dir:
        return ""
    members = group_members(pgid, proc)
    ours = []
    for pid in members:
        try:
            if os.readlink(proc / str(pid) / "cwd") == os.path.realpath(run_dir):
                ours.append(pid)
        except OSError:
            continue
    if not ours:
        return ""
    end_group(pgid, (5.0, 5.0))
    left = group_members(pgid, proc)
    return (f"its script (process group {pgid}, {len(members)} process(es)) was still "
            f"running: ended" + (f", except {len(left)} that did not exit" if left else ""))


def _lock(root: Path) -> int:
    path = _p(root, LOCK)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        holder = (_read(path) or "").strip() or "?"
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EACCES):
            raise Refused(f"another host run (pid {holder}) holds {path}: host runs do not "
                            "overlap; wait for it to finish") from None
        raise
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _recover(root: Path, mount: Mounter, umount: Unmounter) -> str:
    """Put back the state an earlier run saved and never restored (it was
    killed with SIGKILL, or the machine lost power mid-run)."""
    path = _p(root, STATE)
    text = _read(path)
    if text is None:
        return ""
    try:
        old = State.from_json(json.loads(text))
    except (ValueError, TypeError) as e:
        path.unlink()
        return f"ignored an unreadable saved state {path} ({e})"
    # First its script, which would go on changing things (a sched_ext
    # loader still in charge, features set by the next load).
    ended = end_leftover(old.script_pgid, old.script_dir)
    # The values live in the kernel, not in the mounts: mount what is needed
    # to reach them again, and unmount what that run or this one mounted.
    still = [t for t in old.mounts_made if mounted(root, t)]
    now = []
    for fs, target in (("debugfs", DEBUGFS), ("tracefs", TRACEFS)):
        if target in old.mounts_made and not mounted(root, target) \
                and not (_p(root, target) / "trace").exists():
            try:
                mount(fs, _p(root, target))
                now.append(target)
            except HarnessError:
                pass
    old.mounts_made = still + now
    problems = restore(old, root, umount)
    path.unlink()
    return (f"an earlier host run (pid {old.pid}) ended without restoring the machine; "
            + (ended + "; " if ended else "")
            + "its saved state was put back" + (f" except: {'; '.join(problems)}"
                                                if problems else ""))


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Stopped in the main thread for the duration."""
    def handler(signum: int, frame: object) -> None:
        raise Stopped(signum)
    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextmanager
def session(root: Path = ROOT, *, mount: Mounter = real_mount,
            umount: Unmounter = real_umount, need_tracefs: bool = True) -> Iterator[Session]:
    """Hold the host lock; mount debugfs (and tracefs) where they are not;
    save the state (also to STATE, for the next run should this one be
    killed); turn schedstats on; on the way out, however it goes, put it
    all back.  Raises HostError listing what could not be put back."""
    fd = _lock(root)
    state = State(pid=os.getpid())
    failed = False
    try:
        with _signals_raise():
            recovered = _recover(root, mount, umount)
            if recovered:
                log(recovered)
            try:
                for fs, target, need in (("debugfs", DEBUGFS, True),
                                         ("tracefs", TRACEFS, need_tracefs)):
                    if need and not mounted(root, target) and \
                            not (fs == "tracefs" and (_p(root, target) / "trace").exists()) \
                            and re.search(rf"\b{fs}\b", _read(_p(root, "proc/filesystems")) or ""):
                        mount(fs, _p(root, target))
                        state.mounts_made.append(target)
                        # saved at once: a kill from here on leaves a record
                        _p(root, STATE).write_text(json.dumps(state.to_json()))
                found = snapshot(root)
                found.mounts_made, found.pid = state.mounts_made, state.pid
                state = found
                _p(root, STATE).write_text(json.dumps(state.to_json(), indent=1) + "\n")
                inst = _p(root, INSTANCE)
                if need_tracefs and inst.parent.is_dir():
                    if inst.exists():
                        raise HostError(f"the tracefs instance {inst} exists already (another "
                                        "tool's, or left by a host run killed before it saved "
                                        f"its state): `rmdir {inst}` if it is not in use")
                    state.instance_made = INSTANCE
                    _p(root, STATE).write_text(json.dumps(state.to_json(), indent=1) + "\n")
                    os.mkdir(inst)
                if state.schedstats == "0":
                    _write(_p(root, SCHEDSTATS), "1")
                yield Session(root, state, recovered)
            except BaseException:
                failed = True
                raise
            finally:
                # No second signal in the middle of putting things back.
                blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT,
                                                                     signal.SIGTERM,
                                                                     signal.SIGHUP})
                try:
                    problems = restore(state, root, umount)
                    if not problems:
                        _p(root, STATE).unlink(missing_ok=True)
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                if problems:
                    msg = ("the machine's state was not all put back: " + "; ".join(problems)
                           + f" (saved state kept in {_p(root, STATE)})")
                    if failed:          # the run's own error goes on up; this one is said
                        log(msg)
                    else:
                        raise HostError(msg)
    finally:
        os.close(fd)
