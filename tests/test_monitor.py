"""monitor: reading a hung guest's vCPUs from QEMU's QMP socket."""
from __future__ import annotations

import json
import socket
import tempfile
import threading
from pathlib import Path

from idlesteal.guest import monitor

DATA = Path(__file__).parent / "data"

SYSTEM_MAP = """\
ffffffff81000000 T _stext
ffffffff816e64d0 T pv_native_safe_halt
ffffffff816e6500 t default_idle
ffffffff81100000 T try_to_wake_up
ffffffff81100800 T wake_up_process
ffffffff81200000 T kthread_create_on_node
ffffffff81a00000 D some_data
ffffffff81300000 T _etext
"""


def test_parse_registers_x86_from_qemu():
    """QEMU 7.2's own output: CPU 0 halted in the kernel, CPU 1 in user space."""
    cpus = monitor.parse_registers((DATA / "registers-x86.txt").read_text())
    assert [(c.index, c.halted) for c in cpus] == [(0, True), (1, False)]
    assert cpus[0].pc == 0xffffffff816e64e7
    assert cpus[1].pc == 0x527839


def test_parse_registers_arm64_has_no_halt_state():
    cpus = monitor.parse_registers((DATA / "registers-arm64.txt").read_text())
    assert [(c.index, c.pc, c.halted) for c in cpus] == [(0, 0x200, None), (1, 0, None)]


def test_symbol_map_names_text_and_user_addresses():
    syms = monitor.SymbolMap(SYSTEM_MAP)
    assert syms.name(0xffffffff816e64e7) == "pv_native_safe_halt+0x17"
    assert syms.name(0xffffffff81100804) == "wake_up_process+0x4"
    assert syms.name(0x527839) == "0x527839 (user space)"
    assert syms.has(0xffffffff81200010)
    assert not syms.has(0x527839)


def test_symbol_map_near_a_bzimage(tmp_path):
    boot = tmp_path / "arch" / "x86" / "boot"
    boot.mkdir(parents=True)
    (boot / "bzImage").write_bytes(b"")
    assert monitor.SymbolMap.near(boot / "bzImage") is None
    (tmp_path / "System.map").write_text(SYSTEM_MAP)
    found = monitor.SymbolMap.near(boot / "bzImage")
    assert found is not None and found.name(0xffffffff81200000) == "kthread_create_on_node+0x0"


def test_summary_tells_a_lost_wakeup_from_a_spinning_cpu():
    syms = monitor.SymbolMap(SYSTEM_MAP)
    idle = [monitor.Vcpu(i, 0xffffffff816e64e7, True) for i in range(4)]
    assert monitor.summarize(idle, syms) == (
        "vCPUs at the timeout (all halted: a lost wakeup or IPI): "
        "4 halted in pv_native_safe_halt")
    spin = idle[:3] + [monitor.Vcpu(3, 0xffffffff81100010, False)]
    assert monitor.summarize(spin, syms) == (
        "vCPUs at the timeout (1 of 4 running): 3 halted in pv_native_safe_halt; "
        "CPU 3 running at try_to_wake_up+0x10")
    assert monitor.summarize([], syms) == "no vCPU state read"


def _fake_qmp(sock: Path, registers: str, memory: dict[int, tuple[int, int]],
              seen: list[dict]) -> threading.Thread:
    """A one-connection QMP server: greeting, capabilities, then
    `info registers -a` and `x /2gx ADDR` answered from `memory`."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(sock))
    srv.listen(1)

    def serve() -> None:
        conn, _ = srv.accept()
        f = conn.makefile("rwb")
        f.write(b'{"QMP": {"version": {}, "capabilities": []}}\r\n')
        f.flush()
        for line in f:
            req = json.loads(line)
            seen.append(req)
            if req["execute"] == "qmp_capabilities":
                ans: object = {}
            else:
                cmd = req["arguments"]["command-line"]
                if cmd == "info registers -a":
                    ans = registers
                else:
                    addr = int(cmd.split()[-1], 16)
                    a, b = memory.get(addr, (0, 0))
                    ans = f"{addr:016x}: 0x{a:016x} 0x{b:016x}\r\n"
            f.write(b'{"event": "NOISE"}\r\n')            # events come unasked
            f.write(json.dumps({"return": ans}).encode() + b"\r\n")
            f.flush()
        conn.close()
        srv.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def test_snapshot_walks_the_frames_of_running_vcpus_only(tmp_path):
    regs = """CPU#0
RAX=0 RBX=0 RCX=0 RDX=0
RSI=0 RDI=0 RBP=ffa0000000013e00 RSP=ffa0000000013df0
RIP=ffffffff81100010 RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=0
CPU#1
RAX=0 RBX=0 RCX=0 RDX=0
RSI=0 RDI=0 RBP=ffa0000000023e00 RSP=ffa0000000023df0
RIP=ffffffff816e64e7 RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1
"""
    memory = {0xffa0000000013e00: (0xffa0000000013e40, 0xffffffff81100808),
              0xffa0000000013e40: (0xffa0000000013e80, 0xffffffff81200020),
              0xffa0000000013e80: (0x0000000000000000, 0x0000000000401000)}
    (tmp_path / "System.map").write_text(SYSTEM_MAP)
    kernel = tmp_path / "bzImage"
    kernel.write_bytes(b"")
    with tempfile.TemporaryDirectory(prefix="qmp-") as d:
        sock = Path(d) / "s"
        seen: list[dict] = []
        t = _fake_qmp(sock, regs, memory, seen)
        line = monitor.snapshot(sock, tmp_path, kernel)
        t.join(5)
    assert line.startswith("vCPUs at the timeout (1 of 2 running): 1 halted in "
                           "pv_native_safe_halt; CPU 0 running at try_to_wake_up+0x10")
    text = (tmp_path / monitor.VCPUS_FILE).read_text()
    assert "CPU 0: running at try_to_wake_up+0x10\n    wake_up_process+0x8\n" \
           "    kthread_create_on_node+0x20\nCPU 1: halted at pv_native_safe_halt+0x17\n" in text
    # Only the running vCPU's memory was read, with its own CPU selected; the
    # walk stopped at the user-space return address.
    reads = [r["arguments"] for r in seen if r["execute"] == "human-monitor-command"
             and r["arguments"]["command-line"].startswith("x ")]
    assert {r["cpu-index"] for r in reads} == {0}
    assert len(reads) == 3
    assert (tmp_path / "registers.txt").read_text() == regs


def test_snapshot_without_a_monitor_says_so(tmp_path):
    line = monitor.snapshot(tmp_path / "nothing.sock", tmp_path, tmp_path / "bzImage")
    assert line.startswith("vCPU state not read (QMP: ")
    assert not (tmp_path / monitor.VCPUS_FILE).exists()
