from pathlib import Path

from idlesteal import topology, vm


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
