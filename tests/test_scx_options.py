"""scx_idlesteal's loader refuses out-of-range options before it loads
anything (no guest: the options are parsed before libbpf is touched), and
its help names the latency knobs (docs/scx.md, "Latency").  Skipped when
the loader is not built (`make scx`)."""
from __future__ import annotations

import subprocess

import pytest

from idlesteal import scx

LOADER = scx.binary("scx_idlesteal")

pytestmark = pytest.mark.skipif(not LOADER.exists(), reason="scx_idlesteal not built")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LOADER), *args], capture_output=True, text=True, timeout=10)


@pytest.mark.parametrize("opt,value,want", [
    ("-s", "99", "100 to 10000000 us"), ("-s", "10000001", "100 to 10000000 us"),
    ("-s", "abc", "100 to 10000000 us"), ("-s", "-5", "100 to 10000000 us"),
    ("-l", "49", "50 to 10000000 us"), ("-l", "1x", "50 to 10000000 us"),
    ("-l", "20000000", "50 to 10000000 us"), ("-t", "0", "1 to 30000 ms"),
])
def test_out_of_range_option_is_refused(opt, value, want):
    res = run(opt, value)
    assert res.returncode == 1, res
    assert res.stderr.strip() == f"scx_idlesteal: {opt} {value}: {want}", res.stderr


def test_help_names_the_latency_knobs():
    res = run("-h")
    assert res.returncode == 0, res
    for want in ("-l MIN_SLICE_US", "-f ", "-p ", "-s SLICE_US"):
        assert want in res.stderr, (want, res.stderr)
