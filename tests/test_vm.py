from pathlib import Path

import pytest

from idlesteal.guest import topology, vm
from idlesteal.util import HarnessError


def test_kernel_errors_are_recognized():
    console = "\n".join([
        "[    0.5] smp: Brought up 1 node, 8 CPUs",
        "[    1.0] Oops: general protection fault, probably for non-canonical address",
        "[    1.1] BUG: kernel NULL pointer dereference, address: 0000000000000008",
        "[    1.2] WARNING: CPU: 3 PID: 1 at kernel/sched/fair.c:123 foo+0x1/0x2",
        "[    1.3] Kernel panic - not syncing: Fatal exception",
        "[    1.4] WARNING: possible circular locking dependency detected",
    ])
    errs = vm.kernel_errors(console)
    assert len(errs) == 5 and not any("Brought up" in e for e in errs)
    assert vm.kernel_errors("[ 0.1] Linux version 7.2.13\n[ 0.2] Run /init as init process\n") == []


def test_qemu_command_line():
    p = topology.get("2x2x2")
    cmd = p.qemu_command(Path("/k"), Path("/i"), Path("/c.log"), Path("/o.log"), ["foo=1"])
    assert cmd[0] == "qemu-system-x86_64"
    assert cmd[cmd.index("-accel") + 1] == "tcg,thread=multi"
    assert cmd[cmd.index("-smp") + 1] == "8,sockets=2,dies=1,cores=2,threads=2"
    append = cmd[cmd.index("-append") + 1]
    assert "console=ttyS0" in append and "schedstats=enable" in append and "foo=1" in append
    serials = [cmd[i + 1] for i, x in enumerate(cmd) if x == "-serial"]
    assert serials == ["file:/c.log", "file:/o.log"]
    assert "-no-reboot" in cmd


STALE = (Path(__file__).parent / "data" / "tcg-stale-int3-console.txt").read_text()


def test_stale_code_trap_is_recognized():
    # The boot that failed make test (2026-11-25): the int3 at
    # ttwu_do_activate+0x140 is a call again in memory.
    assert vm.stale_code_trap(STALE) == "[    2.696835] Oops: int3: 0000 [#1] SMP"


def test_stale_code_trap_needs_the_int3_gone():
    still_there = STALE.replace("48 89 de e8 <ab>", "48 89 de cc <ab>")
    assert vm.stale_code_trap(still_there) is None


def test_stale_code_trap_only_the_first_oops():
    gpf = "[    1.0] Oops: general protection fault, probably for non-canonical address\n"
    assert vm.stale_code_trap(gpf + STALE) is None
    assert vm.stale_code_trap(STALE.replace("Code: ", "Kode: ")) is None
    assert vm.stale_code_trap("[    1.0] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x1/0x2\n") is None


def _fake_runs(monkeypatch, tmp_path, consoles):
    """vm._run_once that fails with each console in turn, then succeeds."""
    calls = []

    def fake(*a, **kw):
        rd = tmp_path / f"run{len(calls)}"
        rd.mkdir()
        calls.append(rd)
        if len(calls) <= len(consoles):
            (rd / "console.log").write_text(consoles[len(calls) - 1])
            raise vm.GuestKernelError("kernel reported errors", rd / "console.log", rd)
        return vm.RunResult(rd, rd / "console.log", None, 1.0, 2.0)   # type: ignore[arg-type]
    monkeypatch.setattr(vm, "_run_once", fake)
    return calls


def test_run_script_boots_again_after_a_stale_code_trap(monkeypatch, tmp_path):
    calls = _fake_runs(monkeypatch, tmp_path, [STALE])
    res = vm.run_script("true", None, Path("k"), Path("i"))   # type: ignore[arg-type]
    assert len(calls) == 2 and res.retried == (calls[0],)
    assert "stale-code trap" in (calls[0] / "stale-code-trap.txt").read_text()
    assert str(calls[0]) in (calls[1] / "stale-code-trap.txt").read_text()


def test_run_script_raises_other_errors_and_a_second_trap(monkeypatch, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _fake_runs(monkeypatch, tmp_path / "a", ["[    1.0] BUG: kernel NULL pointer dereference\n"])
    with pytest.raises(vm.GuestKernelError):
        vm.run_script("true", None, Path("k"), Path("i"))   # type: ignore[arg-type]
    calls = _fake_runs(monkeypatch, tmp_path / "b", [STALE, STALE])
    with pytest.raises(vm.GuestKernelError):
        vm.run_script("true", None, Path("k"), Path("i"))   # type: ignore[arg-type]
    assert len(calls) == 2


def _hanging_runs(monkeypatch, tmp_path, outcomes):
    """vm._run_once that, per call, hangs at boot ("hang"), dies of a
    stale-code trap ("trap"), or succeeds ("ok")."""
    calls = []

    def fake(*a, **kw):
        rd = tmp_path / f"run{len(calls)}"
        rd.mkdir()
        calls.append(rd)
        what = outcomes[len(calls) - 1]
        if what == "hang":
            raise vm.GuestBootTimeout("guest did not boot within 600 s", rd / "console.log", rd,
                                      "vCPUs at the timeout (all halted: a lost wakeup or IPI)")
        if what == "trap":
            (rd / "console.log").write_text(STALE)
            raise vm.GuestKernelError("kernel reported errors", rd / "console.log", rd)
        return vm.RunResult(rd, rd / "console.log", None, 1.0, 2.0)   # type: ignore[arg-type]
    monkeypatch.setattr(vm, "_run_once", fake)
    return calls


def test_a_hung_boot_is_raised_unless_retries_are_asked_for(monkeypatch, tmp_path):
    (tmp_path / "a").mkdir()
    _hanging_runs(monkeypatch, tmp_path / "a", ["hang", "ok"])
    with pytest.raises(vm.GuestBootTimeout, match="all halted"):
        vm.run_script("true", None, Path("k"), Path("i"))   # type: ignore[arg-type]


def test_a_hung_boot_is_booted_again_and_said(monkeypatch, tmp_path):
    calls = _hanging_runs(monkeypatch, tmp_path, ["hang", "trap", "ok"])
    res = vm.run_script("true", None, Path("k"), Path("i"), boot_retries=1)  # type: ignore[arg-type]
    assert res.retried == (calls[0], calls[1]) and res.run_dir == calls[2]
    assert "all halted" in (calls[0] / "boot-hang.txt").read_text()
    assert str(calls[0]) in (calls[2] / "boot-hang.txt").read_text()
    assert str(calls[1]) in (calls[2] / "stale-code-trap.txt").read_text()


def test_one_hang_more_than_allowed_is_raised(monkeypatch, tmp_path):
    calls = _hanging_runs(monkeypatch, tmp_path, ["hang", "hang", "ok"])
    with pytest.raises(vm.GuestBootTimeout):
        vm.run_script("true", None, Path("k"), Path("i"), boot_retries=1)  # type: ignore[arg-type]
    assert len(calls) == 2


def test_a_9p_share_is_read_only_and_checked(tmp_path):
    args = vm.Share(tmp_path, "hostroot").qemu_args()
    assert args == ["-virtfs", f"local,path={tmp_path},mount_tag=hostroot,"
                               "security_model=none,readonly=on"]
    for tag in ("", "a-b", "x" * 32, "a,b"):
        with pytest.raises(HarnessError, match="mount tag"):
            vm.Share(tmp_path, tag).qemu_args()
    with pytest.raises(HarnessError, match="not a directory"):
        vm.Share(tmp_path / "nope", "t").qemu_args()
    comma = tmp_path / "a,b"
    comma.mkdir()
    with pytest.raises(HarnessError, match="comma"):
        vm.Share(comma, "t").qemu_args()


def test_new_run_dir_never_hands_out_a_directory_twice(tmp_path, monkeypatch):
    """Two harnesses starting in the same second (two make targets at once)
    each get a directory of their own: a name taken between the check and
    the mkdir is skipped, not raised."""
    monkeypatch.setattr(vm.paths, "runs_dir", lambda: tmp_path / "runs")
    monkeypatch.setattr(vm.time, "strftime", lambda fmt: "20261127-194548")
    got = [vm.new_run_dir("topo-8llc") for _ in range(3)]
    assert [d.name for d in got] == ["20261127-194548-topo-8llc", "20261127-194548-topo-8llc.2",
                                     "20261127-194548-topo-8llc.3"]
    real_mkdir = Path.mkdir

    def racing_mkdir(self, *a, **kw):          # another process wins .4 first
        if self.name.endswith(".4") and not self.exists():
            real_mkdir(self)
        return real_mkdir(self, *a, **kw)
    monkeypatch.setattr(Path, "mkdir", racing_mkdir)
    assert vm.new_run_dir("topo-8llc").name == "20261127-194548-topo-8llc.5"


def test_hang_report_time_is_before_the_timeout():
    assert vm.hang_report_s(600) == 570 and vm.hang_report_s(20) == 18
    assert 0 < vm.hang_report_s(1) < 1


def test_hang_report_is_taken_from_the_console(tmp_path):
    console = tmp_path / "console.log"
    console.write_text("[   60.1] smpboot: CPU 7 is now offline\r\n"
                       "idlesteal-hang: report at 570.02 s uptime, sched_ext enabled idlesteal\r\n"
                       "[   61.0] x idlesteal-hang: task 9 (scx_idlesteal) of 9 (scx_idlesteal) "
                       "state S cpu 3\n"
                       "idlesteal-hang:     [<0>] bpf_struct_ops_map_link_dealloc+0x1/0x2\n"
                       "idlesteal-hang: end\n")
    msg = vm.hang_report(console, tmp_path, show=3)
    kept = (tmp_path / vm.HANG_REPORT).read_text().splitlines()
    assert kept[0].startswith("idlesteal-hang: report at 570.02") and len(kept) == 4
    assert kept[1].startswith("idlesteal-hang: task 9 (scx_idlesteal)")   # line noise cut
    assert "| idlesteal-hang: task 9" in msg and "1 lines more" in msg
    console.write_text("[   60.1] smpboot: CPU 7 is now offline\n")
    assert "no hang report" in vm.hang_report(console, tmp_path / "none")
    assert not (tmp_path / "none").exists()
