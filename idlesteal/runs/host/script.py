"""Running the script on this machine (idlesteal/runs/host/): `run_script()`
runs the script bench.script() or sidebyside.script() writes for a guest,
with the same helpers (idlesteal/guest/helpers.sh), under /bin/sh in its
own process group; its output, the "@@SECTION name@@" protocol between the
BEGIN and END markers, goes to build/runs/<id>/output.log as the guest's
does and is read by image.parse_output().  A script that fails or outlives
its timeout is a HostError; its process group is ended (`end_group()`:
SIGTERM, then SIGKILL).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from ...guest import image
from ...guest import read as guest_file
from ...util import log
from .common import HostError

HELPERS = "helpers.sh"


@dataclass
class HostResult:
    """vm.RunResult's fields that bench reads."""
    run_dir: Path
    output: image.GuestOutput
    seconds: float

    @property
    def sections(self) -> dict[str, str]:
        return self.output.sections


def script_path(extra: list[Path]) -> str:
    """PATH for the script: the directories of --file programs first."""
    dirs = list(dict.fromkeys(str(p) for p in extra))
    return ":".join([*dirs, os.environ.get("PATH", ""),
                     "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])


def run_script(script: str, *, name: str = "host", timeout: float = 600,
               meta: dict | None = None, path_dirs: list[Path] | None = None,
               quiet: bool = False, tracefs: Optional[Path] = None,
               on_start: Optional[Callable[[int, Path], None]] = None) -> HostResult:
    """Run `script` with the guest helpers under /bin/sh on this machine, in
    its own process group; its output, between image.parse_output()'s
    markers, goes to build/runs/<id>/output.log.  A script that fails or
    outlives `timeout` is a HostError naming that log.  `on_start` gets the
    process group and the run directory once it runs (Session.started)."""
    from ...guest import vm
    rd = vm.new_run_dir(f"{name}-host")
    out = rd / "output.log"
    (rd / "run.sh").write_text(script)
    (rd / HELPERS).write_text(guest_file(HELPERS))
    if meta is not None:
        (rd / vm.RUN_META).write_text(json.dumps(meta, indent=2) + "\n")
    env = dict(os.environ, PATH=script_path(path_dirs or []), LC_ALL="C")
    if tracefs is not None:          # helpers.sh traces there
        env["IDLESTEAL_TRACEFS"] = str(tracefs)
    say = (lambda m: None) if quiet else log
    say(f"running the script on this machine -> {rd}")
    t0 = time.monotonic()
    with open(out, "w") as f:
        f.write(image.BEGIN + "\n")
        f.flush()
        proc = subprocess.Popen(["/bin/sh", "-c", f". ./{HELPERS}; . ./run.sh"], cwd=rd,
                                stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
        try:
            if on_start is not None:
                on_start(proc.pid, rd)
            deadline, next_note = t0 + timeout, t0 + 60
            while proc.poll() is None:
                time.sleep(0.1)
                now = time.monotonic()
                if now > deadline:
                    raise HostError(f"the script did not finish within {timeout:.0f} s; "
                                    f"output: {out}")
                if now > next_note:
                    next_note = now + 60
                    say(f"  ... {now - t0:.0f} s")
        finally:
            if proc.poll() is None:
                _kill_group(proc)
        f.write(f"@@IDLESTEAL END rc={proc.returncode}@@\n")
    total = time.monotonic() - t0
    parsed = image.parse_output(out.read_text(errors="replace"))
    if parsed is None:
        raise HostError(f"{out}: no BEGIN/END markers")
    if parsed.rc != 0:
        tail = "\n".join("    | " + l for l in parsed.text.splitlines()[-25:])
        raise HostError(f"the script exited with rc={parsed.rc}; output: {out}\n{tail}")
    say(f"  done in {total:.1f} s")
    return HostResult(rd, parsed, total)


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the script's process group (the workload's processes
    too), SIGKILL to what is left after 5 s; returns once the group is empty
    (or after 15 s more)."""
    end_group(proc.pid, (5.0, 15.0), reap=proc.poll)
    proc.wait()


def end_group(pgid: int, waits: tuple[float, float],
              reap: Callable[[], object] = lambda: None) -> None:
    """SIGTERM to process group `pgid`, up to waits[0] s for it to be
    empty, then SIGKILL and up to waits[1] s more; `reap` is called while
    waiting (a member that is our child must be reaped to go)."""
    for sig, wait in zip((signal.SIGTERM, signal.SIGKILL), waits):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            reap()
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
