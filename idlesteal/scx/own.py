"""sched_ext schedulers for the guest, built from source.

The kernel's own example (tools/sched_ext: scx_simple) is built with the
kernel tree's tools/sched_ext Makefile, against the BTF of the `scx`
variant's vmlinux, with Debian's clang-19; the Makefile also builds the
libbpf and bpftool it needs from the same tree.

Ours (tools/scx_idlesteal: the series' policy as a BPF scheduler) has the
form the sched_ext community's schedulers have: a Rust user space on
scx_utils/libbpf-rs, built with cargo (`--locked`, crates.io at the
versions of the published peers, cargo's target directory shared with
them in the cache, and with every checkout: BUILT_STAMP), and a BPF side in C that scx_cargo compiles with the
sched_ext headers and vmlinux.h it ships (CO-RE: one binary for every
base).  The binary and its BPF object are copied where the variant's
schedulers go.

veristat (the kernel tree's BPF verifier statistics tool,
tools/testing/selftests/bpf/veristat.c) is built next to them with the
kernel tree's libbpf, a few seconds of gcc; it has to run where sched_ext
is (the guest): it loads each program of the BPF object through the
verifier on its own.

Guest side: the loader runs in the background, `/sys/kernel/sched_ext/state`
says whether a BPF scheduler is in charge and `root/ops` its name.
"""
from __future__ import annotations

import csv
import hashlib
import io
import re
import shutil
import subprocess
from pathlib import Path

from ..kernel import build
from .. import bases, paths
from . import peers
from ..util import HarnessError, Stopwatch, log, sha256_file, step

VARIANT = "scx"
CLANG = "clang-19"
OWN_DIR = paths.REPO / "tools" / "scx_idlesteal"
OWN = ("scx_idlesteal",)
KERNEL_EXAMPLES = ("scx_simple",)
SCHEDULERS = KERNEL_EXAMPLES + OWN
# Options the schedulers cannot load without (configs/scx.config has the rest).
REQUIRED = ("CONFIG_SCHED_CLASS_EXT", "CONFIG_DEBUG_INFO_BTF", "CONFIG_BPF_SYSCALL")

STATE = "/sys/kernel/sched_ext/state"
OPS = "/sys/kernel/sched_ext/root/ops"

# What sched_ext prints when it ejects a scheduler for an error, the
# watchdog's stall among them (scx_log_sched_disable(), scx_exit_reason());
# an unload says "unregistered from user space", a hotplug restart "... from
# the main kernel".  The name is anything between the quotes: the published
# schedulers register as NAME_VERSION_TARGET ("p2dq_1.1.4_x86_64_unknown_
# linux_gnu"), dots included; a sub-scheduler is named so by 7.2.
EJECTED = re.compile(r"sched_ext: BPF (?:sub-)?scheduler \"([^\"\n]+)\" disabled "
                     r"\((runtime error|scx_bpf_error|runnable task stall)\)")

# "stats steals=1 failed=2 ... steal=on" (tools/scx_idlesteal/src/main.rs, print_stats())
_STATS_RE = re.compile(r"^(stats|final)((?: \w+=\d+)+) steal=(on|off)$")


def out_dir(variant: str = VARIANT) -> Path:
    return paths.build_dir() / f"scx-{variant}"


def binary(name: str, variant: str = VARIANT) -> Path:
    return out_dir(variant) / "build" / "bin" / name


def build_schedulers(variant: str = VARIANT, names: tuple[str, ...] = SCHEDULERS,
                     verbose: bool = False) -> dict[str, Path]:
    """Build the schedulers for variant; name -> binary."""
    with step(f"schedulers {bases.current().name} {variant}"):
        return _build_schedulers(variant, names, verbose)


def _build_schedulers(variant: str, names: tuple[str, ...], verbose: bool) -> dict[str, Path]:
    obj = paths.obj_dir(variant)
    vmlinux = obj / "vmlinux"
    if not vmlinux.exists():
        raise HarnessError(f"{vmlinux} does not exist; build the kernel first "
                           f"(`python3 -m idlesteal kernel --variant {variant}`)")
    missing = [o for o in REQUIRED if not build.config_enabled(variant, o)]
    if missing:
        raise HarnessError(f"variant {variant} lacks {', '.join(missing)}: "
                           "sched_ext schedulers cannot load there (configs/scx.config)")
    if shutil.which(CLANG) is None:
        raise HarnessError(f"{CLANG} not found; run `make deps` (Debian package clang-19)")
    unknown = [n for n in names if n not in SCHEDULERS]
    if unknown:
        raise HarnessError(f"unknown scheduler(s) {', '.join(unknown)}; known: "
                           f"{', '.join(SCHEDULERS)}")
    out = out_dir(variant)
    out.mkdir(parents=True, exist_ok=True)
    sw = Stopwatch()
    examples = [n for n in names if n in KERNEL_EXAMPLES]
    # veristat links the kernel tree's libbpf, which the same Makefile builds.
    targets = examples + ([str(libbpf_archive(variant))] if "scx_idlesteal" in names else [])
    if targets:
        src = paths.tree_dir() / "tools" / "sched_ext"
        cmd = ["make", "-C", str(src), f"O={out}", f"-j{build.default_jobs()}", f"CLANG={CLANG}",
               f"VMLINUX_BTF={vmlinux}", f"c-sched-targets={' '.join(KERNEL_EXAMPLES)}",
               *targets]
        log(f"building {', '.join(examples) or 'libbpf'} against {vmlinux} ({CLANG}), "
            f"log {out}/build.log")
        build.run_make(cmd, build.make_env(), out / "build.log", verbose)
    if "scx_idlesteal" in names:
        build_own(variant, verbose)
        build_veristat(variant)
    bins = {n: binary(n, variant) for n in names}
    for n, b in bins.items():
        if not b.exists():
            raise HarnessError(f"{b} was not built (log: {out}/build.log)")
    log(f"sched_ext schedulers ready in {sw.elapsed():.0f} s: {out}/build/bin")
    return bins


# Which checkout and sources cargo's shared target directory last built
# scx_idlesteal from.  cargo keeps one fingerprint per package name and
# version whatever its path, and judges it by mtime: a checkout whose
# sources are older than another checkout's last build (a clone built after
# an edit here) would be taken as built and get that checkout's binary.
BUILT_STAMP = "scx_idlesteal.built-from"


def built_from(path: Path, digest: str) -> str:
    """The stamp text for a build of the sources at path with that digest."""
    return f"{path} {digest}\n"


def mark_sources_changed() -> None:
    """Make cargo rebuild scx_idlesteal: its sources newer than any build."""
    for f in SOURCES:
        (OWN_DIR / f).touch()


def build_own(variant: str = VARIANT, verbose: bool = False) -> Path:
    """scx_idlesteal with cargo (tools/scx_idlesteal/Cargo.toml, --locked),
    its binary and BPF object copied where the variant's schedulers go."""
    exe, env = peers.toolchain()
    env["BPF_CLANG"] = str(peers.CLANG_DIR / "clang")
    target = peers.target_dir()
    target.mkdir(parents=True, exist_ok=True)
    stamp = target / BUILT_STAMP
    want = built_from(OWN_DIR, source_digest())
    if not stamp.exists() or stamp.read_text() != want:
        mark_sources_changed()
    logfile = out_dir(variant) / "build-scx_idlesteal.log"
    logfile.parent.mkdir(parents=True, exist_ok=True)
    log(f"cargo build scx_idlesteal (target dir {target}), log {logfile}")
    build.run_make([str(exe), "build", "--release", "--locked", "--manifest-path",
                    str(OWN_DIR / "Cargo.toml"), "--target-dir", str(target)],
                   env, logfile, verbose, step=peers.COMPILING)
    built = target / "release" / "scx_idlesteal"
    objs = sorted((target / "release" / "build").glob("scx_idlesteal-*/out/bpf.bpf.o"),
                  key=lambda p: p.stat().st_mtime)
    if not built.exists() or not objs:
        raise HarnessError(f"cargo built no scx_idlesteal or no BPF object (log: {logfile})")
    stamp.write_text(want)
    dest = binary("scx_idlesteal", variant)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, dest)
    bpf_object(variant=variant).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(objs[-1], bpf_object(variant=variant))
    return dest


VERISTAT_SRC = Path("tools") / "testing" / "selftests" / "bpf" / "veristat.c"


def bpf_object(name: str = "scx_idlesteal", variant: str = VARIANT) -> Path:
    """The BPF object the loader embeds (scx_cargo's link of its .bpf.c)."""
    return out_dir(variant) / "build" / "obj" / "sched_ext" / f"{name}.bpf.o"


def libbpf_archive(variant: str = VARIANT) -> Path:
    return out_dir(variant) / "build" / "obj" / "libbpf" / "libbpf.a"


def veristat_binary(variant: str = VARIANT) -> Path:
    return out_dir(variant) / "veristat" / "veristat"


def build_veristat(variant: str = VARIANT) -> Path:
    """veristat from the kernel tree, linked with the libbpf that the
    schedulers' build made (build_schedulers() first); skipped when newer
    than both."""
    tree = paths.tree_dir()
    src = tree / VERISTAT_SRC
    build_dir = out_dir(variant) / "build"
    libbpf = libbpf_archive(variant)
    for need in (src, libbpf):
        if not need.exists():
            raise HarnessError(f"{need} does not exist (prepare the tree; build the "
                               "schedulers first: `python3 -m idlesteal scx --no-kernel`)")
    out = veristat_binary(variant)
    if out.exists() and out.stat().st_mtime >= max(src.stat().st_mtime, libbpf.stat().st_mtime):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["gcc", "-O2", "-Wno-format-truncation", f"-I{build_dir / 'include'}",
           f"-I{tree / 'tools' / 'include'}", f"-I{tree / 'tools' / 'include' / 'uapi'}",
           "-o", str(out), str(src), str(libbpf), "-lelf", "-lz", "-lm", "-lpthread"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise HarnessError(f"veristat did not build: {' '.join(cmd)}\n{res.stderr[-2000:]}")
    log(f"veristat ready: {out}")
    return out


def parse_veristat(text: str) -> list[dict[str, str]]:
    """veristat's CSV output (-o csv) -> one row per program, by column name
    (file_name, prog_name, verdict, total_insns, total_states, ...); lines
    before the header (libbpf's messages) are skipped."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("file_name,")), None)
    if start is None:
        raise HarnessError("no veristat CSV header (file_name,...) in its output")
    rows = []
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        if row.get("prog_name"):
            rows.append(dict(row))
    return rows


def image_files(bins: dict[str, Path]) -> list[str]:
    """image.build_base(files=...) specs: each binary in /usr/bin."""
    return [f"{path}:/usr/bin/{name}" for name, path in bins.items()]


def parse_stats(text: str) -> list[dict[str, int | str]]:
    """scx_idlesteal's "stats"/"final" lines -> [{"kind", counters..., "steal"}]."""
    out: list[dict[str, int | str]] = []
    for line in text.splitlines():
        m = _STATS_RE.match(line.strip())
        if not m:
            continue
        row: dict[str, int | str] = {"kind": m.group(1), "steal": m.group(3)}
        for word in m.group(2).split():
            k, _, v = word.partition("=")
            row[k] = int(v)
        out.append(row)
    return out


def final_stats(text: str) -> dict[str, int | str]:
    """The last "final" line of a loader's output (printed when it unloads)."""
    finals = [r for r in parse_stats(text) if r["kind"] == "final"]
    if not finals:
        raise HarnessError("no final stats line from scx_idlesteal (did it unload?)")
    return finals[-1]


def source_digest() -> str:
    """sha256 over scx_idlesteal's sources (what a result was measured with)."""
    return hashlib.sha256("".join(sha256_file(OWN_DIR / f) for f in SOURCES).encode()).hexdigest()


# What scx_idlesteal is built from (source_digest()).
SOURCES = ("src/bpf/main.bpf.c", "src/bpf/intf.h", "Cargo.toml", "Cargo.lock", "build.rs",
           "src/main.rs", "src/stats.rs", "src/topo.rs", "src/bpf_skel.rs", "src/bpf_intf.rs")
