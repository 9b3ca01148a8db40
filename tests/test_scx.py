"""scx: the loader's counter lines, pahole's BTF switch (no build here)."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from idlesteal.kernel import pahole
from idlesteal import paths
from idlesteal.scx import own as scx
from idlesteal.util import HarnessError

LOG = """topology: 2 LLCs: 4 CPUs (node 0) 4 CPUs (node 0)
scx_idlesteal: loaded, stealing on
stats steals=0 failed=0 search_ns=0 gated=0 kicks=0 local=3 queued=1 remote_llc=0 steal=on
stats steals=41 failed=7 search_ns=81234 gated=2 kicks=30 local=90 queued=800 remote_llc=0 steal=on
scx_idlesteal: stealing off
stats steals=41 failed=7 search_ns=81234 gated=2 kicks=30 local=95 queued=900 remote_llc=0 steal=off
final steals=41 failed=7 search_ns=81234 gated=2 kicks=30 local=99 queued=1000 remote_llc=0 steal=off
EXIT: unregistered from user space
"""


def test_parse_stats_reads_every_counter_line():
    rows = scx.parse_stats(LOG)
    assert [r["kind"] for r in rows] == ["stats", "stats", "stats", "final"]
    assert rows[1]["steals"] == 41 and rows[1]["search_ns"] == 81234 and rows[1]["steal"] == "on"
    assert rows[2]["steal"] == "off"


def test_final_stats_is_the_last_final_line():
    two_loads = LOG + LOG.replace("steals=41", "steals=5")
    assert scx.final_stats(two_loads)["steals"] == 5


def test_final_stats_missing_is_an_error():
    with pytest.raises(HarnessError, match="no final stats line"):
        scx.final_stats("stats steals=1 failed=0 steal=on\n")


def test_malformed_lines_are_ignored():
    assert scx.parse_stats("stats steals=x steal=on\nfinal steal=on\n") == []


def test_image_files_put_binaries_in_usr_bin(tmp_path):
    b = tmp_path / "scx_idlesteal"
    assert scx.image_files({"scx_idlesteal": b}) == [f"{b}:/usr/bin/scx_idlesteal"]


def test_pahole_only_for_btf_fragments(tmp_path):
    plain, btf = tmp_path / "a.config", tmp_path / "b.config"
    plain.write_text("CONFIG_DEBUG_INFO=y\n# CONFIG_DEBUG_INFO_BTF=y is not meant\n")
    btf.write_text("CONFIG_BPF=y\nCONFIG_DEBUG_INFO_BTF=y\n")
    assert not pahole.needs_btf([plain])
    assert pahole.needs_btf([plain, btf])
    assert pahole.make_args([plain]) == []


def test_scx_variant_fragment_asks_for_btf_and_sched_ext():
    frag = Path(scx.paths.configs_dir()) / "scx.config"
    text = frag.read_text().splitlines()
    for opt in scx.REQUIRED:
        assert f"{opt}=y" in text
    assert pahole.needs_btf([frag])


def test_vendored_pahole_source_is_the_pinned_one():
    from idlesteal.util import sha256_file
    assert sha256_file(pahole.TARBALL) == pahole.SHA256


# Console lines as sched_ext prints them (scx_log_sched_disable(): pr_err for an
# error exit, pr_info otherwise), with the names the schedulers register under.
P2DQ = "p2dq_1.1.4_x86_64_unknown_linux_gnu"
EJECT_CONSOLE = f"""[   41.207310] sched_ext: BPF scheduler "{P2DQ}" enabled
[   52.118004] sched_ext: BPF scheduler "{P2DQ}" disabled (runtime error)
[   52.118190] sched_ext: {P2DQ}: SCX_DSQ_LOCAL[_ON] target CPU 3 not allowed for hackbench[412]
"""


@pytest.mark.parametrize("name", [P2DQ, "bpfland_1.1.4_x86_64_unknown_linux_gnu",
                                  "cosmos_1.1.7_x86_64_unknown_linux_gnu", "idlesteal",
                                  "simple"])
@pytest.mark.parametrize("reason", ["runtime error", "scx_bpf_error", "runnable task stall"])
def test_ejected_matches_every_scheduler_name(name, reason):
    line = f'[   52.1] sched_ext: BPF scheduler "{name}" disabled ({reason})'
    m = scx.EJECTED.search(line)
    assert m and m.group(1) == name and m.group(2) == reason


def test_ejected_finds_a_peer_runtime_error_on_the_console():
    m = scx.EJECTED.search(EJECT_CONSOLE)
    assert m and m.group(1) == P2DQ and m.group(2) == "runtime error"
    sub = 'sched_ext: BPF sub-scheduler "idlesteal" disabled (scx_bpf_error)'
    assert scx.EJECTED.search(sub)


@pytest.mark.parametrize("reason", ["unregistered from user space",
                                    "unregistered from the main kernel",
                                    "unregistered from BPF", "disabled by sysrq-S"])
def test_ejected_ignores_unloads_and_restarts(reason):
    console = f'sched_ext: BPF scheduler "{P2DQ}" enabled\n' \
              f'sched_ext: BPF scheduler "{P2DQ}" disabled ({reason})\n'
    assert not scx.EJECTED.search(console)


VERISTAT_CSV = """libbpf: some message before the header
file_name,prog_name,verdict,total_insns,total_states,duration
scx_idlesteal.bpf.o,idlesteal_dispatch,success,20000,1500,90000
scx_idlesteal.bpf.o,idlesteal_enqueue,failure,4000,300,8000
"""


def test_parse_veristat_reads_the_csv_rows_after_the_header():
    rows = scx.parse_veristat(VERISTAT_CSV)
    assert [r["prog_name"] for r in rows] == ["idlesteal_dispatch", "idlesteal_enqueue"]
    assert rows[0]["verdict"] == "success" and rows[0]["total_insns"] == "20000"
    assert rows[1]["verdict"] == "failure"


def test_parse_veristat_without_a_header_is_an_error():
    with pytest.raises(HarnessError, match="no veristat CSV header"):
        scx.parse_veristat("libbpf: failed to open object\n")


def test_source_digest_covers_every_source_file():
    """scx.SOURCES (what a result's scx_idlesteal_sha256 is taken over)
    names every tracked file of tools/scx_idlesteal but packaging/ (the
    systemd unit and its options: installed beside the loader, not built
    into it) and README.md (its documentation)."""
    files = subprocess.run(["git", "ls-files", "tools/scx_idlesteal"], cwd=paths.REPO,
                           capture_output=True, text=True, check=True).stdout.split()
    if not files:
        pytest.skip("not a git checkout")
    prefix = "tools/scx_idlesteal/"
    built = [f[len(prefix):] for f in files
             if not f.startswith(prefix + "packaging/") and f != prefix + "README.md"]
    assert sorted(built) == sorted(scx.SOURCES)
    assert len(built) < len(files)          # packaging/ is tracked, and left out


def _fake_own_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[float]]:
    """build_own() on a copy of scx_idlesteal's sources dated 2001, with a
    cargo that only writes its outputs and notes the sources' mtimes."""
    own = tmp_path / "own"
    for f in scx.SOURCES:
        (own / f).parent.mkdir(parents=True, exist_ok=True)
        (own / f).write_text(f)
        os.utime(own / f, (1e9, 1e9))
    target = tmp_path / "target"
    seen: list[float] = []

    def cargo(cmd, env, logfile, verbose, step=None):
        seen.append(min((own / f).stat().st_mtime for f in scx.SOURCES))
        (target / "release" / "build" / "scx_idlesteal-x" / "out").mkdir(parents=True, exist_ok=True)
        (target / "release" / "scx_idlesteal").write_text("bin")
        (target / "release" / "build" / "scx_idlesteal-x" / "out" / "bpf.bpf.o").write_text("obj")

    monkeypatch.setattr(scx, "OWN_DIR", own)
    monkeypatch.setattr(scx.peers, "toolchain", lambda: (Path("/bin/true"), {}))
    monkeypatch.setattr(scx.peers, "target_dir", lambda: target)
    monkeypatch.setattr(scx.build, "run_make", cargo)
    monkeypatch.setattr(scx, "out_dir", lambda variant=scx.VARIANT: tmp_path / "out")
    monkeypatch.setattr(scx, "bpf_object", lambda name="scx_idlesteal", variant=scx.VARIANT:
                        tmp_path / "out" / "bpf.o")
    return target, seen


def test_build_own_rebuilds_after_another_checkouts_build(tmp_path, monkeypatch):
    """cargo's fingerprint is per package name and version, judged by mtime:
    after another checkout's build, sources older than it would be taken as
    built.  build_own() dates them now unless the target directory says it
    last built these very sources from this path."""
    target, seen = _fake_own_build(tmp_path, monkeypatch)
    target.mkdir()
    (target / scx.BUILT_STAMP).write_text(scx.built_from(Path("/elsewhere"), scx.source_digest()))
    scx.build_own()
    assert seen[-1] > 1e9 + 1                       # dated now: cargo rebuilds
    assert (target / scx.BUILT_STAMP).read_text() == scx.built_from(scx.OWN_DIR, scx.source_digest())
    for f in scx.SOURCES:
        os.utime(scx.OWN_DIR / f, (1e9, 1e9))
    scx.build_own()
    assert seen[-1] == 1e9                          # same sources, same path: left alone
    (scx.OWN_DIR / "src" / "main.rs").write_text("changed")
    os.utime(scx.OWN_DIR / "src" / "main.rs", (1e9, 1e9))
    scx.build_own()
    assert seen[-1] > 1e9 + 1                       # a change cargo's mtimes would miss


def test_every_bpf_counter_has_a_name_in_the_loader():
    """enum stat_idx of src/bpf/intf.h and the loader's NAMES (its
    "stats"/"final" lines) have as many entries, and the loader's NR_STATS
    and totals arrays are IDLESTEAL_NR_STATS as bindgen gives it (rustc then
    refuses a NAMES of another length): a counter added on one side only
    would shift every name after it."""
    src = scx.OWN_DIR / "src" / "bpf" / "intf.h"
    enum = re.search(r"enum stat_idx \{(.*?)IDLESTEAL_NR_STATS", src.read_text(), re.S)
    assert enum, src
    n = len(re.findall(r"^\s*IDLESTEAL_STAT_\w+,", enum.group(1), re.M))
    stats_rs = (scx.OWN_DIR / "src" / "stats.rs").read_text()
    assert re.search(r"pub const NR_STATS: usize = crate::bpf_intf::stat_idx_IDLESTEAL_NR_STATS "
                     r"as usize;", stats_rs), "NR_STATS is not intf.h's in stats.rs"
    names = re.search(r"pub const NAMES: \[&str; NR_STATS\] = \[(.*?)\];", stats_rs, re.S)
    assert names, "NAMES not found in stats.rs"
    assert n == len(re.findall(r'"\w+"', names.group(1)))
    main_rs = (scx.OWN_DIR / "src" / "main.rs").read_text()
    assert re.findall(r"\[0u64; ([\w:]+)\]", main_rs) == ["stats::NR_STATS"]
    assert re.findall(r"totals: &\[u64; ([\w:]+)\]", stats_rs) == ["NR_STATS"]
