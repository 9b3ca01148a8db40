"""Every guest shell script in idlesteal/guest/ parses with busybox ash."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from idlesteal.runs import asym, stress
from idlesteal import guest
from idlesteal.guest import image, topology

GUEST_DIR = Path(guest.__file__).parent


def as_run(name: str) -> str:
    """The script as the guest gets it (stress.sh with its generated preamble)."""
    if name == "stress.sh":
        return stress.script(stress.Params(seconds=120, ncpus=8))
    return guest.read(name)


def test_every_script_is_known_and_loaded():
    assert guest.names() == sorted(p.name for p in GUEST_DIR.glob("*.sh"))
    assert {"init.sh", "helpers.sh", "topology.sh", "asym-topology.sh", "stress.sh"} \
        <= set(guest.names())
    assert image.INIT == guest.read("init.sh") and image.HELPERS == guest.read("helpers.sh")
    assert topology.GUEST_SNIPPET == guest.read("topology.sh")
    assert asym.GUEST_SNIPPET == guest.read("asym-topology.sh")


@pytest.mark.parametrize("name", guest.names())
def test_busybox_ash_syntax(name: str, tmp_path: Path):
    if not os.access(image.BUSYBOX, os.X_OK):
        pytest.fail(f"{image.BUSYBOX} is missing: install busybox-static (`make deps`); "
                    f"the guest scripts' syntax check needs it")
    path = tmp_path / name
    path.write_text(as_run(name))
    proc = subprocess.run([image.BUSYBOX, "ash", "-n", str(path)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, f"busybox ash -n {name}:\n{proc.stdout}{proc.stderr}"


def test_hang_report_names_loader_threads_and_runnable_tasks(tmp_path: Path):
    """helpers.sh's hang_report, run here with busybox ash on this machine's
    /proc: a sleeping process named scx_* is listed with its kernel stack
    (root reads /proc/PID/stack), the report's own running shell as R, and
    every line carries the prefix vm.hang_report() looks for."""
    if not os.access(image.BUSYBOX, os.X_OK):
        pytest.fail(f"{image.BUSYBOX} is missing: install busybox-static (`make deps`)")
    fake = tmp_path / "scx_fakeload"
    shutil.copy("/bin/sleep", fake)
    loader = subprocess.Popen([str(fake), "30"])
    try:
        script = tmp_path / "r.sh"
        script.write_text(image.HELPERS + "\nhang_report\n")
        out = subprocess.run([image.BUSYBOX, "ash", str(script)], capture_output=True,
                             text=True, timeout=60).stdout
    finally:
        loader.kill()
        loader.wait()
    lines = out.splitlines()
    assert lines and all(l.startswith("idlesteal-hang: ") for l in lines), out[:2000]
    assert lines[0].startswith("idlesteal-hang: report at ") and lines[-1] == "idlesteal-hang: end"
    head = f"idlesteal-hang: task {loader.pid} (scx_fakeload) of {loader.pid} (scx_fakeload) state S cpu "
    at = next(i for i, l in enumerate(lines) if l.startswith(head))
    if os.geteuid() == 0:
        assert lines[at + 1].startswith("idlesteal-hang:     [<0>] "), lines[at:at + 3]
    assert any(" state R cpu " in l for l in lines), out[:2000]


def test_scx_stop_reports_a_loader_that_does_not_exit(tmp_path: Path):
    """helpers.sh's scx_stop, run here with busybox ash: a "loader" that
    ignores SIGINT is reported after SCX_STOP_S with each of its threads'
    state and kernel stack and its last lines, and scx_stop returns 1 instead of waiting for
    it; _scx_alive is false for a child that exited and is not yet waited
    for (a zombie), which `kill -0` would call alive."""
    if not os.access(image.BUSYBOX, os.X_OK):
        pytest.fail(f"{image.BUSYBOX} is missing: install busybox-static (`make deps`)")
    script = tmp_path / "s.sh"
    script.write_text(image.HELPERS + """
(exit 3) & z=$!
sleep 0.5
_scx_alive $z && echo "zombie alive" || echo "zombie gone"
wait $z; echo "zombie rc $?"
scx_log=$0.log; echo "stats steals=7" > $scx_log
sh -c 'trap "" INT; exec sleep 30' & scx_pid=$!
sleep 0.5
SCX_STOP_S=1 scx_stop; echo "scx_stop rc $?"
kill -9 $scx_pid
""")
    out = subprocess.run([image.BUSYBOX, "ash", str(script)], capture_output=True, text=True,
                         timeout=60).stdout
    lines = out.splitlines()
    assert lines[:2] == ["zombie gone", "zombie rc 3"], out
    assert lines[2].startswith("loader ") and " still running 1 s after SIGINT, sched_ext" in lines[2]
    assert lines[3].startswith("  thread ") and " state S cpu " in lines[3], out
    if os.geteuid() == 0:
        assert lines[4].startswith("    [<0>] "), out
    assert lines[-3:] == [f"  its last lines ({script}.log):", "    stats steals=7",
                          "scx_stop rc 1"], out
