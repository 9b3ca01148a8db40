"""`bench --host` for real, on the machine the tests run on (no VM, no
`guest` marker): hackbench with the wasted-time measure end to end, the
STEAL A/B refused on a kernel without the series, and a run killed with
SIGTERM in the middle; each time the machine's tracing state, sched
features and mounts are read back and must be as they were.

Small on purpose (hackbench -g 1, 2 repetitions): the CI machine has two
cores shared with kernel builds and QEMU guests, so --force-load."""
from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from idlesteal.runs import host
from idlesteal.commands import needs
from idlesteal import paths
from idlesteal.scx import peers, own as scx

ROOT = host.ROOT


def _why_not() -> str:
    if os.geteuid() != 0:
        return "host mode needs root (tracefs, sched features, mounts)"
    fs = Path("/proc/filesystems").read_text()
    if "tracefs" not in fs:
        return "this kernel has no tracefs (the wasted-time measure needs it)"
    if not (host.ROOT / host.TRACEFS).is_dir():
        return "no /sys/kernel/tracing mount point"
    return ""


pytestmark = pytest.mark.skipif(bool(_why_not()), reason=_why_not() or "runs")

# Two test sessions on one machine (engineers sharing a checkout) take turns:
# each test here reads the machine's state before and after a host run.
TESTS_LOCK = Path("/run/lock/idlesteal-host-tests.lock")


@pytest.fixture(autouse=True)
def one_at_a_time():
    fd = os.open(TESTS_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + 900
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"{TESTS_LOCK} held for 15 min by another test session")
                time.sleep(1)
        yield
    finally:
        os.close(fd)


def machine_state() -> tuple[dict, host.State, bool]:
    """Which of debugfs/tracefs are mounted, the state host mode keeps, and
    whether its tracefs instance exists (tracefs mounted for the reading and
    unmounted again if it was not)."""
    mounts = {t: host.mounted(ROOT, t) for t in (host.DEBUGFS, host.TRACEFS)}
    made = []
    for fs, t in (("debugfs", host.DEBUGFS), ("tracefs", host.TRACEFS)):
        if not mounts[t] and not (ROOT / t / "trace").exists():
            host.real_mount(fs, ROOT / t)
            made.append(t)
    try:
        state = host.snapshot(ROOT)
        instance = (ROOT / host.INSTANCE).exists()
    finally:
        for t in reversed(made):
            host.real_umount(ROOT / t)
    return mounts, state, instance


def as_it_was(before: tuple[dict, host.State, bool]) -> None:
    after = machine_state()
    assert after[0] == before[0], f"mounts: {after[0]}, were {before[0]}"
    assert host.differences(before[1], after[1]) == []
    assert not after[2], f"{host.INSTANCE} left behind"
    assert not (ROOT / host.STATE).exists(), "the saved state was left behind"
    fd = os.open(ROOT / host.LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)     # free: no run holds it
    finally:
        os.close(fd)


def bench(tmp: Path, *args: str) -> list[str]:
    return [needs.DEBIAN_PYTHON, "-m", "idlesteal", "bench", "--host", "--force-load",
            "--levels", "1", "--reps", "2", "--outdir", str(tmp / "out"), *args]


def env(tmp: Path) -> dict:
    return dict(os.environ, IDLESTEAL_BUILD=str(tmp / "build"),
                IDLESTEAL_RESULTS=str(tmp / "results"))


def test_bench_host_hackbench_with_the_wasted_time_measure(tmp_path):
    before = machine_state()
    r = subprocess.run(bench(tmp_path, "--size", "50", "--name", "hb"), cwd=paths.REPO,
                       env=env(tmp_path), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    # the kernel's offer, before the table and beside it in the .txt
    assert out.startswith("host: ") and "  topology: " in out and "  tracefs: yes" in out
    assert re.search(r"waste side +wasted LLC %", out), out
    assert re.search(r"^    1    A +\d+\.\d\d ± ", out, re.M) and "\n    1    B " in out
    txt = (tmp_path / "out/hb.txt").read_text()
    assert "running kernel" in txt.splitlines()[0] and "\nhost: " in txt
    data = json.loads((tmp_path / "out/hb.json").read_text())
    hm = data["meta"]["host_mode"]
    assert hm["offer"]["topology"]["online"] and hm["load_start"]["ncpus"] >= 1
    assert data["meta"]["preset"] == "host"
    assert all(run["waste"] is not None for run in data["runs"])
    if not hm["offer"]["steal"]:
        assert "STEAL A/B skipped: " in out and data["meta"]["A"] == [] == data["meta"]["B"]
    else:   # a kernel with the series (the guest of tests/guest/test_host_guest.py)
        assert data["meta"]["A"] == ["NO_STEAL"] and data["meta"]["B"] == ["STEAL"]
        side = {s: [r for r in data["runs"] if r["side"] == s and r["rep"] >= 0] for s in "AB"}
        assert len(side["A"]) == 2 == len(side["B"])
        assert all(r["steal"] == 0 for r in side["A"]), side["A"]
        assert sum(r["steal"] for r in side["B"]) > 0, "no steal under STEAL"
    assert (tmp_path / "out/hb-timeline-A.png").exists()
    # each measured run's trace, as tracefs printed it (for Perfetto)
    kept = sorted((tmp_path / "out/hb-traces").glob("*.trace.gz"))
    assert len(kept) == sum(1 for r in data["runs"] if r["rep"] >= 0) == 4, kept
    (log,) = (tmp_path / "build/runs").glob("*-bench-host/output.log")
    assert "==> /sys/kernel/tracing/instances/idlesteal/per_cpu/cpu" in log.read_text(), \
        "not traced in host mode's own tracefs instance"
    as_it_was(before)


def test_bench_host_refuses_the_steal_ab_without_the_series(tmp_path):
    before = machine_state()
    r = subprocess.run(bench(tmp_path, "--size", "50", "--a", "NO_STEAL", "--b", "STEAL"),
                       cwd=paths.REPO, env=env(tmp_path), capture_output=True, text=True,
                       timeout=300)
    if "STEAL yes" in r.stdout:
        pytest.skip("this kernel has the series' STEAL feature: nothing to refuse")
    assert r.returncode == 1
    errors = [l for l in r.stderr.splitlines() if not l.startswith("[idlesteal]")]
    assert len(errors) == 1, r.stderr
    assert errors[0].startswith("idlesteal bench: error: --host: the A/B NO_STEAL against "
                                "STEAL cannot run on this kernel: ")
    assert "host: " in r.stdout                      # the offer came first
    assert not (tmp_path / "out").exists()           # nothing ran, nothing written
    as_it_was(before)


def _ours(size: str) -> list[int]:
    """Processes still running a hackbench of this test's size."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmd and cmd[0].endswith(b"hackbench") and size.encode() in cmd:
                pids.append(int(d.name))
    return pids


def _until(p: subprocess.Popen, ready, seconds: float = 300) -> None:
    """Wait while run `p` goes on, until ready() or `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and p.poll() is None and not ready():
        time.sleep(0.2)


def _proc(pid: int, name: str) -> str:
    try:
        return Path(f"/proc/{pid}/{name}").read_text(errors="replace")
    except OSError as e:
        return f"({e.strerror})"


def _where(p: subprocess.Popen) -> str:
    """What run `p`, the processes below it and those of their process
    groups are doing: each one's state, wait channel and kernel stack; and
    (SIGUSR1: the CLI's faulthandler) the run's Python stack, which it
    writes to its stderr."""
    procs = host.proc_stats()                   # pid: state, parent, process group
    mine: set[int] = {p.pid}
    while True:             # not the test's own group, which the run is in
        groups = {procs[m][2] for m in mine if m in procs} - {os.getpgrp()}
        more = {pid for pid, (_, ppid, pgrp) in procs.items()
                if ppid in mine or pgrp in groups} - mine
        if not more:
            break
        mine |= more
    lines = []
    for pid in sorted(mine & procs.keys()):
        cmd = _proc(pid, "cmdline").replace("\0", " ").strip()
        lines.append(f"  {pid} {procs[pid][0]} wchan {_proc(pid, 'wchan') or '-'}: {cmd[:150]}")
        lines += [f"      {line}" for line in _proc(pid, "stack").splitlines()[:12]]
    p.send_signal(signal.SIGUSR1)
    time.sleep(2)
    return "\n".join(lines)


def _stop(p: subprocess.Popen, timeout: float = 120) -> tuple[str, str]:
    """SIGTERM to run `p` and its output once it has ended.  A run still
    going `timeout` s later fails the test with what it was doing (_where),
    after the next session has put back what the run left (so that the
    tests after this one start from the machine as it was)."""
    p.send_signal(signal.SIGTERM)
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        where = _where(p)
        p.kill()
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired as e:   # a child holds its pipes open
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) \
                else e.stderr or ""
        try:
            with host.session(ROOT) as s:
                recovered = s.recovered
        except Exception as e:          # said beside the rest, not in its place
            recovered = f"failed: {e}"
        pytest.fail(f"the run had not ended {timeout:.0f} s after SIGTERM; its processes:\n"
                    f"{where}\nthe end of its stderr (its Python stack last):\n{err[-6000:]}"
                    f"\nthe next session: {recovered or 'nothing to put back'}")


def test_a_host_run_killed_with_sigterm_leaves_the_machine_as_it_was(tmp_path):
    before = machine_state()
    size = "23457"                                    # long enough to be caught mid-run
    p = subprocess.Popen(bench(tmp_path, "--size", size, "--name", "killed"),
                         cwd=paths.REPO, env=env(tmp_path), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        def started() -> bool:
            logs = list((tmp_path / "build/runs").glob("*/output.log"))
            return bool(logs) and "@@SECTION r001.output@@" in logs[0].read_text(errors="replace")
        _until(p, started)
        assert p.poll() is None, "the run ended before it could be killed"
        # The section marker is printed just before hackbench is started:
        # on a loaded host the exec may lag it by a moment.
        until = time.monotonic() + 30
        while not _ours(size) and p.poll() is None and time.monotonic() < until:
            time.sleep(0.1)
        assert _ours(size), "no hackbench running at the kill"
        out, err = _stop(p)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode != 0
    assert "stopped by SIGTERM" in err and "put back" in err, err[-2000:]
    assert not (tmp_path / "out/killed.json").exists()
    assert _ours(size) == [], "the workload outlived the run"     # _kill_group waited
    as_it_was(before)


# side-by-side --host: the schedulers of `make bench-scx` that the kernel can run.
SBS = ("eevdf", "eevdf+steal", "scx_idlesteal", "scx_bpfland")


def side_by_side(tmp: Path, *args: str, sched: tuple[str, ...] = SBS,
                 size: str = "50") -> list[str]:
    """side-by-side --host on one small hackbench; the loaders as `make scx`
    built them, linked into the test's build directory."""
    (tmp / "s.suite").write_text(f"2x2x2 hackbench 1 {size}\n")
    for name in (n for n in sched if n.startswith("scx_")):
        real = peers.binary(name) if name in peers.PEERS else scx.binary(name)
        if real.exists():
            link = tmp / "build" / real.relative_to(paths.build_dir())
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(real)
    record = peers.root() / ".crates2.json"        # the peers' versions, for the metadata
    if record.exists():
        link = tmp / "build" / record.relative_to(paths.build_dir())
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(record)
    return [needs.DEBIAN_PYTHON, "-m", "idlesteal", "side-by-side", "--host", "--force-load",
            "--no-build", "--reps", "2", "--sched", ",".join(sched), "--suite-file",
            str(tmp / "s.suite"), "--outdir", str(tmp / "out"), *args]


def test_side_by_side_host_runs_what_the_kernel_offers(tmp_path):
    before = machine_state()
    r = subprocess.run(side_by_side(tmp_path), cwd=paths.REPO, env=env(tmp_path),
                       capture_output=True, text=True, timeout=900)
    out = r.stdout
    assert out.startswith("host: "), (out, r.stderr[-3000:])
    steal, has_scx = "STEAL yes" in out, "sched_ext: yes" in out
    ran = ["eevdf", *(["eevdf+steal"] if steal else []),
           *(["scx_idlesteal", "scx_bpfland"] if has_scx else [])]
    if not steal:
        assert re.search(r"side by side: eevdf\+steal skipped: (sched/features has no STEAL: "
                         r"the running kernel is not built with the series|/sys/kernel/debug/"
                         r"sched/features is not readable)", out), out
    if not has_scx:
        assert "side by side: scx_idlesteal skipped: the running kernel has no sched_ext" \
            in out, out
    if len(ran) < 2:
        assert r.returncode == 0, r.stderr[-3000:]
        assert "side by side skipped: 1 of the schedulers can run on this kernel" in out
        assert not (tmp_path / "out").exists()
    else:
        assert r.returncode == 0, r.stderr[-3000:]
        data = json.loads((tmp_path / "out/host.json").read_text())
        assert [c["name"] for c in data["spec"]["contenders"]] == ran
        ms = data["measurements"]
        assert {m["contender"] for m in ms} == set(ran) and len(ms) == 2 * len(ran)
        assert all(m["waste"] is not None for m in ms)
        assert data["meta"]["host_mode"]["offer"]["topology"]["online"]
        if steal:       # the fair class' steals, under STEAL only
            by = {n: [m["counters"]["steal_tasks"] for m in ms if m["contender"] == n]
                  for n in ran}
            assert sum(by["eevdf+steal"]) > 0 and sum(by["eevdf"]) == 0, by
        if has_scx:     # each loader was in charge of its runs, and let go
            assert len(data["steals"]["scx_idlesteal"]) == 2
            assert data["meta"]["peers"]["scx_bpfland"] == peers.PEERS["scx_bpfland"]
            assert (ROOT / "sys/kernel/sched_ext/state").read_text().strip() == "disabled"
        assert "\nhost: " in (tmp_path / "out/host.txt").read_text()
    as_it_was(before)


def _scx_why_not() -> str:
    state = ROOT / "sys/kernel/sched_ext/state"
    if not state.exists():
        return "the running kernel has no sched_ext (the scx guest of test_host_guest.py has)"
    if not scx.binary("scx_idlesteal").exists():
        return "scx_idlesteal is not built (make scx)"
    return ""


@pytest.mark.skipif(bool(_scx_why_not()), reason=_scx_why_not() or "runs")
def test_side_by_side_host_killed_while_a_sched_ext_scheduler_is_in_charge(tmp_path):
    before = machine_state()
    cmd = side_by_side(tmp_path, sched=("scx_idlesteal", "eevdf"), size="23458")
    p = subprocess.Popen(cmd, cwd=paths.REPO, env=env(tmp_path), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    state = ROOT / "sys/kernel/sched_ext/state"
    try:
        _until(p, lambda: state.read_text().strip() == "enabled" and bool(_ours("23458")))
        assert p.poll() is None, "the run ended before it could be killed"
        assert state.read_text().strip() == "enabled", "scx_idlesteal never took over"
        out, err = _stop(p)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode != 0
    assert "stopped by SIGTERM" in err and "put back" in err, err[-2000:]
    assert state.read_text().strip() == "disabled"
    assert _ours("23458") == [], "the workload outlived the run"
    as_it_was(before)


@pytest.mark.skipif(bool(_scx_why_not()), reason=_scx_why_not() or "runs")
def test_a_run_killed_with_sigkill_under_sched_ext_is_ended_by_the_next(tmp_path):
    """SIGKILL: nothing of the run can put anything back, and its script
    (workload, loader) lives on in its own process group; the next host
    run ends that group, sched_ext lets go, and the state comes back."""
    before = machine_state()
    p = subprocess.Popen(side_by_side(tmp_path, sched=("scx_idlesteal", "eevdf"), size="23459"),
                         cwd=paths.REPO, env=env(tmp_path), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    state = ROOT / "sys/kernel/sched_ext/state"
    try:
        _until(p, lambda: state.read_text().strip() == "enabled" and bool(_ours("23459")))
        assert p.poll() is None and state.read_text().strip() == "enabled"
        p.kill()
        p.wait()
        time.sleep(1)
        assert state.read_text().strip() == "enabled" and _ours("23459"), \
            "the killed run's script did not live on: nothing to test"
        with host.session(ROOT) as s:
            assert "was still running: ended" in s.recovered, s.recovered
            assert "its saved state was put back" in s.recovered
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert state.read_text().strip() == "disabled"
    assert _ours("23459") == []
    as_it_was(before)


def test_a_workload_not_installed_is_named_before_any_load(tmp_path):
    before = machine_state()
    r = subprocess.run(bench(tmp_path, "--workload", "mine", "--command",
                             "idlesteal-no-such-prog {level}", "--metric", "t=([0-9.]+)"),
                       cwd=paths.REPO, env=env(tmp_path), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1
    assert "error: --host: idlesteal-no-such-prog is not installed on this machine" in r.stderr
    assert not list((tmp_path / "build").glob("runs/*"))
    as_it_was(before)


def test_suite_host_runs_the_suite_files_workloads_here(tmp_path):
    before = machine_state()
    (tmp_path / "s.suite").write_text(
        'workload gone "idlesteal-no-such-prog {level}" "t=([0-9.]+)" lower\n'
        "2x2x2 hackbench 1 50\n1x1x2 hackbench 1,2 50\n2x2x2 gone 1\n")
    r = subprocess.run([needs.DEBIAN_PYTHON, "-m", "idlesteal", "suite", "--host",
                        "--force-load", "--reps", "2", "--suite-file", str(tmp_path / "s.suite"),
                        "--outdir", str(tmp_path / "out")], cwd=paths.REPO, env=env(tmp_path),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    assert "hackbench: levels 1 size 50 of its 2x2x2 line; its 1x1x2 line(s) left out" in out
    assert "suite --host: host-gone skipped: idlesteal-no-such-prog is not installed" in out
    assert out.count("\nhost: ") + out.startswith("host: ") >= 1 and "== host-hackbench" in out
    data = json.loads((tmp_path / "out/host-hackbench.json").read_text())
    assert data["meta"]["preset"] == "host" and data["meta"]["host_mode"]["offer"]["topology"]
    assert data["meta"]["workload"]["loops"] == 50 and len(data["runs"]) == 4
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert summary["meta"]["mode"] == "host" and summary["meta"]["failed"] == []
    assert [(row["preset"], row["level"]) for row in summary["rows"]] == [("host", 1)]
    assert "not run yet: host-gone" in (tmp_path / "out/summary.txt").read_text()
    tables = (tmp_path / "out/cover-tables.txt").read_text()
    assert "  Topology: LLCs " in tables and "  hackbench -g 1 " in tables
    assert not (tmp_path / "results").exists()
    as_it_was(before)
