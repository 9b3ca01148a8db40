"""The guest's initramfs.

base.cpio.gz holds busybox-static (with applet links), hackbench and its
shared libraries, the project's workloads (workloads/*.c, compiled static),
/init and the shell helpers.  Each run appends a second tiny gzip'd cpio with
/run.sh (the kernel unpacks concatenated archives in order).

The arm64 image (build_base("arm64"), for idlesteal/asym.py) holds Debian's
arm64 busybox-static (applet links made by /init at boot: the host cannot
run the binary to list them) and the workloads cross-built statically; no
hackbench.  Its output port is the virtio console /dev/hvc0.

Guest protocol, on the second serial port (/dev/ttyS1; /dev/hvc0 on arm64):
    @@IDLESTEAL BEGIN@@
    ...output of /run.sh; `section NAME` starts a named section...
    @@IDLESTEAL END rc=<exit code>@@
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from . import cpio, paths
from .util import HarnessError, log, output, run

BUSYBOX = "/bin/busybox"
HACKBENCH = "/usr/bin/hackbench"
# Optional host programs for benchmark images (with their shared libraries):
# name -> (host path, Debian package).  They add ~30 MB, so only the images
# that need them carry them (base-<tools>.cpio.gz).
TOOLS: dict[str, tuple[str, str]] = {
    "perf": ("/usr/bin/perf", "linux-perf"),
    "sysbench": ("/usr/bin/sysbench", "sysbench"),
}

BEGIN = "@@IDLESTEAL BEGIN@@"
END_RE = re.compile(r"^@@IDLESTEAL END rc=(-?\d+)@@\s*$", re.M)
SECTION_RE = re.compile(r"^@@SECTION (\S+)@@\s*$")

INIT = r"""#!/bin/sh
# idlesteal guest init: mount, run /run.sh with output on ttyS1, power off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/pts /dev/shm
mount -t tmpfs tmpfs /dev/shm
out=/dev/ttyS1
stty -F $out raw -echo 2>/dev/null
echo "idlesteal-init: running /run.sh" > /dev/console
{
    echo "@@IDLESTEAL BEGIN@@"
    if [ -f /run.sh ]; then
        /bin/sh -c '. /lib/idlesteal.sh; . /run.sh' < /dev/null
        rc=$?
    else
        echo "idlesteal-init: no /run.sh in the initramfs"
        rc=127
    fi
    echo "@@IDLESTEAL END rc=$rc@@"
} > $out 2>&1
echo "idlesteal-init: done" > /dev/console
sync
reboot -f
sleep 5
poweroff -f
"""

HELPERS = r"""# idlesteal helper functions, sourced before /run.sh.
# section NAME: the following output belongs to section NAME.
section() { echo "@@SECTION $1@@"; }
# fail MSG: print MSG and exit non-zero.
fail() { echo "idlesteal: FAIL: $*"; exit 1; }
# set_features WORD...: write each word to sched/features, then verify.
set_features() {
    for f in "$@"; do
        echo "$f" > /sys/kernel/debug/sched/features || fail "cannot set sched feature $f"
    done
    for f in "$@"; do
        grep -qw "$f" /sys/kernel/debug/sched/features || fail "feature $f did not stick"
    done
}
"""


def init_script(out_dev: str = "/dev/ttyS1", install_applets: bool = False) -> str:
    """INIT with another output device; optionally create busybox's applet
    links first (/bin/sh must already be in the archive)."""
    text = INIT.replace("out=/dev/ttyS1", f"out={out_dev}")
    if install_applets:
        text = text.replace("export PATH=", "/bin/busybox --install -s 2>/dev/null\nexport PATH=", 1)
    return text


def image_dir() -> Path:
    return paths.build_dir() / "image"


def shared_libs(binary: str) -> list[str]:
    """Absolute paths of the shared libraries (and loader) a binary needs."""
    text = output(["ldd", binary], check=False)
    libs = []
    for line in text.splitlines():
        line = line.strip()
        if "=>" in line:
            target = line.split("=>", 1)[1].split("(")[0].strip()
            if target.startswith("/"):
                libs.append(target)
        elif line.startswith("/"):
            libs.append(line.split()[0])
    return libs


def compile_workloads(src_dir: Path | None = None, out_dir: Path | None = None,
                      cc: str = "gcc") -> list[Path]:
    """Compile workloads/*.c statically into workloads/out/ (when stale).

    `cc` is the compiler (aarch64-linux-gnu-gcc for the arm64 image)."""
    src_dir = src_dir or paths.workloads_dir()
    out_dir = out_dir or src_dir / "out"
    sources = sorted(src_dir.glob("*.c"))
    if not sources:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    outs = []
    for src in sources:
        exe = out_dir / src.stem
        if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
            log(f"compiling workload {src.name}")
            run([cc, "-O2", "-static", "-pthread", "-Wall", "-o", str(exe), str(src)],
                capture=True)
        outs.append(exe)
    return outs


class _Tree:
    """Collects archive entries, creating parent directories on the way."""

    def __init__(self) -> None:
        self.entries: list[cpio.Entry] = []
        self.dirs: set[str] = set()
        self.names: set[str] = set()

    def mkdir(self, path: str) -> None:
        path = path.strip("/")
        if not path or path in self.dirs:
            return
        self.mkdir(os.path.dirname(path))
        self.dirs.add(path)
        self.entries.append(cpio.directory(path))

    def add(self, entry: cpio.Entry) -> None:
        name = entry.name.strip("/")
        if name in self.names or name in self.dirs:
            return
        self.mkdir(os.path.dirname(name))
        entry.name = name
        self.names.add(name)
        self.entries.append(entry)

    def add_host_file(self, host: str, guest: str | None = None) -> None:
        """Copy a host file; a symlinked path becomes a link to its real file."""
        guest = guest or host
        real = os.path.realpath(host)
        if real != host and os.path.islink(host):
            self.add_host_file(real)
            self.add(cpio.symlink(guest, real))
            return
        data = Path(real).read_bytes()
        self.add(cpio.file(guest, data, executable=os.access(real, os.X_OK)))


def _skeleton(busybox: bytes) -> _Tree:
    """Directories, device nodes and busybox: what every image starts with."""
    t = _Tree()
    for d in ["bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "run",
              "etc", "root", "lib", "mnt"]:
        t.mkdir(d)
    t.add(cpio.chardev("dev/console", 5, 1))
    t.add(cpio.chardev("dev/null", 1, 3))
    t.add(cpio.file("bin/busybox", busybox, executable=True))
    return t


def _finish(t: _Tree, init: str) -> list[cpio.Entry]:
    """/init, the shell helpers and a root user: what every image ends with."""
    t.add(cpio.file("init", init.encode(), executable=True))
    t.add(cpio.file("lib/idlesteal.sh", HELPERS.encode()))
    t.add(cpio.file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n"))
    t.add(cpio.file("etc/group", b"root:x:0:\n"))
    return t.entries


def base_entries(arch: str = "x86_64", tools: tuple[str, ...] = ()) -> list[cpio.Entry]:
    if arch == "arm64":
        if tools:
            raise HarnessError(f"no {', '.join(tools)} for the arm64 image")
        return arm64_entries()
    if arch != "x86_64":
        raise HarnessError(f"no initramfs recipe for architecture {arch!r}")
    for tool in (BUSYBOX, HACKBENCH):
        if not Path(tool).exists():
            raise HarnessError(f"{tool} is missing; run `make deps` (busybox-static, rt-tests)")
    t = _skeleton(Path(BUSYBOX).read_bytes())
    for applet in output([BUSYBOX, "--list-full"]).split():
        if applet.strip("/") != "bin/busybox":
            t.add(cpio.symlink(applet, "/bin/busybox"))
    t.add_host_file(HACKBENCH, "usr/bin/hackbench")
    for lib in shared_libs(HACKBENCH):
        t.add_host_file(lib)
    for exe in compile_workloads():
        t.add(cpio.file(f"usr/bin/{exe.name}", exe.read_bytes(), executable=True))
    for name in tools:
        if name not in TOOLS:
            raise HarnessError(f"unknown image tool {name!r}; known: {', '.join(TOOLS)}")
        host, pkg = TOOLS[name]
        if not Path(host).exists():
            raise HarnessError(f"{host} is missing; run `make deps` (Debian package {pkg})")
        t.add_host_file(host, f"usr/bin/{name}")
        for lib in shared_libs(host):
            t.add_host_file(lib)
    return _finish(t, INIT)


def arm64_entries() -> list[cpio.Entry]:
    """The arm64 image: Debian's arm64 busybox-static + cross-built workloads."""
    from . import cross
    busybox = cross.busybox()
    t = _skeleton(busybox.read_bytes())
    t.add(cpio.symlink("bin/sh", "/bin/busybox"))
    for exe in compile_workloads(out_dir=image_dir() / "workloads-arm64", cc=cross.cc()):
        t.add(cpio.file(f"usr/bin/{exe.name}", exe.read_bytes(), executable=True))
    return _finish(t, init_script("/dev/hvc0", install_applets=True))


def build_base(arch: str = "x86_64", tools: tuple[str, ...] = ()) -> Path:
    """Write build/image/base.cpio.gz (base-<arch>.cpio.gz for other
    architectures, base-<tool>-....cpio.gz with extra tools), only when its
    content changed."""
    tools = tuple(sorted(set(tools)))
    data = cpio.gzipped(base_entries(arch, tools))
    stem = "base" if arch == "x86_64" else f"base-{arch}"
    path = image_dir() / ("-".join([stem, *tools]) + ".cpio.gz")
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
        log(f"initramfs {path} ({len(data) >> 10} KiB)")
    return path


def run_archive(script: str) -> bytes:
    return cpio.gzipped([cpio.file("run.sh", script.encode(), executable=True)])


def initrd_for_run(base: Path, script: str, dest: Path) -> Path:
    """base archive + a second archive holding /run.sh, concatenated."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "wb") as out, open(base, "rb") as inp:
        shutil.copyfileobj(inp, out)
        out.write(run_archive(script))
    return dest


class GuestOutput:
    """The parsed ttyS1 stream: rc and named sections."""

    def __init__(self, rc: int, sections: dict[str, str], text: str) -> None:
        self.rc = rc
        self.sections = sections
        self.text = text

    def __getitem__(self, name: str) -> str:
        return self.sections[name]


def parse_output(raw: str) -> GuestOutput | None:
    """Parse the ttyS1 text; None when the BEGIN or END marker is missing."""
    text = raw.replace("\r\n", "\n").replace("\r", "")
    start = text.find(BEGIN + "\n")
    if start < 0:
        return None
    body = text[start + len(BEGIN) + 1:]
    m = END_RE.search(body)
    if not m:
        return None
    rc = int(m.group(1))
    body = body[:m.start()]
    sections: dict[str, list[str]] = {}
    current = ""
    sections[current] = []
    for line in body.splitlines():
        sm = SECTION_RE.match(line)
        if sm:
            current = sm.group(1)
            sections.setdefault(current, [])
            continue
        sections[current].append(line)
    joined = {k: "\n".join(v) + ("\n" if v else "") for k, v in sections.items()}
    return GuestOutput(rc, joined, body)
