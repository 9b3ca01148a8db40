"""scx_idlesteal into a sched-ext/scx tree (idlesteal/scx/upstream.py):
the manifest, the README and the listings, on a small tree laid out as
the scx repository is."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from idlesteal.scx import own, upstream
from idlesteal.util import HarnessError

WORKSPACE = """[workspace]
members = [
    "rust/scx_cargo",
    "rust/scx_utils",
    "scheds/rust/scx_beerland",
    "scheds/rust/scx_lavd",
    "tools/xtask",
]
resolver = "2"
"""
UTILS = """[package]
name = "scx_utils"
version = "1.1.2"

[dependencies]
libbpf-rs = "=0.26.2"
"""
LIST = """# Schedulers

- [scx_beerland](scx_beerland/README.md)
- [scx_lavd](scx_lavd/README.md)
"""
BUILD = """| Scheduler name | Example build command |
|----------------|------------------------|
| `scx_beerland` | `cargo build --release -p scx_beerland` |
| `scx_lavd`     | `cargo build --release -p scx_lavd` |

---
"""
SERVICES = "# List of scx_schedulers: scx_beerland scx_lavd\nSCX_SCHEDULER=scx_lavd\n"


def tree(tmp_path: Path) -> Path:
    t = tmp_path / "scx"
    for path, text in {"Cargo.toml": WORKSPACE, "rust/scx_utils/Cargo.toml": UTILS,
                       "scheds/rust/README.md": LIST, "CARGO_BUILD.md": BUILD,
                       "services/scx": SERVICES}.items():
        (t / path).parent.mkdir(parents=True, exist_ok=True)
        (t / path).write_text(text)
    return t


def test_manifest_takes_the_trees_crates_and_versions():
    text = (own.OWN_DIR / "Cargo.toml").read_text()
    m = tomllib.loads(upstream.manifest(text, "1.1.2", {"libbpf-rs": "=0.26.2"}))
    ours = tomllib.loads(text)
    assert m["package"]["name"] == "scx_idlesteal" and m["package"]["version"] == "1.1.2"
    assert "publish" not in m["package"]
    assert m["package"]["metadata"]["scx"]["ci"]["use_clippy"] is True
    deps = m["dependencies"]
    assert deps["scx_utils"] == {"path": "../../../rust/scx_utils", "version": "1.1.2"}
    assert deps["scx_stats_derive"]["path"] == "../../../rust/scx_stats/scx_stats_derive"
    assert deps["libbpf-rs"] == "=0.26.2"
    assert m["build-dependencies"]["scx_cargo"]["path"] == "../../../rust/scx_cargo"
    assert m["dev-dependencies"]["scx_utils"]["features"] == ["testutils"]
    # every other dependency as the crate has it
    for name, req in ours["dependencies"].items():
        if name not in upstream.PATH_DEPS and name != "libbpf-rs":
            assert deps[name] == req
    with pytest.raises(HarnessError, match="does not depend on scx_cargo"):
        upstream.manifest('[package]\nname = "x"\n[dependencies]\nscx_utils = "1"\n',
                          "1.1.2", {})


def test_readme_links_out_of_the_crate_become_names():
    out = upstream.readme("See [docs/scx.md](../../docs/scx.md) and [scx](https://x.org).")
    assert out == "See docs/scx.md (in the idlesteal repository) and [scx](https://x.org)."
    assert "](../../" not in upstream.readme((own.OWN_DIR / "README.md").read_text())


def test_add_lists_the_scheduler_in_order(tmp_path):
    t = tree(tmp_path)
    upstream.add(t)
    assert '    "scheds/rust/scx_beerland",\n    "scheds/rust/scx_idlesteal",\n' \
        '    "scheds/rust/scx_lavd",\n' in (t / "Cargo.toml").read_text()
    assert "(scx_beerland/README.md)\n- [scx_idlesteal](scx_idlesteal/README.md)\n- [scx_lavd]" \
        in (t / "scheds/rust/README.md").read_text()
    assert "scx_beerland` |\n| `scx_idlesteal` | `cargo build --release -p scx_idlesteal` |\n" \
        in (t / "CARGO_BUILD.md").read_text()
    assert (t / "services/scx").read_text().startswith(
        "# List of scx_schedulers: scx_beerland scx_idlesteal scx_lavd\nSCX_SCHEDULER=scx_lavd")
    dest = t / upstream.DEST
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*")
                  if p.is_file() or p.is_symlink()) == \
        sorted(list(upstream.FILES) + ["Cargo.toml", "LICENSE"])
    assert (dest / "LICENSE").is_symlink() and str((dest / "LICENSE").readlink()) == \
        "../../../LICENSE"
    assert (dest / "src/bpf/main.bpf.c").read_bytes() == \
        (own.OWN_DIR / "src/bpf/main.bpf.c").read_bytes()
    assert not (dest / "Cargo.lock").exists() and not (dest / "packaging").exists()
    with pytest.raises(HarnessError, match="already has scx_idlesteal"):
        upstream.add(t)


def test_a_tree_laid_out_otherwise_is_refused(tmp_path):
    t = tree(tmp_path)
    (t / "CARGO_BUILD.md").write_text("no table here\n")
    with pytest.raises(HarnessError, match="CARGO_BUILD.md: no line like"):
        upstream.add(t)
    with pytest.raises(HarnessError, match="is .* a sched-ext/scx tree"):
        upstream.tree_version(tmp_path / "elsewhere")
    (t / "rust/scx_utils/Cargo.toml").write_text('[package]\nversion = "1"\n')
    with pytest.raises(HarnessError, match="no version of libbpf-rs"):
        upstream.tree_pin(t, "libbpf-rs")


def test_the_series_author_signs_it(tmp_path):
    assert upstream.series_author().endswith(">")
    (tmp_path / "0001-x.patch").write_text("From 0 Mon\nFrom: A B <a@b.org>\nSubject: x\n")
    assert upstream.series_author(tmp_path) == "A B <a@b.org>"
    with pytest.raises(HarnessError, match="no From: line"):
        upstream.series_author(tmp_path / "none")


def test_the_kept_scx_loader_patch_names_it_everywhere_an_entry_needs():
    (patch,) = sorted((own.OWN_DIR.parents[1] / "patches/scx-loader").glob("0001-*.patch"))
    text = patch.read_text()
    files = {}
    for chunk in text.split("diff --git ")[1:]:
        name = chunk.split()[0][2:]
        files[name] = [x[1:] for x in chunk.splitlines() if x.startswith("+")
                       and not x.startswith("+++")]
    lib = files["crates/scx_loader/src/lib.rs"]
    assert '    #[serde(rename = "scx_idlesteal")]' in lib and "    Idlesteal," in lib
    assert '            "scx_idlesteal" => Ok(SupportedSched::Idlesteal),' in lib
    assert '            SupportedSched::Idlesteal => "scx_idlesteal",' in lib
    cfg = files["crates/scx_loader/src/config.rs"]
    assert "        SupportedSched::Idlesteal," in cfg            # the default configuration
    assert "        | SupportedSched::Idlesteal => vec![]," in cfg  # no flags in any mode
    assert "[scheds.scx_idlesteal]" in cfg                       # the test's text
    assert '            "scx_idlesteal",' in files["crates/scx_loader/src/main.rs"]
    assert "* For `scx_idlesteal`:" in files["crates/scx_loader/configuration.md"]
    assert f"From: {upstream.series_author()}" in text and "base-commit: " in text


def test_the_kept_scx_patch_carries_the_sources_as_they_are():
    """patches/scx/ is re-exported (make scx-upstream) when the crate changes."""
    (patch,) = sorted((own.OWN_DIR.parents[1] / "patches/scx").glob("0001-*.patch"))
    added: dict[str, str] = {}
    for chunk in patch.read_text().split("\ndiff --git ")[1:]:
        name = chunk.split()[0][2:]
        if "\nnew file mode 100644\n" in chunk:
            body = chunk.split("\n@@ ", 1)[1].split("\n", 1)[1]
            added[name] = "".join(x[1:] + "\n" for x in body.splitlines()
                                  if x.startswith("+"))
    for f in upstream.FILES:
        want = (own.OWN_DIR / f).read_text()
        if f == "README.md":
            want = upstream.readme(want)
        assert added[f"{upstream.DEST}/{f}"] == want, \
            f"patches/scx/ is older than tools/scx_idlesteal/{f}: run make scx-upstream"
