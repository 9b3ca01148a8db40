"""scx_idlesteal's loader refuses out-of-range options before it loads
anything (no guest: the options are parsed before libbpf is touched), and
its help names the latency knobs (docs/scx.md, "Latency"); clap's errors.
The loader is built here with cargo when it is not (no kernel needed: it
is one binary for every kernel, ~10 s with the cargo cache); skipped,
saying so, where there is no Rust toolchain."""
from __future__ import annotations

import subprocess

import pytest

from idlesteal.scx import peers, own as scx
from idlesteal.util import HarnessError

_loader: list[str] = []


@pytest.fixture(scope="module", autouse=True)
def loader() -> None:
    path = scx.binary("scx_idlesteal")
    if not path.exists():
        try:
            peers.toolchain()
        except HarnessError as e:
            pytest.skip(f"scx_idlesteal not built and no Rust toolchain to build it: {e}")
        path = scx.build_own()
    _loader[:] = [str(path)]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_loader, *args], capture_output=True, text=True, timeout=10)


@pytest.mark.parametrize("opt,long,value,want", [
    ("-s", "--slice-us", "99", "100 to 10000000 us"),
    ("-s", "--slice-us", "10000001", "100 to 10000000 us"),
    ("-s", "--slice-us", "abc", "100 to 10000000 us"),
    ("-l", "--slice-min-us", "49", "50 to 10000000 us"),
    ("-l", "--slice-min-us", "1x", "50 to 10000000 us"),
    ("-l", "--slice-min-us", "20000000", "50 to 10000000 us"),
    ("-t", "--timeout-ms", "0", "1 to 30000 ms"),
    ("-t", "--timeout-ms", "30001", "1 to 30000 ms"),
    ("--stats", "--stats", "0", "0.1 to 3600 seconds"),
    ("--monitor", "--monitor", "-1", "0.1 to 3600 seconds"),
    ("--log-level", "--log-level", "trace", "one of error, warn, info, debug"),
    ("--exit-dump-len", "--exit-dump-len", "1073741825", "0 to 1073741824 bytes"),
    ("--exit-dump-len", "--exit-dump-len", "4k", "0 to 1073741824 bytes"),
])
def test_out_of_range_option_is_refused(opt, long, value, want):
    """clap's error (exit 2) names the option, the value and the range."""
    res = run(f"{opt}={value}" if opt.startswith("--") else opt, *([] if opt.startswith("--")
                                                                     else [value]))
    assert res.returncode == 2, res
    first = res.stderr.splitlines()[0]
    assert first.startswith(f"error: invalid value '{value}' for '{long} <"), first
    assert first.endswith(f": {want}"), first


def test_negative_number_is_not_a_value():
    """-s -5 reads -5 as an option: refused, not loaded with a default."""
    res = run("-s", "-5")
    assert res.returncode == 2 and "unexpected argument '-5'" in res.stderr, res


def test_help_names_the_latency_knobs():
    res = run("-h")
    assert res.returncode == 0, res
    for want in ("-l, --slice-min-us <SLICE_MIN_US>", "-f, --fixed-slices", "-p, --no-preempt",
                 "-s, --slice-us <SLICE_US>", "--stats <SECS>", "--monitor <SECS>"):
        assert want in res.stdout, (want, res.stdout)


def test_help_names_the_output_and_libbpf_options():
    """Quiet by default (--counters, --log-level), the dump's size, and the
    scx schedulers' libbpf options (scx_utils' LibbpfOpts)."""
    res = run("-h")
    assert res.returncode == 0, res
    for want in ("--counters", "--log-level <LOG_LEVEL>", "--exit-dump-len <EXIT_DUMP_LEN>",
                 "Libbpf Options:", "--btf-custom-path <BTF_CUSTOM_PATH>"):
        assert want in res.stdout, (want, res.stdout)
    assert "--quiet" not in res.stdout        # kept for option files, not offered


def test_help_stats_describes_every_counter():
    """--help-stats (scx_stats' metadata) lists every counter the "stats"
    line carries, without loading anything."""
    res = run("--help-stats")
    assert res.returncode == 0, res
    for name in ("steals", "failed", "search_ns", "gated", "idle_kick", "preempt", "short",
                 "steal_on"):
        assert name in res.stdout, (name, res.stdout)
