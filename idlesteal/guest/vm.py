"""Boot the guest under QEMU (TCG), run one script, collect its output.

Every run gets build/runs/<run-id>/ with the console log (ttyS0), the script
output (ttyS1), the script, the initrd and the QEMU command line.  Guest
failures are raised as GuestError subclasses naming the console log.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

from . import image, monitor, tracepins
from .. import paths
from ..kernel import provenance
from ..util import HarnessError, log

QEMU = "qemu-system-x86_64"
RUN_META = "run.json"
# A staged run directory's boot script and the record it writes of the
# machine it booted on (stage()).
BOOT_SCRIPT = "boot.sh"
BOOTED_ON = "booted-on.txt"


class Machine(Protocol):
    """What vm needs of a guest machine.  topology.Preset (x86-64, QEMU -smp
    topologies) and asym.AsymPreset (arm64 with big and little cores) are
    the two; both are booted, checked and reported the same way."""
    qemu: ClassVar[str]        # the QEMU binary

    @property
    def name(self) -> str: ...

    @property
    def boot_timeout(self) -> int:
        """Seconds until the guest must be running /run.sh."""
        ...

    @property
    def ncpus(self) -> int: ...

    @property
    def check_script(self) -> str:
        """Guest shell lines whose output verify() reads."""
        ...

    def qemu_command(self, kernel: Path, initrd: Path, console: Path, out: Path,
                     cmdline: list[str]) -> list[str]:
        """The whole QEMU command line: console log to `console`, the
        script's output (image.parse_output's markers) to `out`."""
        ...

    def verify(self, text: str) -> object:
        """Raise a HarnessError unless the check_script output matches."""
        ...

    def describe(self) -> str: ...


KERNEL_ERROR_RE = re.compile(
    r"(Kernel panic|BUG: |Oops: |WARNING: |general protection fault|"
    r"KASAN: |UBSAN: |Unable to handle kernel|RCU detected stall|"
    r"INFO: task .* blocked for more than|possible circular locking|"
    r"inconsistent lock state|suspicious RCU usage|kernel BUG at|"
    # Debug-kernel reports (configs/debug.config) that do not always carry
    # one of the prefixes above: lockup / stall detectors, lockdep, debugobjects.
    r"soft lockup|hard LOCKUP|INFO: rcu_|detected stalls? on CPU|rcu_.*self-detected stall|"
    r"possible recursive locking|possible irq lock inversion|bad unlock balance|"
    r"INFO: lockdep is turned off|ODEBUG: |list_(?:add|del) corruption)")


class GuestError(HarnessError):
    """A guest run failed; `console` is the kept console log."""

    def __init__(self, msg: str, console: Path, run_dir: Path) -> None:
        super().__init__(f"{msg}\n  console log: {console}")
        self.console = console
        self.run_dir = run_dir


class GuestKernelError(GuestError):
    pass


class GuestScriptError(GuestError):
    pass


class GuestNoOutput(GuestError):
    pass


class GuestTimeout(GuestError):
    pass


class GuestBootTimeout(GuestTimeout):
    """The guest never reached /run.sh; `vcpus` is monitor.snapshot()'s line."""

    def __init__(self, msg: str, console: Path, run_dir: Path, vcpus: str) -> None:
        super().__init__(f"{msg}\n  {vcpus}", console, run_dir)
        self.vcpus = vcpus


# A virtio-9p share's mount tag (QEMU: at most 31 bytes).
_TAG = re.compile(r"^[A-Za-z0-9_]{1,31}$")


@dataclass(frozen=True)
class Share:
    """A host directory the guest can mount read-only over virtio-9p:
    `mount -t 9p -o trans=virtio,version=9p2000.L,ro TAG /mnt` (the guest
    kernel needs configs/virtfs.config)."""
    path: Path
    tag: str

    def qemu_args(self) -> list[str]:
        if not _TAG.match(self.tag):
            raise HarnessError(f"9p mount tag {self.tag!r}: want 1-31 of A-Z a-z 0-9 _")
        if not self.path.is_dir():
            raise HarnessError(f"9p share {self.path}: not a directory")
        if "," in str(self.path):
            raise HarnessError(f"9p share {self.path}: a comma cannot be passed to -virtfs")
        return ["-virtfs", f"local,path={self.path},mount_tag={self.tag},"
                "security_model=none,readonly=on"]


class Staged(Exception):
    """Raised by run_script() under stage(): the run directory is written,
    nothing was booted.  Not a HarnessError: it is the command's result."""

    def __init__(self, run_dir: Path) -> None:
        super().__init__(f"staged {run_dir}")
        self.run_dir = run_dir


_staging = False


@contextmanager
def stage() -> Iterator[None]:
    """Inside, run_script() writes the run directory with the kernel and
    boot.sh beside the initrd and raises Staged instead of booting: the
    run is booted on another machine (`sh RUN_DIR/boot.sh`, needing only
    QEMU there) and read back here with `idlesteal collect RUN_DIR`
    (docs/harness.md, "A run booted elsewhere")."""
    global _staging
    old, _staging = _staging, True
    try:
        yield
    finally:
        _staging = old


def boot_script(cmd: list[str]) -> str:
    """The staged run's boot.sh: QEMU from PATH (QEMU_DATADIR, when set,
    its firmware directory: -L), every path relative to the run directory,
    the machine it ran on recorded in booted-on.txt before and after."""
    return f"""#!/bin/sh
# Boots this staged run (idlesteal/guest/vm.py stage()); then, on the machine
# that staged it: python3 -m idlesteal collect THIS_DIRECTORY
cd "$(dirname "$0")" || exit 1
rm -f console.log output.log
host() {{
    echo "$1: $(uname -srm), $(nproc) CPUs online, loadavg $(cat /proc/loadavg)"
}}
{{ host before; {shlex.quote(cmd[0])} --version | head -1; }} >{BOOTED_ON}
{shlex.join(cmd)} ${{QEMU_DATADIR:+-L "$QEMU_DATADIR"}} </dev/null >qemu.log 2>&1
rc=$?
host after >>{BOOTED_ON}
echo "qemu exit status $rc" >>{BOOTED_ON}
exit $rc
"""


@dataclass
class RunResult:
    run_dir: Path
    console: Path
    output: image.GuestOutput
    boot_seconds: float
    seconds: float
    # run dirs of boots that died of a TCG stale-code trap and were booted again
    retried: tuple[Path, ...] = ()

    @property
    def sections(self) -> dict[str, str]:
        return self.output.sections


def qemu_version(machine: Machine | None = None) -> str:
    return provenance.qemu_version(machine.qemu if machine else QEMU)


def new_run_dir(name: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = paths.runs_dir() / f"{stamp}-{name}"
    base.parent.mkdir(parents=True, exist_ok=True)
    d, i = base, 1
    while True:      # mkdir is the test: two harnesses in the same second
        try:
            d.mkdir()
            return d
        except FileExistsError:
            i += 1
            d = base.with_name(f"{base.name}.{i}")


def kernel_errors(console_text: str, tolerate: re.Pattern[str] | None = None) -> list[str]:
    """Console lines that report a kernel error, except those matching
    `tolerate` (a KCSAN run collects its data-race reports instead)."""
    return [l.strip() for l in console_text.splitlines()
            if KERNEL_ERROR_RE.search(l) and not (tolerate and tolerate.search(l))]


# "Code: 48 89 de e8 <ab> 80 ..." — the bytes around the faulting RIP, the
# one at RIP in <>.  After an int3 trap RIP is one past the int3.
_CODE_RE = re.compile(r"Code: ((?:[0-9a-f]{2} )*)<([0-9a-f]{2})>")


def stale_code_trap(console_text: str) -> str | None:
    """The line of an `Oops: int3` whose int3 is no longer in memory, or None.

    Under multi-threaded TCG a vCPU can run translated code that another
    vCPU's text_poke_bp() has already replaced (docs/tcg.md): it traps on an
    int3 that poke_int3_handler() no longer knows, and the Oops's code dump,
    read from memory afterwards, shows the finished instruction where the
    int3 was.  On hardware the sync IPIs of text_poke_bp() rule that out, so
    this is the emulator's, not the kernel's.  Only the first Oops counts:
    one that follows another proves nothing."""
    lines = console_text.splitlines()
    for i, l in enumerate(lines):
        if "Oops: " not in l:
            continue
        if "Oops: int3" not in l:
            return None
        for m in (_CODE_RE.search(x) for x in lines[i + 1:i + 40]):
            if m:
                before = m.group(1).split()
                if before and before[-1] != "cc":
                    return l.strip()
                return None
        return None
    return None


def _tail(path: Path, n: int = 25) -> str:
    try:
        lines = path.read_text(errors="replace").replace("\r", "").splitlines()
    except OSError:
        return ""
    return "\n".join("    | " + l for l in lines[-n:])


def run_script(script: str, preset: Machine, kernel: Path, base_initrd: Path, *,
               timeout: float = 600, name: str = "run", cmdline: list[str] | None = None,
               quiet: bool = False, meta: dict | None = None,
               tolerate: re.Pattern[str] | None = None,
               shares: tuple[Share, ...] = (), boot_retries: int = 0) -> RunResult:
    """Boot `preset`, run `script` as /run.sh, return its output; raise
    GuestError.  `meta` is kept as run.json in the run directory; console
    lines matching `tolerate` are not kernel errors; `shares` are host
    directories the guest may mount read-only (Share).  A script that sets
    tracing up boots with the measure's tracepoints pinned (tracepins).

    A boot that dies of a TCG stale-code trap (stale_code_trap()) is booted
    once more; a boot that never reaches /run.sh is booted again up to
    `boot_retries` times (docs/tcg.md, "A boot that hangs").  Either is said
    on the log, in a note in both run directories and in RunResult.retried;
    the dead boot's run directory is kept.  Any other kernel error, a second
    trap, or one hang more than allowed is raised."""
    dead: list[tuple[Path, str]] = []       # (run directory, its note file)
    while True:
        try:
            res = _run_once(script, preset, kernel, base_initrd, timeout=timeout, name=name,
                            cmdline=cmdline, quiet=quiet, meta=meta, tolerate=tolerate,
                            shares=shares)
            break
        except GuestKernelError as e:
            trap = stale_code_trap(e.console.read_text(errors="replace"))
            if trap is None or any(f == STALE_NOTE for _, f in dead):
                raise
            log(f"  TCG stale-code trap ({trap}), not a kernel error (docs/tcg.md); "
                f"console kept at {e.console}; booting once more")
            dead.append(_note_dead_boot(e.run_dir, STALE_NOTE, trap))
        except GuestBootTimeout as e:
            hung = sum(f == HANG_NOTE for _, f in dead)
            if hung >= boot_retries:
                raise
            log(f"  boot hung ({e.vcpus}); run directory kept at {e.run_dir}; booting again "
                f"({hung + 1} of {boot_retries})")
            dead.append(_note_dead_boot(e.run_dir, HANG_NOTE, e.vcpus))
    for d, f in dead:
        with open(res.run_dir / f, "a") as fh:
            fh.write(f"a boot of this run {_DEAD_HOW[f]}: {d}\n")
    res.retried = tuple(d for d, _ in dead)
    return res


# The note a boot that was booted again leaves in its run directory and in
# that of the boot that replaced it, and what it says the boot did.
STALE_NOTE, HANG_NOTE = "stale-code-trap.txt", "boot-hang.txt"
_DEAD_HOW = {STALE_NOTE: "died of a TCG stale-code trap", HANG_NOTE: "hung before /run.sh"}


def _note_dead_boot(run_dir: Path, note: str, what: str) -> tuple[Path, str]:
    (run_dir / note).write_text(f"{what}\nbooted again: this boot {_DEAD_HOW[note]} "
                                "(docs/tcg.md)\n")
    return run_dir, note


def _stage(script: str, preset: Machine, kernel: Path, base_initrd: Path, *, name: str,
           cmdline: list[str] | None, meta: dict | None, shares: tuple[Share, ...]) -> None:
    """stage()'s run directory: run.sh, run.json, the initrd, the kernel
    (bzImage) and boot.sh; raises Staged."""
    if shares:
        raise HarnessError("a run with a host share (9p) cannot be staged: the share is "
                           "this machine's directory")
    rd = new_run_dir(f"{name}-{preset.name}")
    (rd / "run.sh").write_text(script)
    if meta is not None:
        (rd / RUN_META).write_text(json.dumps({**meta, "staged": True}, indent=2) + "\n")
    image.initrd_for_run(base_initrd, script, rd / "initrd.cpio.gz")
    shutil.copyfile(kernel, rd / "bzImage")
    cmd = preset.qemu_command(Path("bzImage"), Path("initrd.cpio.gz"), Path("console.log"),
                              Path("output.log"), tracepins.with_pins(script, cmdline or []))
    (rd / "qemu.cmd").write_text(shlex.join(cmd) + "\n")
    (rd / BOOT_SCRIPT).write_text(boot_script(cmd))
    (rd / BOOT_SCRIPT).chmod(0o755)
    raise Staged(rd)


def hang_report_s(timeout: float) -> float:
    """When the guest prints its hang report: seconds after the script
    starts, 30 s (a tenth of a short timeout) before the harness's timeout,
    so that it is on the console when the guest is killed."""
    return timeout - min(30.0, timeout / 10)


# The guest's hang report (helpers.sh hang_report, on the console).
HANG_PREFIX = "idlesteal-hang:"
HANG_REPORT = "hang-report.txt"


def hang_report(console: Path, run_dir: Path, show: int = 60) -> str:
    """The guest's hang report from the console, kept as hang-report.txt in
    the run directory; its first `show` lines, for the error message."""
    try:
        text = console.read_text(errors="replace").replace("\r", "")
    except OSError:
        text = ""
    got = [l[l.index(HANG_PREFIX):] for l in text.splitlines() if HANG_PREFIX in l]
    if not got:
        return ("  no hang report on the console (the guest's real-time reporter did "
                "not run: interrupts off, or a kernel hang below the scheduler?)")
    (run_dir / HANG_REPORT).write_text("\n".join(got) + "\n")
    more = f"\n  ... {len(got) - show} lines more" if len(got) > show else ""
    return (f"  the guest's hang report ({run_dir / HANG_REPORT}):\n"
            + "\n".join("    | " + l for l in got[:show]) + more)


def _run_once(script: str, preset: Machine, kernel: Path, base_initrd: Path, *,
              timeout: float, name: str, cmdline: list[str] | None, quiet: bool,
              meta: dict | None, tolerate: re.Pattern[str] | None,
              shares: tuple[Share, ...] = ()) -> RunResult:
    if _staging:
        _stage(script, preset, kernel, base_initrd, name=name, cmdline=cmdline, meta=meta,
               shares=shares)
    if shutil.which(preset.qemu) is None:
        raise HarnessError(f"{preset.qemu} not found; run `make deps`")
    share_args = [a for sh in shares for a in sh.qemu_args()]
    rd = new_run_dir(f"{name}-{preset.name}")
    console, out = rd / "console.log", rd / "output.log"
    (rd / "run.sh").write_text(script)
    if meta is not None:   # what the run was, for `idlesteal collect RUN_DIR`
        (rd / RUN_META).write_text(json.dumps(meta, indent=2) + "\n")
    initrd = image.initrd_for_run(base_initrd, script, rd / "initrd.cpio.gz",
                                  hang_report_s(timeout))
    cmd = preset.qemu_command(kernel, initrd, console, out,
                              tracepins.with_pins(script, cmdline or [])) + share_args
    (rd / "qemu.cmd").write_text(shlex.join(cmd) + "\n")
    say = (lambda m: None) if quiet else log
    say(f"booting {preset.name} ({preset.ncpus} vCPUs, TCG) -> {rd}")
    # QMP, to ask a hung guest where its vCPUs are (monitor.snapshot): not in
    # qemu.cmd, whose reruns would find the socket's directory gone; the
    # socket lives outside the run directory, whose path may be too long.
    qmp_dir = Path(tempfile.mkdtemp(prefix="idlesteal-qmp-"))
    qmp_sock = qmp_dir / "qmp.sock"
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd + monitor.qmp_args(qmp_sock), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError:
        shutil.rmtree(qmp_dir, ignore_errors=True)
        raise
    boot_s = 0.0
    deadline = t0 + preset.boot_timeout + timeout
    next_note = t0 + 60
    try:
        while proc.poll() is None:
            time.sleep(0.25)
            now = time.monotonic()
            if not boot_s and console.exists() and \
                    b"idlesteal-init: running" in console.read_bytes():
                boot_s = now - t0
                say(f"  booted in {boot_s:.1f} s, running script")
                deadline = now + timeout
            if not boot_s and now - t0 > preset.boot_timeout:
                raise GuestBootTimeout(f"guest did not boot within {preset.boot_timeout} s",
                                       console, rd, monitor.snapshot(qmp_sock, rd, kernel))
            if now > deadline:
                raise GuestTimeout(f"guest script did not finish within {timeout:.0f} s\n  "
                                   + monitor.snapshot(qmp_sock, rd, kernel) + "\n"
                                   + hang_report(console, rd), console, rd)
            if now > next_note:
                next_note = now + 60
                say(f"  ... {now - t0:.0f} s")
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        shutil.rmtree(qmp_dir, ignore_errors=True)
    qemu_out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    (rd / "qemu.log").write_text(qemu_out)
    total = time.monotonic() - t0
    ctext = console.read_text(errors="replace") if console.exists() else ""
    errors = kernel_errors(ctext, tolerate)
    if errors:
        raise GuestKernelError("kernel reported errors:\n" + "\n".join(
            f"    {e}" for e in errors[:10]) + "\n" + _tail(console), console, rd)
    if proc.returncode != 0:
        raise GuestError(f"qemu exited with {proc.returncode}:\n{qemu_out.strip()[-2000:]}",
                         console, rd)
    raw = out.read_text(errors="replace") if out.exists() else ""
    parsed = image.parse_output(raw)
    if parsed is None:
        raise GuestNoOutput("guest output has no @@IDLESTEAL BEGIN/END markers "
                            "(init or script died?); console tail:\n" + _tail(console), console, rd)
    if parsed.rc != 0:
        raise GuestScriptError(f"guest script exited with rc={parsed.rc}; output tail:\n"
                               + _tail(out), console, rd)
    say(f"  done in {total:.1f} s")
    return RunResult(rd, console, parsed, boot_s, total)
