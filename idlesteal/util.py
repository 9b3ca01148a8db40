"""Small shared helpers: running commands, hashing, progress lines."""
from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence


class HarnessError(RuntimeError):
    """An error with a message meant for the person running the harness."""


class ParseError(HarnessError, ValueError):
    """Guest or tool output that does not read as expected.  A HarnessError,
    so a suite that catches one broken entry goes on with the rest; still a
    ValueError for callers that treat it as bad data."""


def log(msg: str) -> None:
    print(f"[idlesteal] {msg}", file=sys.stderr, flush=True)


_said: set[str] = set()


def say_once(key: str, message: str) -> None:
    """Log `message` the first time `key` comes up in this process: what
    was skipped and how to get it, once, not once per result."""
    if key not in _said:
        _said.add(key)
        log(message)


def run(cmd: Sequence[str], *, cwd: Path | None = None,
        env: Mapping[str, str] | None = None, capture: bool = False,
        check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    """Run a command; on failure raise HarnessError with its output."""
    proc = subprocess.run(list(cmd), cwd=cwd, env=dict(env) if env is not None else None,
                          text=True, input=input,
                          stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.PIPE if capture else None)
    if check and proc.returncode != 0:
        detail = ""
        if capture:
            detail = "\n" + ((proc.stdout or "") + (proc.stderr or "")).strip()[-4000:]
        raise HarnessError(f"command failed (rc={proc.returncode}): {shlex.join(cmd)}"
                           + (f" [in {cwd}]" if cwd else "") + detail)
    return proc


def output(cmd: Sequence[str], **kw) -> str:
    return run(cmd, capture=True, **kw).stdout


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_vendored(path: Path, sha256: str) -> None:
    """A pinned vendor/ tarball is there and is what its pin says."""
    if not path.exists():
        raise HarnessError(f"{path} is missing (vendor/README.md)")
    digest = sha256_file(path)
    if digest != sha256:
        raise HarnessError(f"{path}: sha256 {digest}, expected {sha256}")


class Stopwatch:
    def __init__(self) -> None:
        self.t0 = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.t0


# A file that each build step (kernel, source, tree, pahole, loader, peer)
# appends "name<TAB>seconds<TAB>ok|failed" to; `.ci/run` sets it and prints
# the table at the end, so a slow new build shows itself in CI's log.
STEP_LOG_ENV = "IDLESTEAL_STEP_LOG"


@contextmanager
def step(name: str) -> Iterator[None]:
    """Time one build step into $IDLESTEAL_STEP_LOG (nothing when unset)."""
    sw = Stopwatch()
    outcome = "failed"
    try:
        yield
        outcome = "ok"
    finally:
        path = os.environ.get(STEP_LOG_ENV)
        if path:
            with open(path, "a") as f:
                f.write(f"{name}\t{sw.elapsed():.0f}\t{outcome}\n")


def step_table(text: str) -> str:
    """The step log as a table: one line per step name in first-seen order,
    its calls, total seconds and failures, then the sum."""
    rows: dict[str, list[int]] = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) != 3 or not parts[1].isdigit():
            raise ParseError(f"step log line {line!r} is not name<TAB>seconds<TAB>outcome")
        r = rows.setdefault(parts[0], [0, 0, 0])
        r[0] += 1
        r[1] += int(parts[1])
        r[2] += parts[2] != "ok"
    width = max([len(n) for n in rows] + [4])
    out = [f"{'step':<{width}}  calls  seconds  failed"]
    out += [f"{n:<{width}}  {c:5d}  {s:7d}  {f:6d}" for n, (c, s, f) in rows.items()]
    out.append(f"{'all steps':<{width}}  {sum(r[0] for r in rows.values()):5d}  "
               f"{sum(r[1] for r in rows.values()):7d}  {sum(r[2] for r in rows.values()):6d}")
    return "\n".join(out)


MATPLOTLIB_FIX = ("run the harness with Debian's /usr/bin/python3 (`/usr/bin/python3 -m "
                  "idlesteal ...` or `make ...`) and install python3-matplotlib "
                  "(`make deps`, or `sudo apt-get install python3-matplotlib`)")


def pyplot() -> Any:
    """matplotlib.pyplot with the Agg backend, or None (said once, with the fix)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        say_once("matplotlib", f"no PNG plots: {sys.executable} cannot import matplotlib "
                 f"({e}); {MATPLOTLIB_FIX}")
        return None
    return plt


def invalid(value: object, want: str) -> str:
    """The message of a refused argument value: what was given, what is wanted."""
    return f"invalid value {value!r} (want {want})"
