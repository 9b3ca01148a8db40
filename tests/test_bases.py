"""Kernel bases (idlesteal/bases.py): the table, the --base / IDLESTEAL_BASE
check, and the directories each base builds in."""
from __future__ import annotations

import dataclasses

import re
from pathlib import Path

import pytest

from idlesteal import bases, cli, paths
from idlesteal.kernel import build, provenance, source, tree
from idlesteal.util import HarnessError


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """A build root of its own; the default base selected (the CLI's
    --base changes the environment: monkeypatch puts it back)."""
    monkeypatch.setenv("IDLESTEAL_BUILD", str(tmp_path / "build"))
    monkeypatch.setenv(bases.ENV, bases.DEFAULT)
    return tmp_path / "build"


# ---------------------------------------------------------------- the table

def test_every_base_is_pinned():
    assert set(bases.BASES) == {"7.3", "7.2", "6.12"}
    for name, b in bases.BASES.items():
        assert b.name == name
        assert b.package == f"linux-source-{name}"
        assert b.version.startswith(f"{name}.") and re.fullmatch(r"[0-9a-f]{64}", b.sha256)
        assert b.suite in ("sid", "trixie", "trixie-backports", "bookworm-backports")
        assert (paths.configs_dir() / b.variants).is_file()


def test_default_base_is_the_series_base():
    d = bases.BASES[bases.DEFAULT]
    assert d.name == "7.2" and d.series and d.variants == "variants"
    assert d.patches == "patches"                    # patches/ as before bases
    assert (d.package, d.version, d.sha256, d.suite) == (
        source.PACKAGE, source.PINNED_VERSION, source.PINNED_SHA256, source.SUITE)
    # 7.3 has the rebase, 6.12 the backport.
    assert {b.name: b.patches for b in bases.BASES.values()} == {
        "7.3": "patches/ports/7.3", "7.2": "patches", "6.12": "patches/ports/6.12"}
    assert [b.name for b in bases.BASES.values() if b.series] == ["7.3", bases.DEFAULT, "6.12"]


def variant_words(name: str) -> dict[str, list[str]]:
    words = {}
    for line in (paths.configs_dir() / bases.get(name).variants).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            k, _, v = line.partition(":")
            words[k.strip()] = v.split()
    return words


def test_ports_have_the_scx_variant():
    for name in ("6.12", "7.3"):
        words = variant_words(name)
        extra = ["sysctl-7.3.config"] if name == "7.3" else []   # PROC_SYSCTL is SYSCTL there
        assert words["scx"] == ["guest.config", *extra, "scx.config"]
        for v in words.values():
            assert all((paths.configs_dir() / w).is_file() for w in v if w[0] not in "%@")


def test_a_port_with_a_series_has_the_series_variants():
    """7.3 (the rebase) and 6.12 (the backport): steal (KUnit), debug (the
    stress suite's kernel) and the %base variants without the series, with
    the default base's fragments (on 7.3 sysctl-7.3.config right after
    guest.config)."""
    for base in ("7.3", "6.12"):
        words = variant_words(base)
        g = ["guest.config", "sysctl-7.3.config"] if base == "7.3" else ["guest.config"]
        assert words["steal"] == [*g, "steal.config", "trace.config"]
        assert words["debug"] == [*g, "steal.config", "debug.config"]
        assert words["base"] == [*g, "trace.config"]
        assert words["mainline"] == ["%base", *g, "trace.config"]
        names = ["steal", "debug", "mainline"]
        if base == "7.3":
            assert words["mainline-debug"] == ["%base", *g, "debug.config"]
            names.append("mainline-debug")
        for name in names:
            assert set(words[name]) - set(g) <= set(variant_words(bases.DEFAULT)[name]), name


def test_current_and_select(monkeypatch):
    monkeypatch.delenv(bases.ENV, raising=False)
    assert bases.current().name == bases.DEFAULT and bases.is_default()
    monkeypatch.setenv(bases.ENV, "6.12")
    assert bases.current().name == "6.12" and not bases.is_default()
    assert bases.select("7.3").name == "7.3"
    assert bases.current().suite == "trixie-backports"


def test_unknown_base_lists_the_known_ones(monkeypatch):
    monkeypatch.setenv(bases.ENV, "6.1")
    with pytest.raises(HarnessError) as e:
        bases.current()
    assert str(e.value) == "unknown base '6.1'; known bases: 7.3, 7.2 (default), 6.12"


# ---------------------------------------------------------------- the argument

def test_base_option_selects_the_base(root):
    a = cli.parser().parse_args(["--base", "6.12", "kernel", "--variant", "scx"])
    assert a.base == "6.12" and a.variant == "scx" and bases.current().name == "6.12"


def test_base_option_is_checked(root, capsys):
    with pytest.raises(SystemExit) as e:
        cli.parser().parse_args(["--base", "6.1", "kernel"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "argument --base: invalid value '6.1' (want a kernel base: 7.3, 7.2, 6.12)" in err
    assert len(err.strip().splitlines()) == 1


def test_variant_is_checked_against_the_bases_list(root, capsys):
    # 6.12's list has no mainline-debug, and the message says whose list.
    with pytest.raises(SystemExit) as e:
        cli.parser().parse_args(["--base", "6.12", "kernel", "--variant", "mainline-debug"])
    assert e.value.code == 2
    assert ("want a kernel variant of configs/variants.6.12: base, mainline, steal, debug, scx"
            in capsys.readouterr().err)


def test_unknown_base_in_the_environment_stops_the_command(root, monkeypatch, capsys):
    monkeypatch.setenv(bases.ENV, "nope")
    assert cli.main(["kernel"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("idlesteal: error: IDLESTEAL_BASE: unknown base 'nope'; "
                           "known bases: 7.3, 7.2 (default), 6.12")
    assert not root.exists()


# ---------------------------------------------------------------- the paths

def test_default_base_keeps_todays_paths(root, monkeypatch):
    monkeypatch.delenv(bases.ENV, raising=False)
    assert paths.build_dir() == root
    assert paths.tree_dir() == root / "linux"
    assert paths.obj_dir("scx") == root / "obj-scx"
    assert paths.runs_dir() == root / "runs"
    assert source.apt_dir() == root / "apt"
    assert build.obj_for("mainline") == root / "base" / "obj-mainline"


def test_other_bases_build_apart(root, monkeypatch):
    seen = {}
    for name in bases.BASES:
        monkeypatch.setenv(bases.ENV, name)
        seen[name] = (paths.build_dir(), paths.tree_dir(), paths.obj_dir("scx"),
                      paths.runs_dir(), source.apt_dir())
    assert seen["6.12"] == (root / "ports/6.12", root / "ports/6.12/linux",
                            root / "ports/6.12/obj-scx", root / "ports/6.12/runs",
                            root / "ports/6.12/apt")
    assert seen["7.3"][0] == root / "ports/7.3"
    every = [p for dirs in seen.values() for p in dirs]
    assert len(set(every)) == len(every)            # no directory shared by two bases


def test_apt_lists_are_the_bases_suite(root, monkeypatch):
    monkeypatch.setenv("IDLESTEAL_DEBIAN_MIRROR", "http://mirror.invalid/debian")
    monkeypatch.setenv(bases.ENV, "6.12")
    conf = source.write_apt_config()
    assert conf == root / "ports/6.12/apt/apt.conf"
    assert (root / "ports/6.12/apt/etc/sources.list").read_text().endswith(
        "http://mirror.invalid/debian trixie main\n")
    monkeypatch.setenv(bases.ENV, "7.3")
    source.write_apt_config()
    assert "trixie-backports main" in (root / "ports/7.3/apt/etc/sources.list").read_text()


def test_wanted_version_follows_the_base(monkeypatch):
    monkeypatch.delenv("IDLESTEAL_DEB_VERSION", raising=False)
    monkeypatch.setenv(bases.ENV, "6.12")
    assert source.wanted_version() == "6.12.117-1"


def without_series(monkeypatch, name: str = "6.12") -> None:
    """Select a copy of base `name` that has no series of its own (every
    known base has one now; a new base starts without)."""
    monkeypatch.setitem(bases.BASES, name, dataclasses.replace(bases.get(name), patches=None))
    monkeypatch.setenv(bases.ENV, name)


def test_no_series_on_a_port(monkeypatch, tmp_path):
    without_series(monkeypatch)
    assert tree.read_series() == []
    with pytest.raises(HarnessError, match="no series of its own"):
        tree.export(tree=tmp_path, pdir=None)


def test_each_series_has_its_own_directory(monkeypatch):
    for name, rel in (("7.2", "patches"), ("7.3", "patches/ports/7.3"),
                      ("6.12", "patches/ports/6.12")):
        monkeypatch.setenv(bases.ENV, name)
        assert paths.patches_dir() == paths.REPO / rel
        assert tree.series_path() == paths.REPO / rel / "series"


def test_the_7_3_series_is_the_default_bases_rebased(monkeypatch):
    """patches/ports/7.3/: the same changes in the same order (numbered
    series, then the separate patches), its own cover letter."""
    subjects = {}
    for name in ("7.2", "7.3"):
        monkeypatch.setenv(bases.ENV, name)
        subjects[name] = [tree.patch_subject(p) for p in tree.read_series()]
        assert all(p.is_relative_to(paths.patches_dir()) for p in tree.read_series())
        assert (paths.patches_dir() / tree.COVER_LETTER).is_file()
    assert subjects["7.3"] == subjects["7.2"] and len(subjects["7.3"]) >= 9


def test_the_6_12_series_is_the_default_bases_backported(monkeypatch):
    """patches/ports/6.12/: the numbered series of 7.2 in the same order,
    the separate patches but the SMT one (6.12's select_idle_capacity() has
    no idle-core tier), a cover letter that says what changed."""
    subjects = {}
    for name in ("7.2", "6.12"):
        monkeypatch.setenv(bases.ENV, name)
        subjects[name] = [tree.patch_subject(p) for p in tree.read_series()]
    numbered = [s for s in subjects["7.2"] if s not in tree.SEPARATE_SUBJECTS]
    assert len(numbered) >= 9
    assert subjects["6.12"][:len(numbered)] == numbered
    rest = subjects["6.12"][len(numbered):]
    assert rest and all(s in tree.SEPARATE_SUBJECTS for s in rest)
    assert [s for s in subjects["7.2"] if s not in rest and s not in numbered] == [
        s for s in subjects["7.2"] if "SMT core" in s]
    monkeypatch.setenv(bases.ENV, "6.12")
    cover = (paths.patches_dir() / "cover-letter.txt").read_text()
    assert "6.12" in cover and "throttle_cfs_rq()" in cover


def test_stress_knows_7_3_has_the_series(monkeypatch):
    from idlesteal.runs import stress
    monkeypatch.setenv(bases.ENV, "7.3")
    assert stress.series_kernel("steal") and stress.series_kernel("debug")
    assert not stress.series_kernel("mainline-debug")


def test_base_in_every_results_provenance(monkeypatch):
    monkeypatch.setenv(bases.ENV, "6.12")
    prov = provenance.provenance({}, qemu="/nonexistent/qemu")
    assert prov["base"] == {"name": "6.12", "package": "linux-source-6.12",
                            "version": "6.12.117-1", "sha256": bases.get("6.12").sha256,
                            "suite": "trixie", "series": True}


def test_jobs_from_the_environment(monkeypatch):
    monkeypatch.setenv("IDLESTEAL_JOBS", "2")
    assert build.default_jobs() == 2
    assert "-j2" in build.make_cmd(Path("/src"), Path("/obj"), "bzImage")
    monkeypatch.setenv("IDLESTEAL_JOBS", "x")
    assert build.default_jobs() >= 2


def test_stress_knows_a_port_has_no_series(monkeypatch):
    from idlesteal.runs import stress
    monkeypatch.setenv(bases.ENV, "6.12")
    assert stress.series_kernel("steal") and not stress.series_kernel("mainline")
    without_series(monkeypatch)
    assert not stress.series_kernel("scx") and not stress.series_kernel("base")
    monkeypatch.setenv(bases.ENV, bases.DEFAULT)
    assert stress.series_kernel("scx") and not stress.series_kernel("mainline")



def test_base_in_a_bench_results_meta(monkeypatch):
    from idlesteal.runs import bench
    from idlesteal.report import ab as report
    monkeypatch.setenv(bases.ENV, "6.12")
    s = bench.BenchSpec(a=bench.Side("A", ("NO_STEAL",)), b=bench.Side("B", ("STEAL",)),
                        levels=[1], size=10, reps=2, waste="off")
    meta = report.metadata(s, "2x2x2", {"source": {"version": "6.12.117-1"}}, "7.2.22", {})
    assert meta["base"]["name"] == "6.12" and meta["debian_version"] == "6.12.117-1"
