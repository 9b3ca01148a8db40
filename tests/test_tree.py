import subprocess
from pathlib import Path

import pytest

from idlesteal.kernel import tree
from idlesteal.util import HarnessError

DEBIAN_GITIGNORE = """\
# Normal rules
.*
!.gitignore

# bc language scripts (not LLVM bitcode)
!kernel/time/timeconst.bc

#
# Debian packaging: ignore everything at the top level, since it isn't
# included in our repository
#
/*
!/debian/
"""


def test_strip_debian_gitignore_block():
    out = tree.strip_debian_gitignore(DEBIAN_GITIGNORE)
    assert out.endswith("!kernel/time/timeconst.bc\n")
    assert "/*" not in out.splitlines() and "!/debian/" not in out
    assert tree.strip_debian_gitignore(out) == out


def sh(cwd: Path, *cmd: str) -> str:
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@x", "GIT_AUTHOR_DATE": "@1700000000 +0000",
           "GIT_COMMITTER_DATE": "@1700000000 +0000", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "linux"
    r.mkdir()
    sh(r, "git", "init", "-q", "-b", "master")
    sh(r, "git", "config", "user.name", "T")
    sh(r, "git", "config", "user.email", "t@x")
    (r / "a.c").write_text("int a;\n")
    sh(r, "git", "add", "-A")
    sh(r, "git", "commit", "-q", "-m", "Linux 7.2.13")
    sh(r, "git", "tag", "base")
    for i, subj in enumerate(["sched: add sparsemask", "sched/fair: steal tasks"]):
        (r / f"f{i}.c").write_text(f"int f{i};\n")
        sh(r, "git", "add", "-A")
        sh(r, "git", "commit", "-q", "-m", f"{subj}\n\nBody {i}.")
    return r


def test_export_is_deterministic_and_keeps_cover_text(repo: Path, tmp_path: Path):
    pdir = tmp_path / "patches"
    pdir.mkdir()
    (pdir / "cover-letter.txt").write_text("sched: steal idle\n\nThe blurb.\n")
    series = tree.export(repo, pdir)
    assert series == ["0001-sched-add-sparsemask.patch", "0002-sched-fair-steal-tasks.patch"]
    first = {p.name: p.read_text() for p in pdir.iterdir()}
    cover = first["0000-cover-letter.patch"]
    assert f"Subject: [{tree.SUBJECT_PREFIX} 0/2] sched: steal idle" in cover
    assert "The blurb." in cover and "***" not in cover
    assert first["0001-sched-add-sparsemask.patch"].startswith("From " + "0" * 40)
    assert tree.read_series(pdir) == [pdir / s for s in series]
    tree.export(repo, pdir)
    assert {p.name: p.read_text() for p in pdir.iterdir()} == first
    # Without cover-letter.txt the existing cover letter's text is kept.
    (pdir / "cover-letter.txt").unlink()
    tree.export(repo, pdir)
    again = (pdir / "0000-cover-letter.patch").read_text()
    assert again == cover


def test_export_puts_separate_commits_outside_the_series(repo: Path, tmp_path: Path):
    """A trailing commit with a SEPARATE_SUBJECTS subject is exported on its
    own (patches/separate/, not numbered in the series, its own prefix) and
    listed last in patches/series, so that the tree still gets it."""
    subj = tree.SEPARATE_SUBJECTS[0]
    (repo / "smt.c").write_text("int smt;\n")
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-q", "-m", f"{subj}\n\nBody.")
    assert tree.trailing_separate(repo) == 1
    pdir = tmp_path / "patches"
    pdir.mkdir()
    (pdir / "cover-letter.txt").write_text("sched: steal idle\n\nThe blurb.\n")
    series = tree.export(repo, pdir)
    sep = [s for s in series if s.startswith("separate/")]
    assert series[:2] == ["0001-sched-add-sparsemask.patch", "0002-sched-fair-steal-tasks.patch"]
    assert len(sep) == 1 and sep[0].startswith("separate/0001-sched-fair-Pick-a-stable")
    cover = (pdir / "0000-cover-letter.patch").read_text()
    assert f"Subject: [{tree.SUBJECT_PREFIX} 0/2] sched: steal idle" in cover
    text = (pdir / sep[0]).read_text()
    assert f"Subject: [{tree.SEPARATE_PREFIX}] {subj[:40]}" in " ".join(text.split())
    assert tree.read_series(pdir) == [pdir / s for s in series]
    first = {p.relative_to(pdir): p.read_text() for p in pdir.rglob("*.patch")}
    tree.export(repo, pdir)
    assert {p.relative_to(pdir): p.read_text() for p in pdir.rglob("*.patch")} == first
    # Dropped from the tree: dropped from patches/ too.
    sh(repo, "git", "reset", "-q", "--hard", "HEAD~1")
    assert tree.export(repo, pdir) == series[:2]
    assert not (pdir / "separate").exists()


def test_split_cover_finds_subject_and_blurb():
    text = ("From 0000 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 0/2] my series\n\n"
            "Line one.\n\nLine two.\n\nT (2):\n  a\n  b\n\n a.c | 1 +\n")
    assert tree.split_cover(text) == ("my series", "Line one.\n\nLine two.")


def test_apply_series_is_safe(repo: Path, tmp_path: Path):
    pdir = tmp_path / "patches"
    pdir.mkdir()
    tree.export(repo, pdir)
    patches = tree.read_series(pdir)
    # Up to date: nothing to do.
    assert tree.apply_series(tree=repo, patches=patches) == 0
    # A prefix is completed.
    sh(repo, "git", "reset", "-q", "--hard", "HEAD~1")
    assert tree.apply_series(tree=repo, patches=patches) == 1
    assert len(tree.commits(repo)) == 2
    # An extra local commit is not destroyed without --force.
    (repo / "wip.c").write_text("int wip;\n")
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-q", "-m", "wip: not exported")
    with pytest.raises(HarnessError, match="idlesteal export"):
        tree.apply_series(tree=repo, patches=patches)
    assert len(tree.commits(repo)) == 3
    # Uncommitted changes are refused too.
    (repo / "a.c").write_text("int changed;\n")
    with pytest.raises(HarnessError, match="uncommitted"):
        tree.apply_series(tree=repo, patches=patches)
    assert tree.apply_series(force=True, tree=repo, patches=patches) == 2
    assert [c.subject for c in tree.commit_changes(repo)] == \
        ["sched: add sparsemask", "sched/fair: steal tasks"]
    assert not tree.is_dirty(repo)


def test_patch_subject(tmp_path: Path):
    p = tmp_path / "x.patch"
    p.write_text("From 0 Mon\nSubject: [PATCH 3/9] sched/fair: a long\n subject line\n\nbody\n")
    assert tree.patch_subject(p) == "sched/fair: a long subject line"


def test_a_port_exports_to_its_own_directory(repo: Path, tmp_path: Path, monkeypatch):
    """`--base 7.3 export` writes patches/ports/7.3/ (series, cover letter),
    prepare reads it back; the default base's export leaves ports/ alone and
    the port's leaves the default base's files alone."""
    from idlesteal import bases, paths
    root = tmp_path / "repo"
    monkeypatch.setattr(paths, "REPO", root)
    monkeypatch.setenv(bases.ENV, bases.DEFAULT)
    default = root / "patches"
    default.mkdir(parents=True)
    (default / "cover-letter.txt").write_text("sched: steal idle\n\nThe blurb.\n")
    assert tree.export(repo) == ["0001-sched-add-sparsemask.patch",
                                 "0002-sched-fair-steal-tasks.patch"]
    before = {p.relative_to(root): p.read_text() for p in default.rglob("*") if p.is_file()}

    monkeypatch.setenv(bases.ENV, "7.3")
    port = root / "patches" / "ports" / "7.3"
    port.mkdir(parents=True)
    (port / "cover-letter.txt").write_text("sched: steal idle (7.3)\n\nRebased.\n")
    assert tree.read_series() == []                    # nothing exported yet
    series = tree.export(repo)
    assert tree.read_series() == [port / s for s in series]
    assert "sched: steal idle (7.3)" in (port / tree.COVER_LETTER).read_text()
    assert tree.apply_series(tree=repo) == 0           # the tree is base + that series
    assert {p.relative_to(root): p.read_text() for p in default.rglob("*")
            if p.is_file() and "ports" not in p.parts} == before

    monkeypatch.setenv(bases.ENV, bases.DEFAULT)
    tree.export(repo)
    assert sorted(p.name for p in port.iterdir()) == sorted(
        [*series, "series", tree.COVER_LETTER, "cover-letter.txt"])
    # The refusal names the base's own series file.
    sh(repo, "git", "commit", "-q", "--allow-empty", "-m", "wip")
    monkeypatch.setenv(bases.ENV, "7.3")
    with pytest.raises(HarnessError, match=r"base` \+ patches/ports/7.3/series"):
        tree.apply_series(tree=repo)
