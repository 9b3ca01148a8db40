"""The server package's configuration step (idlesteal/kernel/distconfig.py)
against Debian's own configurations for 6.12 and 7.2 (linux-config-6.12
6.12.117-1 and linux-config-7.2 7.2.13-1, amd64) and 7.2's tinyconfig,
kept in tests/data/; and the package's version and instructions."""
from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from idlesteal import cli
from idlesteal.kernel import distconfig, kconfig, package
from idlesteal.util import HarnessError

DATA = Path(__file__).parent / "data"


def config(name: str) -> dict[str, str]:
    return kconfig.parse(lzma.decompress((DATA / name).read_bytes()).decode())


def names(cfg: dict[str, str]) -> set[str]:
    return {o[len("CONFIG_"):] for o in cfg}


DEB612 = config("debian-6.12.117-1-amd64.config.xz")
DEB72 = config("debian-7.2.13-1-amd64.config.xz")
TINY72 = config("tinyconfig-7.2.config.xz")
# A full configuration of a base lists the symbols it defines; 6.12's has
# SCHED_DEBUG, 7.2's does not (it went away before 7.2).  Neither lists
# ENABLE_DEFAULT_TRACERS: it is hidden once a tracer selects GENERIC_TRACER
# (Debian's) or while FTRACE is off (tinyconfig).
SYMS612 = names(DEB612)
SYMS72 = names(DEB72) | names(TINY72) | {"ENABLE_DEFAULT_TRACERS"}


def forced(changes: list[distconfig.Change]) -> set[str]:
    return {c.option for c in changes}


def test_debian_6_12_lacks_only_sched_ext():
    changes = distconfig.plan(DEB612, SYMS612)
    assert forced(changes) == {"CONFIG_SCHED_CLASS_EXT"}
    assert distconfig.report(changes) == [
        "forced CONFIG_SCHED_CLASS_EXT=y (not set): scx_idlesteal and the sched_ext side by side"]
    # what the series and the measure need is already there
    for opt in ("CONFIG_SCHEDSTATS", "CONFIG_DEBUG_FS", "CONFIG_SCHED_DEBUG",
                "CONFIG_EVENT_TRACING", "CONFIG_DEBUG_INFO_BTF"):
        assert DEB612[opt] == "y"


def test_debian_7_2_needs_nothing_forced():
    changes = distconfig.plan(DEB72, SYMS72)
    assert changes == []
    assert distconfig.report(changes) == [
        "forced nothing: the config has every option needed"]
    assert "SCHED_DEBUG" not in SYMS72


def test_a_tinyconfig_gets_every_option_with_a_reason():
    changes = distconfig.plan(TINY72, SYMS72)
    assert forced(changes) == {
        "CONFIG_SCHEDSTATS", "CONFIG_DEBUG_FS", "CONFIG_FTRACE",
        "CONFIG_ENABLE_DEFAULT_TRACERS", "CONFIG_BPF_SYSCALL", "CONFIG_BPF_JIT",
        "CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT", "CONFIG_DEBUG_INFO_BTF",
        "CONFIG_SCHED_CLASS_EXT"}
    lines = distconfig.report(changes)
    assert len(lines) == len(changes)
    assert all(ln.startswith("forced CONFIG_") and "(not set): " in ln for ln in lines)


def test_a_base_without_sched_ext_is_not_asked_for_it():
    syms = SYMS72 - {"SCHED_CLASS_EXT"}
    got = forced(distconfig.plan(TINY72, syms))
    assert not got & {"CONFIG_SCHED_CLASS_EXT", "CONFIG_DEBUG_INFO_BTF", "CONFIG_BPF_JIT"}
    assert "CONFIG_SCHEDSTATS" in got


def test_force_writes_the_plan_and_nothing_else(tmp_path):
    cfg = tmp_path / ".config"
    text = lzma.decompress((DATA / "debian-6.12.117-1-amd64.config.xz").read_bytes()).decode()
    cfg.write_text(text)
    changes = distconfig.plan(DEB612, SYMS612)
    distconfig.force(cfg, changes)
    after = kconfig.parse_file(cfg)
    differ = {o for o in set(after) | set(DEB612) if after.get(o, "n") != DEB612.get(o, "n")}
    assert differ == {"CONFIG_SCHED_CLASS_EXT"}
    # STEAL stays off: it is a scheduler feature, nothing in the config turns it on
    assert not [o for o in after if "STEAL" in o]
    distconfig.check_localversion("-idlesteal-v6-0123456789ab")
    with pytest.raises(HarnessError, match="letters, digits"):
        distconfig.check_localversion("-a b")


def test_set_options_replaces_a_not_set_line():
    text = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=m\n"
    got = distconfig.set_options(text, {"CONFIG_B": "y", "CONFIG_C": "n"})
    assert kconfig.parse(got) == {"CONFIG_A": "y", "CONFIG_B": "y", "CONFIG_C": "n"}
    assert got.count("CONFIG_B") == 1 and got.count("CONFIG_C") == 1


def test_verify_names_what_did_not_stick():
    changes = distconfig.plan(TINY72, SYMS72)
    good = dict(TINY72, **{c.option: c.now for c in changes}, CONFIG_EVENT_TRACING="y")
    distconfig.verify(good, changes)
    bad = dict(good, CONFIG_SCHED_CLASS_EXT="n", CONFIG_EVENT_TRACING="n")
    with pytest.raises(HarnessError) as e:
        distconfig.verify(bad, changes)
    assert "CONFIG_SCHED_CLASS_EXT: wanted y, got n" in str(e.value)
    assert "CONFIG_EVENT_TRACING: wanted y, got n" in str(e.value)


@pytest.mark.parametrize("line,ok", [("SCHED_FEAT(STEAL, false)", True),
                                     ("SCHED_FEAT(STEAL, true)", False),
                                     ("SCHED_FEAT(TTWU_QUEUE, true)", False)])
def test_steal_must_be_off_as_booted(tmp_path, line, ok):
    f = tmp_path / "kernel/sched/features.h"
    f.parent.mkdir(parents=True)
    f.write_text(f"SCHED_FEAT(PLACE_LAG, true)\n{line}\n")
    if ok:
        distconfig.steal_off_at_boot(tmp_path)
    else:
        with pytest.raises(HarnessError, match="STEAL"):
            distconfig.steal_off_at_boot(tmp_path)


def test_kconfig_symbols_reads_config_and_menuconfig(tmp_path):
    (tmp_path / "kernel").mkdir()
    (tmp_path / "Kconfig").write_text("menuconfig FTRACE\n\tbool \"x\"\nconfig SCHEDSTATS\n")
    (tmp_path / "kernel/Kconfig.preempt").write_text("config SCHED_CORE\n  # config NOT\n")
    assert distconfig.kconfig_symbols(tmp_path) == {"FTRACE", "SCHEDSTATS", "SCHED_CORE"}
    with pytest.raises(HarnessError, match="not a kernel tree"):
        distconfig.kconfig_symbols(tmp_path / "kernel" / "nothing")


def test_the_release_and_the_instructions_name_the_series_and_its_commit(tmp_path):
    local = package.localversion("0123456789abcdef0123")
    assert local == "-idlesteal-v6-0123456789ab"
    release = f"6.12.117{local}"
    deb = tmp_path / f"linux-image-{release}_6.12.117-1+idlesteal.v6.0123456789ab_amd64.deb"
    deb.write_bytes(b"")
    pkg = package.Package("6.12", release, "6.12.117-1+idlesteal.v6.0123456789ab",
                          [tmp_path / f"linux-headers-{release}_x_amd64.deb", deb],
                          "debian", "0" * 64, "", [], "0123456789abcdef0123")
    text = package.instructions(pkg)
    assert f"sudo apt install ./{deb.name}" in text
    assert f"Debian GNU/Linux, with Linux {release}" in text
    assert f"sudo apt remove linux-image-{release}" in text
    assert "NO_STEAL" in text and "suite --host" in text
    rpm = tmp_path / f"kernel-6.12.117_idlesteal_v6_0123456789ab-1.x86_64.rpm"
    rpm_text = package.instructions(
        package.Package("6.12", release, "v", [rpm], "", "", "", [], "0123456789ab"), "rpm")
    assert f"sudo rpm -ivh {rpm.name}" in rpm_text and f"/boot/vmlinuz-{release}" in rpm_text
    with pytest.raises(HarnessError, match="no kernel image"):
        package.image_package(package.Package("6.12", release, "v", [], "", "", "", [], "c"))


def test_the_command_takes_one_starting_configuration(tmp_path, capsys):
    (tmp_path / "c").write_text("CONFIG_X=y\n")
    with pytest.raises(SystemExit):
        cli.main(["package", "--config", str(tmp_path / "c"), "--debian-config"])
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["package", "--config", str(tmp_path / "none")])
    assert "argument --config: invalid value" in capsys.readouterr().err


def test_an_earlier_package_is_found_only_whole_and_for_the_same_inputs(tmp_path, monkeypatch):
    monkeypatch.setattr(package, "out_dir", lambda: tmp_path / "packages")
    monkeypatch.setattr(package.build, "posted_rev", lambda: "HEAD")   # no tree here
    monkeypatch.setattr(package.tree, "worktree", lambda *a: tmp_path)
    monkeypatch.setattr(package.tree, "head", lambda src: "c0ffee" * 6 + "0000")
    monkeypatch.setattr(package.bases, "current", lambda: package.bases.get("6.12"))
    start, lsmod = tmp_path / "server.config", tmp_path / "server.lsmod"
    start.write_text("CONFIG_X=y\n")
    out = tmp_path / "packages"
    out.mkdir()
    deb = out / "linux-image-r_1_amd64.deb"
    deb.write_bytes(b"deb")
    pkg = package.Package("6.12", "r", "1", [deb], str(start), package.sha256_file(start),
                          str(lsmod), [], "c0ffee" * 6 + "0000")
    package.record("r", "deb").write_text(json.dumps(pkg.to_json()))
    assert package.existing(start, lsmod) == pkg
    assert package.existing(start) is None                    # not reduced: another package
    assert package.existing(start, lsmod, "rpm") is None      # another format
    deb.write_bytes(b"debx")                                   # not the file it wrote
    assert package.existing(start, lsmod) is None
    deb.write_bytes(b"deb")
    start.write_text("CONFIG_X=m\n")                          # another configuration
    assert package.existing(start, lsmod) is None


def test_collect_takes_only_the_release_s_rpms(tmp_path, monkeypatch):
    monkeypatch.setattr(package, "out_dir", lambda: tmp_path / "packages")
    rpms = tmp_path / "obj" / "rpmbuild" / "RPMS" / "x86_64"
    rpms.mkdir(parents=True)
    names = ("kernel-7.2.13_idlesteal_v6_aaa-1.x86_64.rpm",
             "kernel-headers-7.2.13_idlesteal_v6_aaa-1.x86_64.rpm",
             "kernel-7.2.13_idlesteal_v6_bbb-1.x86_64.rpm")       # an earlier build's
    for n in names:
        (rpms / n).write_bytes(b"rpm")
    (tmp_path / "packages").mkdir()
    stale = tmp_path / "packages" / "kernel-7.2.13_idlesteal_v6_aaa-0.x86_64.rpm"
    stale.write_bytes(b"rpm")
    got = package.collect(tmp_path / "obj", "rpm", "7.2.13-idlesteal-v6-aaa", "unused")
    assert sorted(p.name for p in got) == sorted(names[:2])
    assert package.image_package_of(got).name == names[0]
    assert (rpms / names[2]).exists() and not stale.exists()
