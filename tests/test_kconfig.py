from pathlib import Path

import pytest

from idlesteal.kernel import kconfig
from idlesteal.util import HarnessError

FRAGMENT = """\
# comment
CONFIG_SMP=y
CONFIG_NR_CPUS=512
# CONFIG_SLUB_TINY is not set
CONFIG_CMDLINE="a b"
CONFIG_SMP=y
"""


def test_parse_fragment():
    f = kconfig.parse(FRAGMENT)
    assert f == {"CONFIG_SMP": "y", "CONFIG_NR_CPUS": "512", "CONFIG_SLUB_TINY": "n",
                 "CONFIG_CMDLINE": '"a b"'}


def test_later_fragments_override():
    merged = kconfig.merge([kconfig.parse("CONFIG_A=y\n"), kconfig.parse("# CONFIG_A is not set\n")])
    assert merged == {"CONFIG_A": "n"}


def test_check_reports_what_did_not_stick():
    wanted = kconfig.parse(FRAGMENT)
    config = kconfig.parse("CONFIG_SMP=y\nCONFIG_NR_CPUS=64\nCONFIG_SLUB_TINY=y\n")
    bad = {m.option: (m.wanted, m.got) for m in kconfig.check(wanted, config)}
    assert bad == {"CONFIG_NR_CPUS": ("512", "64"), "CONFIG_SLUB_TINY": ("n", "y"),
                   "CONFIG_CMDLINE": ('"a b"', "n")}


def test_absent_counts_as_not_set():
    assert kconfig.check({"CONFIG_X": "n"}, {}) == []


def test_check_files(tmp_path: Path):
    frag = tmp_path / "f.config"
    frag.write_text("CONFIG_A=y\n# CONFIG_B is not set\n")
    cfg = tmp_path / ".config"
    cfg.write_text("CONFIG_A=y\n# CONFIG_B is not set\n")
    kconfig.check_files([frag], cfg)
    cfg.write_text("# CONFIG_A is not set\nCONFIG_B=y\n")
    with pytest.raises(HarnessError) as e:
        kconfig.check_files([frag], cfg)
    assert "CONFIG_A: wanted y, got n" in str(e.value)
    assert "CONFIG_B: wanted n, got y" in str(e.value)


def test_guest_fragment_parses():
    frag = Path(__file__).resolve().parent.parent / "configs" / "guest.config"
    opts = kconfig.parse_file(frag)
    assert opts["CONFIG_SCHEDSTATS"] == "y"
    assert opts["CONFIG_SLUB_TINY"] == "n"
    assert int(opts["CONFIG_NR_CPUS"]) >= 512
