"""build: the variants file, %base variants (no guest, no build)."""
from __future__ import annotations

import pytest

from idlesteal.kernel import build
from idlesteal import paths
from idlesteal.util import HarnessError


def test_mainline_variants_build_from_the_base_tag_beside_build_linux():
    assert build.from_base("mainline") and build.from_base("mainline-debug")
    assert not build.from_base("steal") and not build.from_base("base")
    # the same layout as build/linux + build/obj-V, so ccache hits
    assert build.obj_for("mainline") == paths.build_dir() / "base" / "obj-mainline"
    assert build.base_tree() == paths.build_dir() / "base" / "linux"
    assert build.obj_for("steal") == paths.obj_dir("steal")
    # %base is not a fragment, and mainline has none of the series' options
    frags = [f.name for f in build.fragments_for("mainline-debug")]
    assert frags == ["guest.config", "debug.config"]
    assert build.base_targets("mainline") == ["tinyconfig"]


def test_posted_builds_the_series_without_the_separate_patches(monkeypatch):
    assert build.series_only("posted") and not build.from_base("posted")
    assert not build.series_only("base") and not build.series_only("mainline")
    assert build.obj_for("posted") == paths.build_dir() / "posted" / "obj-posted"
    assert [f.name for f in build.fragments_for("posted")] == ["guest.config", "trace.config"]
    monkeypatch.setattr(build.tree, "trailing_separate", lambda tree=None: 3)
    assert build.posted_rev() == "HEAD~3"
    monkeypatch.setattr(build.tree, "trailing_separate", lambda tree=None: 0)
    assert build.posted_rev() == "HEAD"


def test_base_and_series_words_exclude_each_other(monkeypatch):
    words = {"both": ["%base", "%series", "guest.config"]}
    monkeypatch.setattr(build, "_variant_words", lambda: words)
    with pytest.raises(HarnessError, match="exclude each other"):
        build.tree_for("both")
