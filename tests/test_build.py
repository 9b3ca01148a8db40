"""build: the variants file, %base variants (no guest, no build)."""
from __future__ import annotations

from idlesteal import build, paths


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
