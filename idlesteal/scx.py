"""sched_ext schedulers for the guest, built from source.

The kernel's own example (tools/sched_ext: scx_simple) and ours
(tools/scx_idlesteal: the series' policy as a BPF scheduler) are built with
the kernel tree's tools/sched_ext Makefile, against the BTF of the `scx`
variant's vmlinux, with Debian's clang-19; the Makefile also builds the
libbpf and bpftool they need from the same tree.  Our sources are copied
next to the kernel's examples first (untracked files in build/linux, which
the tree checks ignore).

veristat (the kernel tree's BPF verifier statistics tool,
tools/testing/selftests/bpf/veristat.c) is built next to them with the same
libbpf, a few seconds of gcc; it has to run where sched_ext is (the guest):
it loads each program of the BPF object through the verifier on its own.

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

from . import build, paths
from .util import HarnessError, Stopwatch, log, sha256_file

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

# "stats steals=1 failed=2 ... steal=on" (scx_idlesteal.c, print_stats())
_STATS_RE = re.compile(r"^(stats|final)((?: \w+=\d+)+) steal=(on|off)$")


def out_dir(variant: str = VARIANT) -> Path:
    return paths.build_dir() / f"scx-{variant}"


def binary(name: str, variant: str = VARIANT) -> Path:
    return out_dir(variant) / "build" / "bin" / name


def build_schedulers(variant: str = VARIANT, names: tuple[str, ...] = SCHEDULERS,
                     verbose: bool = False) -> dict[str, Path]:
    """Build the schedulers against variant's vmlinux; name -> binary."""
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
    src = paths.tree_dir() / "tools" / "sched_ext"
    unknown = [n for n in names if n not in SCHEDULERS]
    if unknown:
        raise HarnessError(f"unknown scheduler(s) {', '.join(unknown)}; known: "
                           f"{', '.join(SCHEDULERS)}")
    for name in names:
        if name in OWN:
            for f in (f"{name}.bpf.c", f"{name}.c"):
                shutil.copy2(OWN_DIR / f, src / f)
    out = out_dir(variant)
    out.mkdir(parents=True, exist_ok=True)
    jobs = build.default_jobs()
    cmd = ["make", "-C", str(src), f"O={out}", f"-j{jobs}", f"CLANG={CLANG}",
           f"VMLINUX_BTF={vmlinux}", f"c-sched-targets={' '.join(SCHEDULERS)}", *names]
    sw = Stopwatch()
    log(f"building {', '.join(names)} against {vmlinux} ({CLANG}), log {out}/build.log")
    build.run_make(cmd, build.make_env(), out / "build.log", verbose)
    bins = {n: binary(n, variant) for n in names}
    for n, b in bins.items():
        if not b.exists():
            raise HarnessError(f"{b} was not built (log: {out}/build.log)")
    if "scx_idlesteal" in names:
        build_veristat(variant)
    log(f"sched_ext schedulers ready in {sw.elapsed():.0f} s: {out}/build/bin")
    return bins


VERISTAT_SRC = Path("tools") / "testing" / "selftests" / "bpf" / "veristat.c"
# The BPF object the loader's skeleton embeds (tools/sched_ext/Makefile:
# bpftool gen object, three times, then gen skeleton from linked3).
BPF_OBJECT_SUFFIX = ".bpf.linked3.o"


def bpf_object(name: str = "scx_idlesteal", variant: str = VARIANT) -> Path:
    return out_dir(variant) / "build" / "obj" / "sched_ext" / f"{name}{BPF_OBJECT_SUFFIX}"


def veristat_binary(variant: str = VARIANT) -> Path:
    return out_dir(variant) / "veristat" / "veristat"


def build_veristat(variant: str = VARIANT) -> Path:
    """veristat from the kernel tree, linked with the libbpf that the
    schedulers' build made (build_schedulers() first); skipped when newer
    than both."""
    tree = paths.tree_dir()
    src = tree / VERISTAT_SRC
    build_dir = out_dir(variant) / "build"
    libbpf = build_dir / "obj" / "libbpf" / "libbpf.a"
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
    return hashlib.sha256("".join(sha256_file(OWN_DIR / f) for f in
                                  ("scx_idlesteal.bpf.c", "scx_idlesteal.c")).encode()).hexdigest()
