"""workloads/wakelat.c built and run on the host: its argument checks, and
its stall report on a worker that really stops answering (one thread held
in a ptrace stop, the rest of the process running)."""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from idlesteal.runs import stress

SRC = Path(__file__).parent.parent / "workloads" / "wakelat.c"
PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH = 0x4206, 0x4207, 17


@pytest.fixture(scope="module")
def wakelat(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    exe = tmp_path_factory.mktemp("wakelat") / "wakelat"
    subprocess.run([cc, "-O2", "-Wall", "-Werror", "-pthread", "-o", str(exe), str(SRC)],
                   check=True)
    return exe


@pytest.mark.parametrize("args", [["-g", "0"], ["-g", "x"], ["-g", "3601"], ["-d", "0"],
                                  ["extra"]])
def test_bad_arguments_are_usage_errors(wakelat: Path, args: list[str]):
    r = subprocess.run([str(wakelat), *args], capture_output=True, text=True)
    assert r.returncode == 1 and "usage:" in r.stderr


def test_short_run_is_not_a_stall(wakelat: Path):
    r = subprocess.run([str(wakelat), "-m", "1", "-w", "2", "-d", "0.3", "-g", "5"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout
    [run] = stress.parse_runs(f"WAKELAT rc={r.returncode} "
                              + [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")][0])
    assert run.problems() == [] and run.result and run.result["samples"] > 0


def test_a_worker_held_stopped_is_reported_as_a_stall(wakelat: Path):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    libc.ptrace.restype = ctypes.c_long
    proc = subprocess.Popen([str(wakelat), "-m", "1", "-w", "2", "-d", "1", "-g", "0.5"],
                            stdout=subprocess.PIPE, text=True)
    try:
        task = Path(f"/proc/{proc.pid}/task")
        for _ in range(1000):           # main thread, 2 workers, 1 messenger
            tids = sorted(int(t) for t in os.listdir(task))
            if len(tids) == 4:
                break
            time.sleep(0.01)
        # a loaded machine can take longer than 1 s to start them: wait up
        # to 10 s, and never seize a thread that may not be a worker
        assert len(tids) == 4, f"wakelat has threads {tids} after 10 s, not 4"
        worker = tids[1]                # the first thread main creates
        if libc.ptrace(PTRACE_SEIZE, worker, None, None) != 0:
            pytest.skip(f"ptrace not allowed here (errno {ctypes.get_errno()})")
        assert libc.ptrace(PTRACE_INTERRUPT, worker, None, None) == 0
        os.waitpid(worker, 0x40000000)  # __WALL: the thread is in its ptrace stop
        time.sleep(2.5)                 # past the 1 s run and the 0.5 s grace
        if libc.ptrace(PTRACE_DETACH, worker, None, None) != 0:
            os.waitpid(worker, 0x40000000)  # it died with the process: reap it
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 2, out
    stalls = [ln for ln in out.splitlines() if ln.startswith("STALL worker")]
    assert len(stalls) == 1 and f"tid {worker}:" in stalls[0], out
    assert "state t," in stalls[0] and "schedstat [" in stalls[0], stalls
    cpu = int(re.search(r"cpu (-?\d+),", stalls[0]).group(1))
    assert 0 <= cpu < os.cpu_count(), stalls        # field 39 of stat, not its neighbour
    result = [ln for ln in out.splitlines() if ln.startswith("RESULT ")][0]
    section = f"WAKELAT rc=2 {result}\n" + "\n".join(stalls) + "\n"
    [run] = stress.parse_runs(section)
    assert any("stalled" in p for p in run.problems())
