"""The kernel git work tree: pristine source as commit tagged `base`, the
series from patches/ applied on top with `git am`, and `export` back.

Each base with a series has its own patches directory (bases.Base.patches,
paths.patches_dir()): patches/ for the default base, patches/ports/<base>/
for a port; everything here reads and writes the selected base's.

The tree is never reset silently: if HEAD is not base + a prefix of the
series (e.g. someone has commits that were not exported yet), `prepare`
refuses unless forced.
"""
from __future__ import annotations

import email.header
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import bases, paths
from . import source
from .source import SourceInfo
from ..util import HarnessError, log, run, step

BASE_TAG = "base"
IDENT_NAME = "idlesteal"
IDENT_EMAIL = "idlesteal@localhost"
COVER_LETTER = "0000-cover-letter.patch"
COVER_TEXT = "cover-letter.txt"
# cover-letter.txt marks the tables `idlesteal tables` writes with lines
# "[table NAME]" and "[end table NAME]"; the exported letter leaves them out.
COVER_TABLE_MARK = re.compile(r"^\[(end )?table [\w-]+\]$")
# The series revision in every subject ("[RFC PATCH v6 03/09] ..."): the
# revision the list sees next, after Steve Sistare's v1-v4 and Chen
# Jinghuang's v5 (the harness's unposted drafts take no number); bump it with
# each posting of a reworked series.
SUBJECT_PREFIX = "RFC PATCH v6"
# Commits kept on top of the series in the tree but posted on their own, not
# as part of it: the trailing commits of base..HEAD with these subjects go to
# patches/separate/ (one file each, listed at the end of patches/series after
# a comment, so the tree still gets them) instead of the numbered series.
SEPARATE_SUBJECTS: tuple[str, ...] = (
    "sched/fair: Pick a stable CPU of an idle SMT core in select_idle_capacity()",
    # it removed none of the arrival waste it was for (results/v7/)
    "sched/fair: Kick an idle CPU of the LLC when a CPU becomes overloaded",
    # measurement only, never posted: why idle entries pull nothing
    "sched/debug: Count why newidle balancing leaves a CPU idle",
)
# Recipients of the series: the SCHEDULER entry of the 7.2 tree's MAINTAINERS
# (maintainers To, reviewers and the list Cc) and the authors of v1-v5.
POST_TO: tuple[str, ...] = (
    "Peter Zijlstra <peterz@infradead.org>", "Ingo Molnar <mingo@redhat.com>",
    "Juri Lelli <juri.lelli@redhat.com>", "Vincent Guittot <vincent.guittot@linaro.org>",
)
POST_CC: tuple[str, ...] = (
    "Dietmar Eggemann <dietmar.eggemann@arm.com>", "Steven Rostedt <rostedt@goodmis.org>",
    "Ben Segall <bsegall@google.com>", "Mel Gorman <mgorman@suse.de>",
    "Valentin Schneider <vschneid@redhat.com>", "K Prateek Nayak <kprateek.nayak@amd.com>",
    "Steve Sistare <steven.sistare@oracle.com>", "Chen Jinghuang <chenjinghuang2@huawei.com>",
    "linux-kernel@vger.kernel.org",
)
SEPARATE_DIR = "separate"
SEPARATE_PREFIX = "RFC PATCH"
SEPARATE_HEADER = ("# Not part of the series: posted on its own, applied on top for its\n"
                   "# measurement (tree.SEPARATE_SUBJECTS).\n")
SERIES_HEADER = ("# Patch series applied on tag `base` with git am, in order.\n"
                 "# Written by `idlesteal export`; 0000-cover-letter.patch is not listed.\n")

# Debian's top-level .gitignore ends with a block that ignores every top-level
# entry except debian/; in a git tree of the extracted source that would hide
# every new file.  It is removed before the base commit.
DEBIAN_GITIGNORE_MARK = "# Debian packaging: ignore everything at the top level"


def strip_debian_gitignore(text: str) -> str:
    lines = text.splitlines(keepends=True)
    idx = next((i for i, l in enumerate(lines) if l.startswith(DEBIAN_GITIGNORE_MARK)), None)
    if idx is None:
        return text
    start = idx
    while start > 0 and lines[start - 1].strip() in ("#", ""):
        start -= 1
    end = idx
    while end < len(lines) and lines[end].strip() != "!/debian/":
        end += 1
    return "".join(lines[:start] + lines[end + 1:])


def git(*args: str, cwd: Path | None = None, check: bool = True,
        env: dict[str, str] | None = None) -> str:
    return run(["git", *args], cwd=cwd or paths.tree_dir(), capture=True,
               check=check, env=env).stdout


def _ident_env(date: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_AUTHOR_NAME=IDENT_NAME, GIT_AUTHOR_EMAIL=IDENT_EMAIL,
               GIT_COMMITTER_NAME=IDENT_NAME, GIT_COMMITTER_EMAIL=IDENT_EMAIL)
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return env


def has_base(tree: Path | None = None) -> bool:
    tree = tree or paths.tree_dir()
    if not (tree / ".git").exists():
        return False
    return run(["git", "rev-parse", "-q", "--verify", f"refs/tags/{BASE_TAG}"],
               cwd=tree, capture=True, check=False).returncode == 0


def create_tree(info: SourceInfo) -> Path:
    """Extract the tarball into build/linux and commit it as tag `base`.

    Idempotent: an existing tree with a `base` tag is left alone.
    """
    tree = paths.tree_dir()
    if has_base(tree):
        return tree
    if tree.exists() and any(tree.iterdir()):
        raise HarnessError(f"{tree} exists but has no `{BASE_TAG}` tag; move it away first")
    tmp = tree.with_name(tree.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"unpacking {Path(info.tarball).name} into {tree}")
    run(["tar", "-xJf", info.tarball, "-C", str(tmp), "--strip-components=1"])
    gi = tmp / ".gitignore"
    if gi.exists():
        gi.write_text(strip_debian_gitignore(gi.read_text()))
    # A fixed date (the tarball's mtime) makes the base commit reproducible.
    date = f"@{int(Path(info.tarball).stat().st_mtime)} +0000"
    env = _ident_env(date)
    git("init", "-q", "-b", "master", cwd=tmp)
    git("config", "user.name", IDENT_NAME, cwd=tmp)
    git("config", "user.email", IDENT_EMAIL, cwd=tmp)
    log("committing the pristine tree (git add of ~90k files takes a minute)")
    git("add", "-A", cwd=tmp)
    upstream = info.version.rsplit("-", 1)[0]
    msg = (f"Linux {upstream} (Debian {info.package} {info.version})\n\n"
           f"Pristine source from Debian's {info.package} {info.version}\n"
           f"(.deb sha256 {info.sha256}).\n\n"
           "The Debian packaging block at the end of the top-level .gitignore\n"
           "(\"ignore everything at the top level\" / !/debian/) was removed so\n"
           "git sees new files in this tree.\n")
    git("commit", "-q", "--no-verify", "-m", msg, cwd=tmp, env=env)
    git("tag", BASE_TAG, cwd=tmp)
    os.replace(tmp, tree)
    return tree


# ---------------------------------------------------------------- series

def series_path() -> Path:
    return paths.patches_dir() / "series"


def _rel(p: Path) -> str:
    """p relative to the repository (as the messages name it), else as is."""
    try:
        return str(p.relative_to(paths.REPO))
    except ValueError:
        return str(p)


def read_series(pdir: Path | None = None) -> list[Path]:
    """Patch files named in the base's series file (patches/series for the
    default base, paths.patches_dir()), in order ('#' comments allowed);
    none on a base the series does not apply to (bases.Base.series)."""
    if pdir is None and not bases.current().series:
        return []
    pdir = pdir or paths.patches_dir()
    sfile = pdir / "series"
    if not sfile.exists():
        return []
    out = []
    for line in sfile.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        p = pdir / line
        if not p.exists():
            raise HarnessError(f"{sfile}: {line} does not exist")
        out.append(p)
    return out


_SUBJ_PREFIX = re.compile(r"^\s*(\[[^]]*\]\s*)+")


def _clean_subject(subj: str) -> str:
    return _SUBJ_PREFIX.sub("", " ".join(subj.split()))


def patch_subject(patch: Path) -> str:
    """The Subject header of a mail-formatted patch, without [PATCH n/m]."""
    subj: list[str] = []
    in_subj = False
    for line in patch.read_text(errors="replace").splitlines():
        if line == "" and (subj or in_subj):
            break
        if in_subj and line[:1] in (" ", "\t"):
            subj.append(line.strip())
            continue
        in_subj = False
        if line.startswith("Subject:") and not subj:
            subj.append(line[len("Subject:"):].strip())
            in_subj = True
    text = " ".join(subj)
    decoded = "".join(part.decode(enc or "utf-8") if isinstance(part, bytes) else part
                      for part, enc in email.header.decode_header(text))
    return _clean_subject(decoded)


def _patch_id(diff_text: str, cwd: Path) -> str:
    proc = subprocess.run(["git", "patch-id", "--stable"], input=diff_text, text=True,
                          capture_output=True, cwd=cwd)
    return proc.stdout.split()[0] if proc.stdout.strip() else ""


@dataclass(frozen=True)
class Change:
    subject: str
    patch_id: str


def series_changes(patches: list[Path], cwd: Path) -> list[Change]:
    return [Change(patch_subject(p), _patch_id(p.read_text(errors="replace"), cwd))
            for p in patches]


def commits(tree: Path | None = None, rev_range: str = f"{BASE_TAG}..HEAD") -> list[str]:
    tree = tree or paths.tree_dir()
    return git("rev-list", "--reverse", rev_range, cwd=tree).split()


def commit_changes(tree: Path | None = None) -> list[Change]:
    tree = tree or paths.tree_dir()
    out = []
    for c in commits(tree):
        subj = git("log", "-1", "--format=%s", c, cwd=tree).strip()
        diff = git("show", "--format=commit %H", c, cwd=tree)
        out.append(Change(_clean_subject(subj), _patch_id(diff, tree)))
    return out


def is_dirty(tree: Path | None = None) -> bool:
    return bool(git("status", "--porcelain", "--untracked-files=no", cwd=tree).strip())


def am_in_progress(tree: Path | None = None) -> bool:
    tree = tree or paths.tree_dir()
    gitdir = Path(git("rev-parse", "--git-dir", cwd=tree).strip())
    if not gitdir.is_absolute():
        gitdir = tree / gitdir
    return (gitdir / "rebase-apply").exists() or (gitdir / "rebase-merge").exists()


def git_am(tree: Path, patches: list[Path]) -> None:
    if not patches:
        return
    env = _ident_env()
    proc = subprocess.run(["git", "am", "-q", "--committer-date-is-author-date",
                           *map(str, patches)], cwd=tree, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        subprocess.run(["git", "am", "--abort"], cwd=tree, capture_output=True)
        raise HarnessError("git am failed (aborted, tree left at the last good patch):\n"
                           + (proc.stdout + proc.stderr).strip()[-3000:])


def apply_series(force: bool = False, tree: Path | None = None,
                 patches: list[Path] | None = None) -> int:
    """Make HEAD = base + series.  Returns the number of patches applied now."""
    tree = tree or paths.tree_dir()
    patches = read_series() if patches is None else patches
    if am_in_progress(tree):
        if not force:
            raise HarnessError(f"a git am/rebase is in progress in {tree}; finish it or use --force")
        subprocess.run(["git", "am", "--abort"], cwd=tree, capture_output=True)
    if is_dirty(tree) and not force:
        raise HarnessError(f"{tree} has uncommitted changes; commit them and `idlesteal export`, "
                           "or use --force to discard them")
    want = series_changes(patches, tree)
    have = commit_changes(tree)
    if have == want:
        return 0
    if len(have) < len(want) and want[:len(have)] == have and not is_dirty(tree):
        git_am(tree, patches[len(have):])
        return len(patches) - len(have)
    if not force:
        lines = [f"{tree}: HEAD is not `{BASE_TAG}` + {_rel(series_path())}.",
                 f"  commits on the tree ({len(have)}):"]
        lines += [f"    {c.subject}" for c in have] or ["    (none)"]
        lines += [f"  patches in series ({len(want)}):"]
        lines += [f"    {c.subject}" for c in want] or ["    (none)"]
        first = next((i for i, (h, w) in enumerate(zip(have, want)) if h != w),
                     min(len(have), len(want)))
        lines += [f"  first difference at position {first + 1}."
                  + (" (same subject, different diff)" if first < min(len(have), len(want))
                     and have[first].subject == want[first].subject else ""),
                  f"If the tree is newer: `idlesteal export` saves its commits to "
                  f"{_rel(paths.patches_dir())}/.",
                  f"If {_rel(paths.patches_dir())}/ is newer: `idlesteal prepare --force` "
                  "resets the tree to "
                  "base + series (this DISCARDS the tree's commits)."]
        raise HarnessError("\n".join(lines))
    log(f"resetting {tree} to {BASE_TAG} (--force)")
    git("reset", "-q", "--hard", BASE_TAG, cwd=tree)
    git_am(tree, patches)
    return len(patches)


def prepare(force: bool = False) -> dict:
    """Fetch the source, create build/linux if needed and make its HEAD
    base + the base's series (patches/series for the default base);
    returns describe() of the tree."""
    with step(f"prepare {bases.current().name}"):
        info = source.fetch()
        create_tree(info)
        n = apply_series(force=force)
    desc = describe()
    log(f"tree {paths.tree_dir()} at {desc['head'][:12]}: base + {len(desc['commits'])} "
        f"patch(es) ({n} applied now), Debian {info.package} {info.version}")
    return desc


def worktree(path: Path, rev: str) -> Path:
    """A git worktree of build/linux at `path`, detached at `rev` (created
    on first use, moved to `rev` afterwards; build/linux's HEAD never moves)."""
    want = git("rev-parse", rev).strip()
    if not (path / ".git").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        git("worktree", "prune")
        git("worktree", "add", "-q", "--detach", str(path), want)
    elif git("rev-parse", "HEAD", cwd=path).strip() != want:
        git("checkout", "-q", "--detach", want, cwd=path)
    return path


def head(tree: Path | None = None) -> str:
    return git("rev-parse", "HEAD", cwd=tree).strip()


def describe(tree: Path | None = None) -> dict:
    """What is built: HEAD, base, the commits on top and a hash of the series."""
    import hashlib
    tree = tree or paths.tree_dir()
    h = hashlib.sha256()
    for p in read_series():
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    subjects = [git("log", "-1", "--format=%s", c, cwd=tree).strip() for c in commits(tree)]
    return {"head": head(tree), "base": git("rev-parse", BASE_TAG, cwd=tree).strip(),
            "commits": subjects, "dirty": is_dirty(tree),
            "series_sha256": h.hexdigest(), "series": [p.name for p in read_series()]}


# ---------------------------------------------------------------- export

def split_cover(text: str) -> tuple[str, str]:
    """(subject, blurb) of a cover letter made by format-patch --cover-letter."""
    head_part, _, body = text.partition("\n\n")
    subject = ""
    hlines = head_part.splitlines()
    for i, line in enumerate(hlines):
        if line.startswith("Subject:"):
            parts = [line[len("Subject:"):].strip()]
            for cont in hlines[i + 1:]:
                if cont[:1] not in (" ", "\t"):
                    break
                parts.append(cont.strip())
            subject = _clean_subject(" ".join(parts))
    blines = body.splitlines()
    end = len(blines)
    for i, line in enumerate(blines):
        if re.match(r"^\S.* \(\d+\):$", line) and i + 1 < len(blines) \
                and blines[i + 1].startswith("  "):
            end = i
            break
    return subject, "\n".join(blines[:end]).strip("\n")


def cover_text(pdir: Path) -> tuple[str, str] | None:
    txt = pdir / COVER_TEXT
    if txt.exists():
        subject, _, blurb = txt.read_text().partition("\n")
        blurb = "\n".join(line for line in blurb.split("\n") if not COVER_TABLE_MARK.match(line))
        return subject.strip(), blurb.strip("\n")
    cl = pdir / COVER_LETTER
    if cl.exists():
        subject, blurb = split_cover(cl.read_text(errors="replace"))
        if subject and "*** SUBJECT HERE ***" not in subject:
            return subject, blurb
    return None


def refresh_cover(pdir: Path) -> bool:
    """Put cover-letter.txt's text into an exported 0000-cover-letter.patch
    in place of the text it has, as `export` would (the rest of the letter,
    the diffstat, comes from the tree and is left as it is).  Returns
    whether the file changed; False too when there is no letter to refresh."""
    cl, keep = pdir / COVER_LETTER, cover_text(pdir)
    if not cl.exists() or keep is None or not (pdir / COVER_TEXT).exists():
        return False
    text = cl.read_text()
    _, old = split_cover(text)
    if not old or text.count(old) != 1 or old == keep[1]:
        return False
    cl.write_text(text.replace(old, keep[1]))
    return True


def export(tree: Path | None = None, pdir: Path | None = None) -> list[str]:
    """Write base..HEAD as numbered patches + series + cover letter."""
    tree = tree or paths.tree_dir()
    if pdir is None and not bases.current().series:
        raise HarnessError(f"base {bases.current().name} has no series of its own yet: "
                           "nothing to export (patches/ is the default base's)")
    pdir = pdir or paths.patches_dir()
    pdir.mkdir(parents=True, exist_ok=True)
    if is_dirty(tree):
        log("warning: the tree has uncommitted changes; they are not exported")
    n = len(commits(tree))
    k = trailing_separate(tree)
    keep = cover_text(pdir)
    fmt = ("-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
           "-c", "format.signature=",
           "format-patch", "-q", "--zero-commit", "--no-signature", "--no-thread",
           "--no-attach", "--no-cc", "--no-to", "--abbrev=12",
           *[f"--to={t}" for t in POST_TO], *[f"--cc={c}" for c in POST_CC])
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        if n - k:
            git(*fmt, "--numbered", f"--subject-prefix={SUBJECT_PREFIX}",
                "--cover-letter", "-o", str(tmp), f"{BASE_TAG}..HEAD~{k}", cwd=tree,
                env=_ident_env())
        sep_tmp = tmp / SEPARATE_DIR
        for i in range(k, 0, -1):
            one = tmp / f"one-{i}"      # format-patch -1 always writes 0001-...
            git(*fmt, f"--subject-prefix={SEPARATE_PREFIX}", "-o", str(one), "-1",
                f"HEAD~{i - 1}", cwd=tree, env=_ident_env())
            sep_tmp.mkdir(exist_ok=True)
            for m in one.glob("0001-*.patch"):
                m.rename(sep_tmp / f"{k - i + 1:04d}-{m.name[5:]}")
        new = sorted(p.name for p in tmp.glob("*.patch"))
        separate = sorted(p.name for p in sep_tmp.glob("*.patch")) if sep_tmp.is_dir() else []
        sep_dir = pdir / SEPARATE_DIR
        if sep_dir.is_dir():
            for old in sep_dir.glob("*.patch"):
                old.unlink()
        if separate:
            sep_dir.mkdir(exist_ok=True)
            for name in separate:
                (sep_dir / name).write_text((sep_tmp / name).read_text(errors="replace"))
        elif sep_dir.is_dir() and not any(sep_dir.iterdir()):
            sep_dir.rmdir()
        for old in pdir.glob("*.patch"):
            if re.match(r"^\d{4}-", old.name) and old.name != COVER_LETTER:
                old.unlink()
        for name in new:
            text = (tmp / name).read_text(errors="replace")
            if name == COVER_LETTER:
                text = _fill_cover(text, keep, tree)
            (pdir / name).write_text(text)
    series = [x for x in new if x != COVER_LETTER]
    text = SERIES_HEADER + "".join(s + "\n" for s in series)
    if separate:
        text += SEPARATE_HEADER + "".join(f"{SEPARATE_DIR}/{s}\n" for s in separate)
    (pdir / "series").write_text(text)
    return series + [f"{SEPARATE_DIR}/{s}" for s in separate]


def trailing_separate(tree: Path | None = None) -> int:
    """How many of the last commits of base..HEAD are SEPARATE_SUBJECTS."""
    subjects = git("log", "--format=%s", f"{BASE_TAG}..HEAD", cwd=tree or paths.tree_dir())
    k = 0
    for subj in subjects.splitlines():      # newest first
        if subj.strip() not in SEPARATE_SUBJECTS:
            break
        k += 1
    return k


def _fill_cover(text: str, keep: tuple[str, str] | None, tree: Path) -> str:
    # The cover letter's Date is "now"; use HEAD's author date so an
    # unchanged tree exports byte-identical files.
    date = git("log", "-1", "--format=%aD", "HEAD", cwd=tree).strip()
    text = re.sub(r"^Date: .*$", f"Date: {date}", text, count=1, flags=re.M)
    if keep:
        subject, blurb = keep
        text = text.replace("*** SUBJECT HERE ***", subject, 1)
        text = text.replace("*** BLURB HERE ***", blurb, 1)
    return text
