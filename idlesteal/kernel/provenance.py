"""Where a result came from: one record written into every result file.

Every JSON the harness writes (bench/suite, kernels, stress, asym) carries
provenance(): the date, the host (CPU model, cores, load), the QEMU version,
the kernel base selected (bases.py: name, Debian package, version, .deb
sha256) and, for each kernel that was booted, its build record (variant,
its base, config fragments, Debian package and .deb sha256, tree head and
series hash; build.read_meta()).
"""
from __future__ import annotations

import os
import platform
import re
import subprocess
import time
from pathlib import Path

from .. import bases


def host_info() -> dict:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu_model": model, "cores": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version(), "load_avg": list(os.getloadavg())}


def qemu_version(binary: str = "qemu-system-x86_64") -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return "missing"
    m = re.search(r"version (\S+)", out)
    return m.group(1) if m else out.strip()


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def provenance(builds: dict[str, dict] | None = None, *,
               qemu: str = "qemu-system-x86_64") -> dict:
    """{"date", "host", "qemu_version", "base", "builds": {variant: build record}}.
    `builds`: the build records of the kernels involved (build.read_meta())."""
    return {"date": now(), "host": host_info(), "qemu_version": qemu_version(qemu),
            "base": bases.current().to_json(), "builds": builds or {}}
