"""Where a hung guest's vCPUs are: QEMU's QMP monitor, asked before the kill.

Every run's QEMU listens on a QMP socket (qmp_args()).  When a run times
out, vm asks it for `info registers -a` and, for each vCPU that is not
halted, walks its frame pointers (the guest configs keep
CONFIG_FRAME_POINTER) through guest memory; the instruction pointers are
named with the System.map of the kernel that was booted.  snapshot()
writes it all to vcpus.txt in the run directory and returns a one-line
summary for the error message: whether every vCPU sat halted (a task is
waiting for something nobody will do: a lost wakeup, a lost IPI) or some
were running (a livelock or a CPU spinning with interrupts off), and where.
"""
from __future__ import annotations

import bisect
import json
import re
import socket
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

VCPUS_FILE = "vcpus.txt"
# Frames walked per running vCPU; kernel stacks are rarely deeper where it matters.
MAX_FRAMES = 12
# Below this, an address is a user-space one (x86-64 and arm64, 48-bit VA).
USER_TOP = 1 << 47


def qmp_args(sock: Path) -> list[str]:
    return ["-qmp", f"unix:{sock},server=on,wait=off"]


@dataclass
class Vcpu:
    index: int
    pc: int
    halted: bool | None                # None: QEMU does not say (arm64)
    fp: int = 0                        # RBP (x86-64) or X29 (arm64)
    frames: list[int] = field(default_factory=list)   # return addresses


_CPU_RE = re.compile(r"^CPU#(\d+)", re.M)
_X86_RE = re.compile(r"RBP=([0-9a-f]{16}).*?RIP=([0-9a-f]{16}).*?HLT=(\d)", re.S)
_ARM_PC_RE = re.compile(r"PC=([0-9a-f]{16})")
_ARM_FP_RE = re.compile(r"X29=([0-9a-f]{16})")
_MEM_RE = re.compile(r"^[0-9a-f]+:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)", re.M)


def parse_registers(text: str) -> list[Vcpu]:
    """The vCPUs of `info registers -a` (x86-64: RIP, RBP, HLT; arm64: PC,
    X29, and no word on whether the vCPU sits in WFI)."""
    text = text.replace("\r", "")
    starts = [(int(m.group(1)), m.start()) for m in _CPU_RE.finditer(text)]
    out = []
    for k, (idx, start) in enumerate(starts):
        end = starts[k + 1][1] if k + 1 < len(starts) else len(text)
        block = text[start:end]
        if m := _X86_RE.search(block):
            out.append(Vcpu(idx, int(m.group(2), 16), m.group(3) == "1", int(m.group(1), 16)))
        elif pc := _ARM_PC_RE.search(block):
            fp = _ARM_FP_RE.search(block)
            out.append(Vcpu(idx, int(pc.group(1), 16), None, int(fp.group(1), 16) if fp else 0))
    return out


def parse_frame(text: str) -> tuple[int, int] | None:
    """`x /2gx FP`'s answer: (the caller's frame pointer, return address)."""
    m = _MEM_RE.search(text.replace("\r", ""))
    return (int(m.group(1), 16), int(m.group(2), 16)) if m else None


class SymbolMap:
    """A System.map's text symbols, for naming addresses as sym+0xoff."""

    def __init__(self, text: str) -> None:
        syms = []
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                syms.append((int(parts[0], 16), parts[2]))
        syms.sort()
        self._addrs = [a for a, _ in syms]
        self._names = [n for _, n in syms]

    def name(self, addr: int) -> str:
        i = bisect.bisect_right(self._addrs, addr) - 1
        if i < 0 or not self._addrs:
            return f"{addr:#x}" + (" (user space)" if addr < USER_TOP else "")
        return f"{self._names[i]}+{addr - self._addrs[i]:#x}"

    def has(self, addr: int) -> bool:
        return bool(self._addrs) and self._addrs[0] <= addr <= self._addrs[-1] + 0x10000

    @classmethod
    def near(cls, kernel: Path) -> SymbolMap | None:
        """The System.map of the build that made `kernel` (bzImage or Image
        under arch/*/boot/, or a copy beside it)."""
        for d in list(kernel.parents)[:4]:     # boot, x86, arch, the build dir
            f = d / "System.map"
            if f.is_file():
                return cls(f.read_text(errors="replace"))
        return None


class Qmp:
    """A QMP session on a unix socket: human-monitor-command is all we send."""

    def __init__(self, sock: Path, timeout: float = 20) -> None:
        self._s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._s.settimeout(timeout)
        self._s.connect(str(sock))
        self._buf = b""
        self._reply()                                    # the greeting
        self._call({"execute": "qmp_capabilities"})

    def _reply(self) -> dict:
        while True:
            while b"\n" not in self._buf:
                chunk = self._s.recv(1 << 16)
                if not chunk:
                    raise OSError("QMP socket closed")
                self._buf += chunk
            line, self._buf = self._buf.split(b"\n", 1)
            msg = json.loads(line)
            if "event" not in msg:                        # events come unasked
                return msg

    def _call(self, cmd: dict) -> dict:
        self._s.sendall(json.dumps(cmd).encode() + b"\n")
        return self._reply()

    def hmp(self, command: str, cpu: int | None = None) -> str:
        args: dict = {"command-line": command}
        if cpu is not None:
            args["cpu-index"] = cpu
        r = self._call({"execute": "human-monitor-command", "arguments": args})
        if "error" in r:
            raise OSError(f"QMP {command!r}: {r['error'].get('desc', r['error'])}")
        return str(r.get("return", ""))

    def close(self) -> None:
        self._s.close()


def walk(qmp: Qmp, cpu: Vcpu, syms: SymbolMap | None) -> None:
    """Fill cpu.frames by following saved frame pointers (8-aligned, growing
    upwards, each return address a kernel text address)."""
    fp = cpu.fp
    for _ in range(MAX_FRAMES):
        if fp == 0 or fp % 8:
            return
        fr = parse_frame(qmp.hmp(f"x /2gx {fp:#x}", cpu=cpu.index))
        if fr is None:
            return
        nxt, ret = fr
        if syms is not None and not syms.has(ret):
            return
        cpu.frames.append(ret)
        if nxt <= fp:
            return
        fp = nxt


def summarize(cpus: list[Vcpu], syms: SymbolMap | None) -> str:
    """One line: halted vCPUs counted by where they sit, running ones named."""
    if not cpus:
        return "no vCPU state read"
    name = _namer(syms)
    if any(c.halted is None for c in cpus):     # arm64: where they are, by place
        at = Counter(name(c.pc).split("+")[0] for c in cpus)
        return ("vCPUs at the timeout (halt state not reported): "
                + "; ".join(f"{n} at {where}" for where, n in at.most_common(4)))
    halted = Counter(name(c.pc).split("+")[0] for c in cpus if c.halted)
    running = [c for c in cpus if not c.halted]
    top = halted.most_common(3)
    parts = [f"{n} halted in {where}" for where, n in top]
    if len(halted) > 3:
        parts.append(f"{sum(halted.values()) - sum(n for _, n in top)} halted elsewhere")
    for c in running[:4]:
        parts.append(f"CPU {c.index} running at {name(c.pc)}")
    if len(running) > 4:
        parts.append(f"{len(running) - 4} more running")
    verdict = ("all halted: a lost wakeup or IPI" if not running
               else f"{len(running)} of {len(cpus)} running")
    return f"vCPUs at the timeout ({verdict}): " + "; ".join(parts)


def _namer(syms: SymbolMap | None) -> Callable[[int], str]:
    return syms.name if syms else (lambda a: f"{a:#x}")


def report(cpus: list[Vcpu], syms: SymbolMap | None) -> str:
    name = _namer(syms)
    state = {True: "halted", False: "running", None: "at"}
    lines = [summarize(cpus, syms), ""]
    for c in cpus:
        lines.append(f"CPU {c.index}: {state[c.halted]} {'at ' if c.halted is not None else ''}"
                     f"{name(c.pc)}")
        lines += [f"    {name(r)}" for r in c.frames]
    return "\n".join(lines) + "\n"


def snapshot(sock: Path, run_dir: Path, kernel: Path) -> str:
    """Ask the QEMU behind `sock` where its vCPUs are; write vcpus.txt (and
    the raw registers) to `run_dir`; return the summary line.  Never raises:
    a failure to ask is the summary."""
    try:
        qmp = Qmp(sock)
    except (OSError, ValueError) as e:
        return f"vCPU state not read (QMP: {e})"
    try:
        regs = qmp.hmp("info registers -a")
        (run_dir / "registers.txt").write_text(regs.replace("\r", ""))
        cpus = parse_registers(regs)
        syms = SymbolMap.near(kernel)
        for c in cpus:
            if c.halted is not True:
                walk(qmp, c, syms)
        (run_dir / VCPUS_FILE).write_text(report(cpus, syms))
        return summarize(cpus, syms) + f" ({run_dir / VCPUS_FILE})"
    except (OSError, ValueError) as e:
        return f"vCPU state not read (QMP: {e})"
    finally:
        qmp.close()
