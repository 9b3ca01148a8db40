"""Base kernel source: download the selected base's Debian linux-source
package (bases.py) with a private apt configuration, verify it, and extract
the kernel tarball.

The host's apt setup is never changed: lists, cache and state live under
build/apt, and the downloaded .deb is kept in the user cache so a fresh clone
on the same machine does not download it again.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import bases, paths
from ..util import HarnessError, log, output, run, sha256_file

# The default base (the one the patch series is written against): its
# package, version and hash as listed by the Debian archive (apt-cache show);
# the other bases are in bases.BASES.  Another version of the selected base's
# package can be asked for with IDLESTEAL_DEB_VERSION; its hash then comes
# from apt-cache show alone.
PACKAGE = bases.BASES[bases.DEFAULT].package
PINNED_VERSION = bases.BASES[bases.DEFAULT].version
PINNED_SHA256 = bases.BASES[bases.DEFAULT].sha256
# The suite of the default base, also the one the arm64 pieces come from (cross.py).
SUITE = bases.BASES[bases.DEFAULT].suite
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


@dataclass
class SourceInfo:
    package: str
    version: str
    sha256: str
    deb: str
    tarball: str
    base: str = bases.DEFAULT

    def to_json(self) -> dict:
        return asdict(self)


def wanted_version() -> str:
    return os.environ.get("IDLESTEAL_DEB_VERSION") or bases.current().version


def apt_dir() -> Path:
    return paths.build_dir() / "apt"


def debian_mirror() -> str:
    """The Debian mirror this machine already uses (IDLESTEAL_DEBIAN_MIRROR wins)."""
    env = os.environ.get("IDLESTEAL_DEBIAN_MIRROR")
    if env:
        return env.rstrip("/")
    candidates: list[str] = []
    for f in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        if not f.is_file() or not (f.name.endswith(".list") or f.name.endswith(".sources")):
            continue
        for line in f.read_text(errors="replace").splitlines():
            line = line.strip()
            if line.startswith("#"):
                continue
            m = re.match(r"URIs:\s*(\S+)", line) or re.match(r"deb\s+(?:\[[^]]*\]\s+)?(\S+)", line)
            if m:
                candidates.append(m.group(1).rstrip("/"))
    for uri in candidates:
        if uri.endswith("/debian"):
            return uri
    raise HarnessError("cannot find a Debian mirror in /etc/apt; set IDLESTEAL_DEBIAN_MIRROR")


def write_private_apt(d: Path, arch: str, sources: str, extra: list[str] | None = None) -> Path:
    """A private apt configuration in `d` (its own sources, lists, cache; no
    dpkg status), so that nothing under /etc/apt changes.  Returns apt.conf."""
    for sub in ["etc/sources.list.d", "etc/preferences.d", "etc/apt.conf.d",
                "state", "lists/partial", "cache/archives/partial"]:
        (d / sub).mkdir(parents=True, exist_ok=True)
    write_if_changed(d / "etc/sources.list", sources)
    conf = "".join([
        f'Dir::Etc::SourceList "{d}/etc/sources.list";\n',
        f'Dir::Etc::SourceParts "{d}/etc/sources.list.d";\n',
        f'Dir::Etc::Preferences "{d}/etc/preferences";\n',
        f'Dir::Etc::PreferencesParts "{d}/etc/preferences.d";\n',
        f'Dir::Etc::Parts "{d}/etc/apt.conf.d";\n',
        f'Dir::State "{d}/state";\n',
        f'Dir::State::Lists "{d}/lists";\n',
        'Dir::State::status "/dev/null";\n',
        f'Dir::Cache "{d}/cache";\n',
        f'Dir::Cache::Archives "{d}/cache/archives";\n',
        f'APT::Architecture "{arch}";\n',
        # The sid mirror's InRelease is reported as expired on these machines.
        'Acquire::Check-Valid-Until "false";\n',
        *(extra or []),
    ])
    conf_path = d / "apt.conf"
    write_if_changed(conf_path, conf)
    return conf_path


def write_apt_config() -> Path:
    """Write build/apt/apt.conf (+ sources.list: the selected base's suite)
    and return the apt.conf path."""
    return write_private_apt(apt_dir(), "amd64", f"deb [signed-by={KEYRING}] "
                             f"{debian_mirror()} {bases.current().suite} main\n")


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def apt_env() -> dict[str, str]:
    """The environment that points apt at the base's private configuration."""
    env = dict(os.environ)
    env["APT_CONFIG"] = str(write_apt_config())
    return env


def _have_lists() -> bool:
    return any(apt_dir().joinpath("lists").glob("*_Packages"))


def apt_update() -> None:
    log(f"apt-get update (private {bases.current().suite} lists under {apt_dir()})")
    run(["apt-get", "update", "-q"], env=apt_env())


def apt_show(package: str, version: str) -> dict[str, str]:
    """Fields of `apt-cache show package=version` from the private lists."""
    if not _have_lists():
        apt_update()
    proc = run(["apt-cache", "show", f"{package}={version}"], env=apt_env(),
               capture=True, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        apt_update()
        proc = run(["apt-cache", "show", f"{package}={version}"], env=apt_env(),
                   capture=True, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        avail = output(["apt-cache", "madison", package], env=apt_env(), check=False)
        raise HarnessError(f"{package}={version} is not in the Debian archive's "
                           f"{bases.current().suite} lists.\n"
                           f"Available:\n{avail.strip() or '(none)'}\n"
                           "Set IDLESTEAL_DEB_VERSION to one of these (the patches may then need a rebase).")
    return parse_control(proc.stdout.split("\n\n")[0])


def parse_control(text: str) -> dict[str, str]:
    """Parse one Debian control stanza (continuation lines are joined)."""
    fields: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        if line[:1] in (" ", "\t") and key:
            fields[key] += "\n" + line.strip()
        elif ":" in line:
            key, _, val = line.partition(":")
            key = key.strip()
            fields[key] = val.strip()
    return fields


def deb_cache() -> Path:
    return paths.cache_dir() / "debs"


def fetch_deb(version: str | None = None) -> tuple[Path, str]:
    """Return (path of verified .deb in the cache, sha256)."""
    base = bases.current()
    package = base.package
    version = version or wanted_version()
    deb = deb_cache() / f"{package}_{version}_all.deb"
    expected = base.sha256 if version == base.version else None
    if deb.exists() and expected and sha256_file(deb) == expected:
        return deb, expected
    fields = apt_show(package, version)
    archive_sha = fields.get("SHA256", "")
    if expected and archive_sha and archive_sha != expected:
        raise HarnessError(f"archive lists SHA256 {archive_sha} for {package}={version}, "
                           f"but the pinned hash is {expected}")
    expected = expected or archive_sha
    if not expected:
        raise HarnessError(f"apt-cache show gave no SHA256 for {package}={version}")
    if deb.exists() and sha256_file(deb) == expected:
        return deb, expected
    log(f"downloading {package}={version} ({int(fields.get('Size', '0')) >> 20} MiB)")
    return download_deb(f"{package}={version}", expected, apt_env(), deb), expected


def download_deb(spec: str, sha256: str, env: dict[str, str], dest: Path | None = None) -> Path:
    """`apt-get download spec` (e.g. 'pkg=1.0', 'pkg:arm64=1.0') with the
    private apt configuration in `env`, checked against `sha256`, moved into
    the user cache (as `dest`, or under apt's file name).  The one .deb
    download of the harness, for every architecture."""
    cache = deb_cache()
    tmp = cache / ("partial-" + re.sub(r"[^A-Za-z0-9.+-]", "_", spec))
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    run(["apt-get", "download", "-q", spec], cwd=tmp, env=env, capture=True)
    got = list(tmp.glob("*.deb"))
    if len(got) != 1:
        raise HarnessError(f"apt-get download {spec} left {len(got)} .deb files in {tmp}")
    sha = sha256_file(got[0])
    if sha != sha256:
        raise HarnessError(f"{got[0].name}: sha256 {sha} does not match the archive's {sha256}")
    dest = dest or cache / got[0].name.replace("%3a", ":")
    os.replace(got[0], dest)
    tmp.rmdir()
    log(f"verified {dest.name} sha256 {sha}")
    return dest


def extract_tarball(deb: Path, version: str) -> Path:
    """Extract usr/src/<package>.tar.xz from the .deb into build/src/<version>/."""
    package = bases.current().package
    dest = paths.build_dir() / "src" / version / f"{package}.tar.xz"
    if dest.exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / "partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    member = f"./usr/src/{package}.tar.xz"
    log(f"extracting {member} from {deb.name}")
    # tar -x keeps the member's mtime, which dates the base commit.
    dpkg = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    tar = subprocess.run(["tar", "-x", "-C", str(tmp), "--strip-components=3", member],
                         stdin=dpkg.stdout)
    dpkg.stdout.close()  # type: ignore[union-attr]
    if dpkg.wait() != 0 or tar.returncode != 0:
        raise HarnessError(f"could not extract {member} from {deb}")
    os.replace(tmp / dest.name, dest)
    tmp.rmdir()
    return dest


def metadata_path() -> Path:
    return paths.build_dir() / "source.json"


def fetch() -> SourceInfo:
    """Download (or reuse), verify and extract; record build/source.json."""
    version = wanted_version()
    deb, sha = fetch_deb(version)
    tarball = extract_tarball(deb, version)
    info = SourceInfo(bases.current().package, version, sha, str(deb), str(tarball),
                      bases.current().name)
    metadata_path().parent.mkdir(parents=True, exist_ok=True)
    metadata_path().write_text(json.dumps(info.to_json(), indent=2) + "\n")
    return info


def recorded() -> dict:
    """The source metadata of the current tree (empty if never fetched)."""
    try:
        return json.loads(metadata_path().read_text())
    except (OSError, ValueError):
        return {}
