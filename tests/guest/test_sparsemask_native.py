"""tools/sparsemask-bench builds against the series' sparsemask.h and its
self-check (the iterator against a dense reference walk) passes natively."""
from __future__ import annotations

import json
import subprocess

import pytest

from idlesteal import paths
from idlesteal.kernel import tree

pytestmark = pytest.mark.guest   # needs the prepared kernel tree


def test_sparsemask_bench_builds_and_self_checks():
    tree.prepare()
    tool = paths.REPO / "tools" / "sparsemask-bench"
    subprocess.run(["make", "-C", str(tool), f"KSRC={paths.tree_dir()}", "-B"], check=True,
                   capture_output=True)
    out = subprocess.run([str(tool / "sparsemask-bench"), "-s", "1", "-d", "0.1", "-r", "1"],
                         check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("RESULT "))
    r = json.loads(line[len("RESULT "):])
    assert r["sparse"]["scans_per_s"]["mean"] > 0 and r["dense"]["scans_per_s"]["mean"] > 0
