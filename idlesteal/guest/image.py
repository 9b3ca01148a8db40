"""The guest's initramfs.

base.cpio.gz holds busybox-static (with applet links), hackbench and its
shared libraries, the project's workloads (workloads/*.c, compiled static),
schbench (vendored, compiled static: schbench.py),
/init and the shell helpers.  Each run appends a second tiny gzip'd cpio with
/run.sh (the kernel unpacks concatenated archives in order).

The arm64 image (build_base("arm64"), for idlesteal/runs/asym.py) holds Debian's
arm64 busybox-static (applet links made by /init at boot: the host cannot
run the binary to list them) and the workloads cross-built statically; no
hackbench.  Its output port is the virtio console /dev/hvc0.

Guest protocol, on the second serial port (/dev/ttyS1; /dev/hvc0 on arm64):
    @@IDLESTEAL BEGIN@@
    ...output of /run.sh; `section NAME` starts a named section...
    @@IDLESTEAL END rc=<exit code>@@
"""
from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from . import cpio, schbench
from .. import paths
from . import read as guest_file
from ..util import HarnessError, log, output, run

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

# /init and the helpers /run.sh runs with (idlesteal/guest/*.sh).
INIT = guest_file("init.sh")

HELPERS = guest_file("helpers.sh")


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
    return parse_ldd(output(["ldd", binary], check=False))[0]


def parse_ldd(text: str) -> tuple[list[str], list[str]]:
    """ldd's output -> (absolute paths of the libraries and the loader, the
    names ldd reports 'not found')."""
    libs: list[str] = []
    missing: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if "=>" in line:
            target = line.split("=>", 1)[1].split("(")[0].strip()
            if target.startswith("/"):
                libs.append(target)
            elif target == "not found":
                missing.append(line.split("=>", 1)[0].strip())
        elif line.startswith("/"):
            libs.append(line.split()[0])
    return libs, missing


def compile_workloads(src_dir: Path | None = None, out_dir: Path | None = None,
                      cc: str = "gcc") -> list[Path]:
    """Compile workloads/*.c statically into workloads/out/ (when stale),
    and, for the project's workloads, schbench from vendor/ (schbench.py).

    `cc` is the compiler (aarch64-linux-gnu-gcc for the arm64 image)."""
    ours = src_dir is None
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
    if ours:
        outs.append(schbench.build(out_dir, cc))
    return outs


def workload_names() -> set[str]:
    """The programs compile_workloads() makes, by name."""
    return {p.stem for p in paths.workloads_dir().glob("*.c")} | {"schbench"}


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

    def merge(self, entries: Sequence[cpio.Entry], origin: str) -> None:
        """Add entries (parents before children) that must not silently lose
        to what is already there, as add() would: a directory may go into an
        existing one and an identical entry is skipped; anything else at a
        taken path, or under a path that is not a directory, is an error."""
        have = {e.name: e for e in self.entries}
        for e in entries:
            name = e.name.strip("/")
            parts = name.split("/")
            for i in range(1, len(parts)):
                parent = "/".join(parts[:i])
                if parent in self.names:
                    raise HarnessError(f"{origin}: /{name} would be under /{parent}, which "
                                       "is not a directory in the image")
            if stat.S_ISDIR(e.mode):
                if name in self.dirs:
                    continue
                if name in self.names:
                    raise HarnessError(f"{origin}: directory /{name} is a file in the image")
                self.mkdir(os.path.dirname(name))
                self.dirs.add(name)
            else:
                if name in self.dirs:
                    raise HarnessError(f"{origin}: /{name} is a directory in the image")
                if name in self.names:
                    old = have[name]
                    if (old.mode, old.data, old.rdev) == (e.mode, e.data, e.rdev):
                        continue
                    raise HarnessError(f"{origin}: /{name} is already in the image "
                                       "(give another GUEST path)")
                self.mkdir(os.path.dirname(name))
                self.names.add(name)
            new = cpio.Entry(name, e.mode, e.data, e.rdev)
            have[name] = new
            self.entries.append(new)


# Host files for the image (`--file HOST[:GUEST]`, suite `file` lines): a
# file or a directory tree (regular files, directories and symlinks, modes
# kept) at its guest path; the shared libraries of the ELF executables among
# them at their host paths, as for perf.  /usr/local/bin/<name> is the
# default place of an executable file, /opt/<name> of anything else.

# Guest directories /init mounts over: what the image puts there is hidden.
MOUNTED = ("/proc", "/sys", "/dev", "/tmp")


@dataclass(frozen=True)
class FileSpec:
    """A host file or directory and where it goes in the guest."""
    host: Path      # absolute (symlinks not resolved)
    guest: str      # absolute and normalized

    def __str__(self) -> str:
        return f"{self.host}:{self.guest}"


def default_guest_path(host: Path) -> str:
    """/usr/local/bin/<name> for an executable file, else /opt/<name>."""
    if host.is_file() and os.access(host, os.X_OK):
        return f"/usr/local/bin/{host.name}"
    return f"/opt/{host.name}"


def _host_path(text: str, base: Path | None) -> Path:
    p = Path(os.path.expanduser(text))
    return Path(os.path.abspath(p if p.is_absolute() else (base or Path.cwd()) / p))


def parse_file_spec(text: str, base: Path | None = None) -> FileSpec:
    """'HOST[:GUEST]' -> FileSpec.  HOST must exist (a file or directory,
    symlinks followed); a relative HOST is taken from `base` (default: the
    current directory).  The last ':' separates GUEST unless the whole text
    names an existing host path.  GUEST must be absolute, without '..', not
    '/' and not under a directory /init mounts over (MOUNTED)."""
    want = f"want HOST[:GUEST], got {text!r}"
    if not isinstance(text, str) or not text or "\0" in text or "\n" in text:
        raise HarnessError(f"bad file spec: {want}")
    host_text, guest = text, ""
    if ":" in text and not _host_path(text, base).exists():
        host_text, _, guest = text.rpartition(":")
        if not host_text or not guest:
            raise HarnessError(f"bad file spec: {want}")
    host = _host_path(host_text, base)
    if not host.exists():
        raise HarnessError(f"file spec {text!r}: no such host file or directory: {host}")
    if not (host.is_file() or host.is_dir()):
        raise HarnessError(f"file spec {text!r}: {host} is neither a regular file nor a "
                           "directory")
    if not guest:
        guest = default_guest_path(host)
    if not guest.startswith("/"):
        raise HarnessError(f"file spec {text!r}: the guest path {guest!r} must be absolute")
    if ".." in guest.split("/"):
        raise HarnessError(f"file spec {text!r}: the guest path {guest!r} must not use '..'")
    guest = "/" + posixpath.normpath(guest).lstrip("/")
    if guest == "/":
        raise HarnessError(f"file spec {text!r}: the guest path must not be / itself")
    for m in MOUNTED:
        if guest == m or guest.startswith(m + "/"):
            raise HarnessError(f"file spec {text!r}: {guest} is under {m}, which the guest's "
                               "/init mounts over")
    return FileSpec(host, guest)


def _is_elf_exe(path: Path, mode: int) -> bool:
    if not stat.S_ISREG(mode) or not mode & 0o111:
        return False
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def _spec_entries(spec: FileSpec) -> tuple[list[cpio.Entry], list[Path]]:
    """One spec's entries (parents first) and the ELF executables among them."""
    guest = spec.guest.strip("/")
    st = spec.host.stat()                      # follows a symlinked HOST
    exes: list[Path] = []
    if not spec.host.is_dir():
        if _is_elf_exe(spec.host, st.st_mode):
            exes.append(spec.host)
        return [cpio.Entry(guest, stat.S_IFREG | stat.S_IMODE(st.st_mode),
                           spec.host.read_bytes())], exes
    entries = [cpio.Entry(guest, stat.S_IFDIR | stat.S_IMODE(st.st_mode))]
    for root, dirs, names in os.walk(spec.host):   # symlinked subdirectories are not entered
        dirs.sort()
        rel = os.path.relpath(root, spec.host)
        for name in sorted(dirs + names):
            host = Path(root) / name
            name_in = posixpath.normpath(posixpath.join(guest, rel, name))
            lst = host.lstat()
            if stat.S_ISLNK(lst.st_mode):
                entries.append(cpio.symlink(name_in, os.readlink(host)))
            elif stat.S_ISDIR(lst.st_mode):
                entries.append(cpio.Entry(name_in, stat.S_IFDIR | stat.S_IMODE(lst.st_mode)))
            elif stat.S_ISREG(lst.st_mode):
                entries.append(cpio.Entry(name_in, stat.S_IFREG | stat.S_IMODE(lst.st_mode),
                                          host.read_bytes()))
                if _is_elf_exe(host, lst.st_mode):
                    exes.append(host)
            else:
                log(f"{spec}: skipping {host} (not a regular file, directory or symlink)")
    return entries, exes


def file_entries(files: Sequence[str | FileSpec], resolve_libs: bool = True) -> list[cpio.Entry]:
    """The archive entries for host files (FileSpec or 'HOST[:GUEST]'),
    parents first: each file or directory tree at its guest path, then, with
    `resolve_libs`, the shared libraries (and loader) of the dynamically
    linked ELF executables among them at their host paths (libraries inside
    a copied directory are already there).  Two specs claiming one guest
    path differently are an error; so is a library ldd cannot find for a
    program given as a file of its own (a warning for one in a directory)."""
    specs = [f if isinstance(f, FileSpec) else parse_file_spec(f) for f in files]
    t = _Tree()
    exes: list[tuple[FileSpec, Path]] = []
    for spec in specs:
        entries, elves = _spec_entries(spec)
        t.merge(entries, f"file {spec}")
        exes += [(spec, e) for e in elves]
    if exes and not resolve_libs:
        log("host files: shared libraries are not resolved for this image; "
            "use statically linked programs")
        return t.entries
    for spec, exe in exes:
        libs, missing = parse_ldd(output(["ldd", str(exe)], check=False))
        if missing:
            msg = f"file {spec}: ldd finds no {', '.join(missing)} for {exe}"
            if exe == spec.host:
                raise HarnessError(msg + "; the program could not start in the guest")
            log(f"warning: {msg}")
        inside = os.path.realpath(spec.host) + "/"
        for lib in libs:
            if not os.path.realpath(lib).startswith(inside):
                t.add_host_file(lib)
    return t.entries


def entries_digest(entries: Sequence[cpio.Entry]) -> str:
    """A short content hash of entries (names, modes, data)."""
    return hashlib.sha256(cpio.archive(list(entries))).hexdigest()[:12]


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


def base_entries(arch: str = "x86_64", tools: tuple[str, ...] = (),
                 files: Sequence[str | FileSpec] = (), *,
                 extra: Sequence[cpio.Entry] | None = None) -> list[cpio.Entry]:
    """The base image's entries; `files`: host files to add (file_entries()),
    or `extra`: their entries, already made.  They go in last, so a clash
    with anything else in the image is an error (_Tree.merge())."""
    if extra is None:
        extra = file_entries(files, resolve_libs=arch == "x86_64")
    if arch == "arm64":
        if tools:
            raise HarnessError(f"no {', '.join(tools)} for the arm64 image")
        return arm64_entries(extra)
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
    _finish(t, INIT)
    t.merge(extra, "host files")
    return t.entries


def arm64_entries(extra: Sequence[cpio.Entry] = ()) -> list[cpio.Entry]:
    """The arm64 image: Debian's arm64 busybox-static + cross-built workloads."""
    from ..kernel import cross
    busybox = cross.busybox()
    t = _skeleton(busybox.read_bytes())
    t.add(cpio.symlink("bin/sh", "/bin/busybox"))
    for exe in compile_workloads(out_dir=image_dir() / "workloads-arm64", cc=cross.cc()):
        t.add(cpio.file(f"usr/bin/{exe.name}", exe.read_bytes(), executable=True))
    _finish(t, init_script("/dev/hvc0", install_applets=True))
    t.merge(extra, "host files")
    return t.entries


def build_base(arch: str = "x86_64", tools: tuple[str, ...] = (),
               files: Sequence[str | FileSpec] = ()) -> Path:
    """Write build/image/base.cpio.gz (base-<arch>.cpio.gz for other
    architectures, base-<tool>-....cpio.gz with extra tools,
    ...-files-<hash>.cpio.gz with host files, the hash over their entries:
    guest paths, modes and content), only when its content changed."""
    tools = tuple(sorted(set(tools)))
    extra = file_entries(files, resolve_libs=arch == "x86_64")
    data = cpio.gzipped(base_entries(arch, tools, extra=extra))
    stem = "base" if arch == "x86_64" else f"base-{arch}"
    key = [f"files-{entries_digest(extra)}"] if extra else []
    path = image_dir() / ("-".join([stem, *tools, *key]) + ".cpio.gz")
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
        log(f"initramfs {path} ({len(data) >> 10} KiB)")
    return path


# Where init.sh finds when to print the hang report (seconds after the
# script starts); no file, no report.
HANG_REPORT_FILE = "etc/idlesteal/hang-report-s"


def run_archive(script: str, hang_report_s: float | None = None) -> bytes:
    """The run's own archive: /run.sh, and with `hang_report_s` the file
    that has init.sh print the hang report that many seconds after the
    script starts."""
    entries = [cpio.file("run.sh", script.encode(), executable=True)]
    if hang_report_s is not None:
        if not hang_report_s > 0:
            raise HarnessError(f"hang report time {hang_report_s} s: must be above 0")
        entries += [cpio.directory("etc"), cpio.directory("etc/idlesteal"),
                    cpio.file(HANG_REPORT_FILE, f"{hang_report_s:.1f}\n".encode())]
    return cpio.gzipped(entries)


def initrd_for_run(base: Path, script: str, dest: Path,
                   hang_report_s: float | None = None) -> Path:
    """base archive + a second archive holding /run.sh (run_archive()),
    concatenated."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "wb") as out, open(base, "rb") as inp:
        shutil.copyfileobj(inp, out)
        out.write(run_archive(script, hang_report_s))
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
