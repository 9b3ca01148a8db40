"""An installable kernel with the series, for a server: the posted series
(build/posted/linux, without patches/separate/) built with the server's
own configuration into a package its distribution installs and removes.

The configuration starts from a given file (`/boot/config-$(uname -r)` of
the target) or from Debian's own for the base (the linux-config-<base>
package of the base's version and suite, checked against the archive's
hash), is brought to the base with olddefconfig, optionally reduced to
the target's modules (localmodconfig against its `lsmod`), and gets the
options of kernel/distconfig.py, each reported.  The kernel release,
`uname -r`, names the series and its commit (-idlesteal-v6-<commit>),
and so does the package's version.  That suffix is make's LOCALVERSION,
not CONFIG_LOCALVERSION: the configuration, and with it every object
ccache keeps, stays the one the server's file gives.  `make bindeb-pkg` (or binrpm-pkg)
builds in build/posted/obj-package; the packages, the final .config and a
JSON record of all of this (one per release and format) go to
build/packages/.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .. import bases, paths
from ..util import HarnessError, Stopwatch, log, output, run, sha256_file, step
from . import build, distconfig, kconfig, pahole, source, tree

FORMATS = {"deb": "bindeb-pkg", "rpm": "binrpm-pkg"}
DEBIAN_FLAVOUR = "amd64_none_amd64"
RELEASE_TAG = "idlesteal"


@dataclass
class Package:
    """What the package command made."""
    base: str
    release: str                      # uname -r of the packaged kernel
    version: str                      # the package's version
    files: list[Path]
    config_from: str                  # the file or package the config started from
    config_sha256: str
    lsmod: str                        # "" when not reduced
    forced: list[str]
    commit: str
    seconds: float = 0.0
    fmt: str = "deb"

    def to_json(self) -> dict:
        d = dict(self.__dict__)
        d["files"] = [{"name": f.name, "bytes": f.stat().st_size if f.exists() else 0}
                      for f in self.files]
        return d


def out_dir() -> Path:
    return paths.build_dir() / "packages"


def obj_dir() -> Path:
    """Beside the posted tree, as the variants' objects are beside theirs:
    the same relative paths, so ccache hits what a variant built from the
    same source with the same configuration."""
    return build.posted_tree().parent / "obj-package"


def record(release: str, fmt: str) -> Path:
    """The JSON record of a package: a .deb and an .rpm of one release
    have one each."""
    return out_dir() / f"{release}.{fmt}.json"


def series_tag() -> str:
    """'v6' of 'RFC PATCH v6'."""
    return tree.SUBJECT_PREFIX.split()[-1]


def localversion(commit: str) -> str:
    return f"-{RELEASE_TAG}-{series_tag()}-{commit[:12]}"


def debian_config(flavour: str = DEBIAN_FLAVOUR) -> Path:
    """Debian's configuration of the current base (its linux-config
    package, the base's version, checked against the archive), extracted
    to build/packages/."""
    base = bases.current()
    pkg = f"linux-config-{base.name}"
    dest = out_dir() / f"debian-{base.name}-{base.version}-{flavour}.config"
    if dest.exists():
        return dest
    fields = source.apt_show(pkg, base.version)
    sha = fields.get("SHA256", "")
    if not sha:
        raise HarnessError(f"apt-cache show gave no SHA256 for {pkg}={base.version}")
    deb = source.deb_cache() / f"{pkg}_{base.version}_amd64.deb"
    if not deb.exists() or sha256_file(deb) != sha:
        log(f"downloading {pkg}={base.version}")
        source.download_deb(f"{pkg}={base.version}", sha, source.apt_env(), deb)
    member = f"./usr/src/{pkg}/config.{flavour}.xz"
    dpkg = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    tar = subprocess.run(["tar", "-xO", member], stdin=dpkg.stdout, capture_output=True)
    if dpkg.stdout:
        dpkg.stdout.close()
    if dpkg.wait() != 0 or tar.returncode != 0:
        have = output(["dpkg-deb", "-c", str(deb)], check=False)
        flavours = sorted(ln.rsplit("config.", 1)[1][:-3] for ln in have.splitlines()
                          if "/config." in ln and ln.endswith(".xz"))
        raise HarnessError(f"{deb.name} has no config.{flavour}.xz; flavours: "
                           f"{', '.join(flavours) or '(none)'}")
    import lzma
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".tmp")
    tmp.write_bytes(lzma.decompress(tar.stdout))
    os.replace(tmp, dest)
    log(f"Debian's {base.name} configuration ({flavour}): {dest}")
    return dest


def configure(src: Path, obj: Path, start: Path, lsmod: Path | None, local: str,
              make_vars: tuple[str, ...]) -> list[distconfig.Change]:
    """obj/.config from `start`: olddefconfig, localmodconfig against
    `lsmod` if given, the forced options, olddefconfig again, checked."""
    obj.mkdir(parents=True, exist_ok=True)
    cfg = obj / ".config"
    shutil.copyfile(start, cfg)
    env = build.make_env()

    def make(*targets: str) -> None:
        run(build.make_cmd(src, obj, *make_vars, f"LOCALVERSION={local}", *targets, jobs=1),
            capture=True, env=env, input="")

    make("olddefconfig")
    if lsmod is not None:
        n = max(len(lsmod.read_text().splitlines()) - 1, 0)
        log(f"localmodconfig: keeping the {n} module(s) of {lsmod}")
        run(build.make_cmd(src, obj, *make_vars, f"LOCALVERSION={local}", f"LSMOD={lsmod.resolve()}",
                           "localmodconfig", jobs=1), capture=True, env=env, input="")
    changes = distconfig.plan(kconfig.parse_file(cfg), distconfig.kconfig_symbols(src))
    distconfig.force(cfg, changes)
    make("olddefconfig")
    distconfig.verify(kconfig.parse_file(cfg), changes)
    return changes


def check_tools(fmt: str) -> None:
    """The tools (and their Debian packages) bindeb-pkg or binrpm-pkg runs."""
    need = {"deb": {"dpkg-buildpackage": "dpkg-dev", "fakeroot": "fakeroot", "dh": "debhelper",
                    "depmod": "kmod", "rsync": "rsync"},
            "rpm": {"rpmbuild": "rpm"}}[fmt]
    missing = [t for t in need if shutil.which(t) is None
               and not Path("/usr/sbin", t).exists() and not Path("/sbin", t).exists()]
    if missing:
        raise HarnessError(f"{', '.join(missing)} not found: apt-get install "
                           + " ".join(need[m] for m in missing))


def make_package(start: Path, lsmod: Path | None = None, fmt: str = "deb",
                 verbose: bool = False) -> Package:
    """Configure and build the package; return what was made."""
    if fmt not in FORMATS:
        raise HarnessError(f"package format {fmt!r}: one of {', '.join(FORMATS)}")
    for p, what in ((start, "configuration"), (lsmod, "lsmod listing")):
        if p is not None and not p.is_file():
            raise HarnessError(f"the {what} {p} is not a file")
    check_tools(fmt)
    src = tree.worktree(build.posted_tree(), build.posted_rev())
    distconfig.steal_off_at_boot(src)
    commit = tree.head(src)
    local = localversion(commit)
    distconfig.check_localversion(local)
    obj = obj_dir()
    with build.build_lock(), step(f"package {bases.current().name} {fmt}"):
        sw = Stopwatch()
        make_vars = (f"PAHOLE={pahole.ensure()}",)
        log(f"configuring from {start} in {obj}")
        changes = configure(src, obj, start, lsmod, local, make_vars)
        for line in distconfig.report(changes):
            log(line)
        env = build.make_env()
        kver = output(build.make_cmd(src, obj, "-s", "kernelversion", jobs=1), env=env).strip()
        version = f"{kver}-1+{RELEASE_TAG}.{series_tag()}.{commit[:12]}"
        for old in obj.parent.glob(f"*{local}*.*"):
            old.unlink()
        log(f"building {FORMATS[fmt]} of {kver}{local} (log {obj}/package.log)")
        build.run_make(build.make_cmd(src, obj, *make_vars, f"LOCALVERSION={local}",
                                      f"KDEB_PKGVERSION={version}", FORMATS[fmt]),
                       env, obj / "package.log", verbose)
        # what the build itself made of it (the configuration's own
        # CONFIG_LOCALVERSION, or LOCALVERSION_AUTO, may add to it)
        release = (obj / "include/config/kernel.release").read_text().strip()
        if local not in release:
            raise HarnessError(f"kernel release {release!r} lacks the package's {local!r}")
        files = collect(obj, fmt, release, version)
        if fmt == "rpm":    # binrpm-pkg versions the package itself
            version = output(["rpm", "-qp", "--qf", "%{VERSION}-%{RELEASE}",
                              str(image_package_of(files))]).strip()
    start_sha = sha256_file(start)
    pkg = Package(bases.current().name, release, version, files, str(start), start_sha,
                  _path(lsmod), distconfig.report(changes), commit, round(sw.elapsed(), 1), fmt)
    shutil.copyfile(obj / ".config", out_dir() / f"config-{release}")
    record(release, fmt).write_text(
        json.dumps({**pkg.to_json(), "built": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "tree": tree.describe(src)}, indent=2) + "\n")
    return pkg


def _path(p: Path | None) -> str:
    """How a package's record names its lsmod listing: absolute, or ""."""
    return str(p.resolve()) if p else ""


def existing(start: Path, lsmod: Path | None = None, fmt: str = "deb") -> Package | None:
    """The package of format `fmt` an earlier make_package() built from the
    same configuration file (by content), lsmod listing and posted commit,
    when its record and every file of it are still in build/packages/; else
    None.  A test that boots a package reuses it instead of packaging the
    same kernel again (a distribution's -dbg package alone takes minutes)."""
    commit = tree.head(tree.worktree(build.posted_tree(), build.posted_rev()))
    sha = sha256_file(start)
    for rec in sorted(out_dir().glob(f"*.{fmt}.json")):
        try:
            d = json.loads(rec.read_text())
            files = [out_dir() / f["name"] for f in d["files"]]
            pkg = Package(d["base"], d["release"], d["version"], files, d["config_from"],
                          d["config_sha256"], d["lsmod"], d["forced"], d["commit"],
                          d.get("seconds", 0.0), fmt)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if (pkg.commit, pkg.config_sha256, pkg.lsmod, pkg.fmt) == \
                (commit, sha, _path(lsmod), fmt) \
                and pkg.base == bases.current().name and files \
                and all(f.is_file() and f.stat().st_size == e["bytes"]
                        for f, e in zip(files, d["files"])):
            return pkg
    return None


def collect(obj: Path, fmt: str, release: str, version: str) -> list[Path]:
    """Move the packages of `release` into build/packages/ (dpkg-buildpackage
    writes them beside the object directory, with a .buildinfo and a
    .changes of `version` that are removed)."""
    if fmt == "deb":
        found = sorted(p for p in obj.parent.glob("*.deb")
                       if release in p.name or version in p.name)   # linux-libc-dev: version
        extra = [p for p in obj.parent.iterdir()
                 if p.suffix in (".buildinfo", ".changes") and version in p.name]
    else:   # binrpm-pkg's names: kernel-<release with _ for ->-1.<arch>.rpm
        found = sorted(p for p in (obj / "rpmbuild" / "RPMS").rglob("*.rpm")
                       if f"-{release.replace('-', '_')}-" in p.name)
        extra = []
    if not found:
        raise HarnessError(f"no {fmt} package of {release} was made (see {obj}/package.log)")
    out = out_dir()
    out.mkdir(parents=True, exist_ok=True)
    if fmt == "rpm":    # an earlier build of the release: another build number
        for old in out.glob(f"*-{release.replace('-', '_')}-*.rpm"):
            old.unlink()
    moved = []
    for p in found:
        dest = out / p.name
        os.replace(p, dest)
        moved.append(dest)
    for p in extra:
        p.unlink(missing_ok=True)
    return moved


def image_package(pkg: Package) -> Path:
    """The package that holds the kernel itself."""
    return image_package_of(pkg.files)


def image_package_of(files: list[Path]) -> Path:
    for f in files:
        if f.name.startswith(("linux-image-", "kernel-")) and "dbg" not in f.name \
                and "devel" not in f.name and "headers" not in f.name:
            return f
    raise HarnessError(f"no kernel image among {', '.join(f.name for f in files)}")


def instructions(pkg: Package, fmt: str = "deb") -> str:
    """What to do with the package on the server, and how to undo it."""
    img = image_package(pkg)
    r = pkg.release
    if fmt == "deb":
        install = f"sudo apt install ./{img.name}"
        remove = f"sudo apt remove linux-image-{r}"
        once = ("sudo grub-reboot \"Advanced options for Debian GNU/Linux>"
                f"Debian GNU/Linux, with Linux {r}\"   # this boot only")
    else:
        install = f"sudo rpm -ivh {img.name}"
        remove = f"sudo rpm -e $(rpm -qf /boot/vmlinuz-{r})"
        once = f"sudo grubby --set-default /boot/vmlinuz-{r}   # or pick it in the boot menu"
    return "\n".join([
        f"Package: {img}",
        f"  kernel {r} ({pkg.base} with the series, commit {pkg.commit[:12]}); "
        f"package version {pkg.version}",
        "Install (copy the package to the server first):",
        f"  {install}",
        "Reboot into it:",
        f"  {once}",
        "  sudo reboot",
        "Check:",
        f"  uname -r                                   # {r}",
        "  sudo grep -o '\\bNO_STEAL\\b' /sys/kernel/debug/sched/features   # STEAL off as booted",
        "Run (from a clone of this repository on the server):",
        "  sudo /usr/bin/python3 -m idlesteal suite --host   # docs/server.md",
        "Roll back:",
        "  reboot into the previous kernel (the default entry, or the boot menu), then",
        f"  {remove}",
    ])
