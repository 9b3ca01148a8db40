"""Kernel builds: tinyconfig + the variant's fragments, checked, then
`make bzImage` with ccache in build/obj-<variant>.

Variants are listed in configs/variants ("name: fragment fragment ..."); a
base other than the default has a file of its own (bases.Base.variants,
e.g. configs/variants.6.12: the variants that build without the series).
A word "@target" names a make config target the variant starts from instead
of tinyconfig (e.g. "@defconfig @kvm_guest.config" for the reference kernel
the guest config is compared against).  The word "%base" builds the variant
from the `base` tag (Debian's 7.2 without the series) in a worktree of its
own, build/base/linux, with objects in build/base/obj-<variant>: the same
relative layout as build/linux and build/obj-<variant>, so ccache hits
every file the series does not change.  The word "%series" builds the
posted series alone, build/linux's HEAD without the patches of
patches/separate/ on top (tree.trailing_separate()), in build/posted/linux
and build/posted/obj-<variant>: what "the series with STEAL off" costs
against the base kernel, without the measurement-only patches.
The .config is regenerated on every build but only replaced when its
content changed, so a rebuild with nothing changed is just make's walk.

Architectures: x86_64 (native, bzImage) is the default; a variant whose
fragments include arm64*.config is cross-built for arm64 (Image) with
Debian's gcc-aarch64-linux-gnu (see ARCHES and arch_of()).
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .. import bases, paths
from . import kconfig, pahole, tree
from ..util import HarnessError, Stopwatch, log, run, step

VARIANTS_FILE = "variants"

# Per architecture: extra make variables, the compiler behind ccache, the
# image target and where it ends up in the obj dir.
ARCHES: dict[str, dict] = {
    "x86_64": {"make": [], "cc": "gcc", "target": "bzImage",
               "image": "arch/x86/boot/bzImage"},
    "arm64": {"make": ["ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-"],
              "cc": "aarch64-linux-gnu-gcc", "target": "Image",
              "image": "arch/arm64/boot/Image"},
}
DEFAULT_ARCH = "x86_64"
_NOTEWORTHY = re.compile(r"\b(error|warning):|\*\*\*")


def variants_file() -> Path:
    """configs/variants, or the selected base's own list."""
    return paths.configs_dir() / bases.current().variants


def _variant_words() -> dict[str, list[str]]:
    f = variants_file()
    out: dict[str, list[str]] = {}
    for line in f.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, words = line.partition(":")
        out[name.strip()] = words.split()
    return out


def variants() -> dict[str, list[Path]]:
    """name -> fragment paths, from configs/variants."""
    return {name: [paths.configs_dir() / w for w in words if w[0] not in "@%"]
            for name, words in _variant_words().items()}


BASE_WORD = "%base"
SERIES_WORD = "%series"


def from_base(variant: str) -> bool:
    """Is the variant built from the base tag, without the series?"""
    return BASE_WORD in _variant_words().get(variant, [])


def series_only(variant: str) -> bool:
    """Is the variant built from the series without patches/separate/?"""
    return SERIES_WORD in _variant_words().get(variant, [])


def base_tree() -> Path:
    return paths.build_dir() / "base" / "linux"


def posted_tree() -> Path:
    return paths.build_dir() / "posted" / "linux"


def obj_for(variant: str) -> Path:
    """Where a variant's objects go (build/base/obj-V for %base variants,
    build/posted/obj-V for %series ones)."""
    if from_base(variant):
        return base_tree().parent / f"obj-{variant}"
    if series_only(variant):
        return posted_tree().parent / f"obj-{variant}"
    return paths.obj_dir(variant)


def posted_rev() -> str:
    """build/linux's HEAD less the separate patches on top of the series."""
    k = tree.trailing_separate()
    return f"HEAD~{k}" if k else "HEAD"


def tree_for(variant: str) -> Path:
    """The source a variant builds from: build/linux (base + series) or,
    for %base variants, a worktree at the base tag, for %series ones a
    worktree at the last patch of the series proper."""
    if from_base(variant) and series_only(variant):
        raise HarnessError(f"variant {variant}: {BASE_WORD} and {SERIES_WORD} exclude each other")
    if from_base(variant):
        return tree.worktree(base_tree(), tree.BASE_TAG)
    if series_only(variant):
        return tree.worktree(posted_tree(), posted_rev())
    return paths.tree_dir()


def base_targets(variant: str) -> list[str]:
    """The make config targets a variant starts from (default: tinyconfig)."""
    words = _variant_words().get(variant, [])
    return [w[1:] for w in words if w.startswith("@")] or ["tinyconfig"]


def fragments_for(variant: str) -> list[Path]:
    vs = variants()
    if variant not in vs:
        raise HarnessError(f"unknown kernel variant {variant!r}; known: {', '.join(vs)} "
                           f"(see configs/{variants_file().name}, base {bases.current().name})")
    frags = vs[variant]
    missing = [str(f) for f in frags if not f.exists()]
    if missing:
        raise HarnessError(f"variant {variant}: missing fragment(s) {', '.join(missing)}")
    return frags


def arch_of(variant: str) -> str:
    """arm64 for variants built from an arm64*.config fragment, else x86_64."""
    try:
        frags = variants().get(variant, [])
    except OSError:
        frags = []
    return "arm64" if any(f.name.startswith("arm64") for f in frags) else DEFAULT_ARCH


def _arch(arch: str) -> dict:
    if arch not in ARCHES:
        raise HarnessError(f"unknown architecture {arch!r}; known: {', '.join(ARCHES)}")
    return ARCHES[arch]


def make_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("CCACHE_DIR", str(paths.cache_dir() / "ccache"))
    env.setdefault("CCACHE_MAXSIZE", "8G")
    env.setdefault("CCACHE_BASEDIR", str(paths.build_dir()))
    env.setdefault("CCACHE_NOHASHDIR", "1")
    # Fixed build identity: reproducible version strings, better ccache hits.
    env.setdefault("KBUILD_BUILD_USER", "idlesteal")
    env.setdefault("KBUILD_BUILD_HOST", "idlesteal")
    env.setdefault("KBUILD_BUILD_TIMESTAMP", "1970-01-01")
    return env


def default_jobs() -> int:
    """make -j: IDLESTEAL_JOBS, else one more than the CPUs."""
    env = os.environ.get("IDLESTEAL_JOBS", "")
    return int(env) if env.isdigit() and int(env) > 0 else (os.cpu_count() or 1) + 1


def make_cmd(src: Path, obj: Path, *targets: str, jobs: int | None = None,
             arch: str = DEFAULT_ARCH) -> list[str]:
    jobs = jobs or default_jobs()
    a = _arch(arch)
    return ["make", "-C", str(src), f"O={obj}", f"-j{jobs}", *a["make"],
            f"CC=ccache {a['cc']}", *targets]


@contextmanager
def build_lock() -> Iterator[None]:
    """Only one harness kernel build at a time on this machine."""
    lock = paths.cache_dir() / "build.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log("another idlesteal kernel build is running; waiting for it")
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def configure(src: Path, obj: Path, fragments: list[Path], arch: str = DEFAULT_ARCH,
              base: tuple[str, ...] = ("tinyconfig",), make_vars: tuple[str, ...] = ()) -> bool:
    """Write obj/.config from `base` (make targets) + fragments; check it.
    `make_vars` (e.g. PAHOLE=...) go to every make call: Kconfig reads the
    tool versions.

    Returns True if .config changed."""
    obj.mkdir(parents=True, exist_ok=True)
    cfg = obj / ".config"
    old = cfg.read_bytes() if cfg.exists() else None
    old_stat = cfg.stat() if cfg.exists() else None
    env = make_env()
    run(make_cmd(src, obj, *make_vars, *base, jobs=1, arch=arch), capture=True, env=env)
    run([str(src / "scripts/kconfig/merge_config.sh"), "-m", "-O", str(obj), str(cfg),
         *map(str, fragments)], cwd=obj, capture=True, env=env)
    run(make_cmd(src, obj, *make_vars, "olddefconfig", jobs=1, arch=arch), capture=True,
        env=env)
    kconfig.check_files(fragments, cfg)
    new = cfg.read_bytes()
    if old is not None and new == old and old_stat is not None:
        os.utime(cfg, ns=(old_stat.st_atime_ns, old_stat.st_mtime_ns))
        return False
    return True


def run_make(cmd: list[str], env: dict[str, str], logfile: Path, verbose: bool,
             step: re.Pattern[str] | None = None) -> None:
    """Run make (any build: kernel, tools; or cargo), log everything, show a
    progress line every few seconds; HarnessError with the log's tail on
    failure.  `step`: what a build step's line looks like (default: kbuild's
    "  CC      kernel/sched/fair.o")."""
    sw = Stopwatch()
    steps = 0
    last = ""
    shown = 0.0
    with open(logfile, "w") as lf:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1)
        assert proc.stdout is not None
        for line in proc.stdout:
            lf.write(line)
            if verbose:
                sys.stderr.write(line)
            stripped = line.strip()
            if (step.match(stripped) if step is not None else
                    stripped[:4].strip().isupper() and len(stripped.split()) == 2):
                steps += 1
                last = stripped
            if _NOTEWORTHY.search(line):
                sys.stderr.write(line)
            now = sw.elapsed()
            if not verbose and now - shown >= 10:
                shown = now
                lf.flush()
                log(f"  ... {int(now)}s, {steps} steps, {last}")
        rc = proc.wait()
    if rc != 0:
        tail = logfile.read_text(errors="replace").splitlines()[-40:]
        raise HarnessError(f"build failed (rc={rc}): {shlex.join(cmd)}; log: {logfile}\n"
                           + "\n".join(tail))


def build(variant: str = "base", src: Path | None = None, obj: Path | None = None,
          verbose: bool = False, arch: str | None = None) -> Path:
    """Configure and build; return the kernel image path (bzImage on x86_64)."""
    arch = arch or arch_of(variant)
    a = _arch(arch)
    src = src or tree_for(variant)
    obj = obj or obj_for(variant)
    frags = fragments_for(variant)
    base = tuple(base_targets(variant))
    with build_lock(), step(f"kernel {bases.current().name} {variant}"):
        sw = Stopwatch()
        # Kernel BTF (sched_ext) needs a newer pahole than Debian 12's.
        make_vars = tuple(pahole.make_args(frags))
        log(f"configuring {variant} ({arch}) in {obj} "
            f"({' + '.join([*base] + [f.name for f in frags])})")
        changed = configure(src, obj, frags, arch=arch, base=base, make_vars=make_vars)
        log(f"building {a['target']} ({'config changed' if changed else 'config unchanged'}), "
            f"log {obj}/build.log")
        run_make(make_cmd(src, obj, *make_vars, a["target"], arch=arch), make_env(),
                  obj / "build.log", verbose)
        image = obj / a["image"]
        log(f"kernel {variant} ready in {sw.elapsed():.0f} s: {image}")
    write_meta(variant, src, obj)
    return image


def write_meta(variant: str, src: Path, obj: Path) -> None:
    from . import source
    meta = {"variant": variant, "kernel_base": bases.current().name, "arch": arch_of(variant),
            "base": base_targets(variant),
            "fragments": [f.name for f in fragments_for(variant)],
            "source": source.recorded(), "tree": tree.describe(src) if tree.has_base(src) else {},
            "built": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    (obj / "idlesteal-build.json").write_text(json.dumps(meta, indent=2) + "\n")


def read_meta(variant: str) -> dict:
    try:
        return json.loads((obj_for(variant) / "idlesteal-build.json").read_text())
    except (OSError, ValueError):
        return {}


def config_enabled(variant: str, option: str) -> bool:
    """Is `option` (CONFIG_...) =y in the variant's built configuration?"""
    cfg = obj_for(variant) / ".config"
    return cfg.exists() and f"{option}=y" in cfg.read_text().splitlines()


def kernel_image(variant: str, obj: Path | None = None, arch: str | None = None) -> Path:
    """The built image of a variant (any architecture); error if not built."""
    arch = arch or arch_of(variant)
    p = (obj or obj_for(variant)) / _arch(arch)["image"]
    if not p.exists():
        raise HarnessError(f"{p} does not exist; run `idlesteal kernel --variant {variant}`")
    return p


def bzimage(variant: str = "base") -> Path:
    p = obj_for(variant) / "arch/x86/boot/bzImage"
    if not p.exists():
        raise HarnessError(f"{p} does not exist; run `idlesteal kernel --variant {variant}`")
    return p


# ---------------------------------------------------------------- bisectability

def series_tree() -> Path:
    return paths.build_dir() / "series" / "linux"


def ensure_series_tree() -> Path:
    """A separate git worktree of build/linux, for building series prefixes."""
    return tree.worktree(series_tree(), tree.BASE_TAG)


def check_series(variant: str = "base", verbose: bool = False) -> list[tuple[str, bool, str]]:
    """Build base + each prefix of patches/series in a separate worktree/obj.

    Returns [(subject, ok, message)] for each patch; stops at the first failure."""
    patches = tree.read_series()
    if not patches:
        log("patches/series is empty: nothing to check")
        return []
    wt = ensure_series_tree()
    tree.git("reset", "-q", "--hard", tree.BASE_TAG, cwd=wt)
    tree.git_am(wt, patches)
    revs = tree.commits(wt)
    obj = paths.build_dir() / "series" / f"obj-{variant}"
    results: list[tuple[str, bool, str]] = []
    for i, rev in enumerate(revs, 1):
        subj = tree.git("log", "-1", "--format=%s", rev, cwd=wt).strip()
        log(f"check-series [{i}/{len(revs)}] {subj}")
        tree.git("checkout", "-q", "--detach", rev, cwd=wt)
        try:
            build(variant, src=wt, obj=obj, verbose=verbose)
            results.append((subj, True, "ok"))
        except HarnessError as e:
            results.append((subj, False, str(e).splitlines()[0]))
            break
    return results
