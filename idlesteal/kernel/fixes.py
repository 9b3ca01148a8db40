"""Fixes of the base kernel that go out on their own (patches/fixes/<base>/).

A commit of the series that fixes a bug of the base kernel by itself is
also posted alone, as "[PATCH]" against the base tag: `git format-patch`
of that one commit, which must be the first of the series so that it
applies to the base unchanged.  Its reproducer (a file of the repository)
is inlined after the "---", where `git am` ignores it, so the maintainer
who applies the fix can check it first.  `idlesteal export` writes these
beside the series; tests/test_fixes.py checks that each is the series'
commit, word for word, with its reproducer.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

from .. import bases, paths
from . import tree
from ..util import HarnessError

PREFIX = "PATCH"
# subject of the series' commit -> its reproducer, relative to the repository
FIXES: dict[str, str] = {
    "sched/core: Do not strand a task outside its new affinity on CPU hotplug":
        "workloads/setaffinity_race.c",
}
# The fix goes to the series' recipients less the authors of the series'
# earlier versions (the fix is not theirs), and to the people whose earlier
# report or patch it builds on (its Link: tags).
TO: tuple[str, ...] = tree.POST_TO
SERIES_AUTHORS = ("Steve Sistare <steven.sistare@oracle.com>",
                  "Chen Jinghuang <chenjinghuang2@huawei.com>")
CC: tuple[str, ...] = (
    *[c for c in tree.POST_CC if c not in SERIES_AUTHORS and "vger" not in c],
    "Will Deacon <will@kernel.org>", "Sebastian Andrzej Siewior <bigeasy@linutronix.de>",
    "linux-kernel@vger.kernel.org",
)


def fixes_dir() -> Path:
    return paths.REPO / "patches" / "fixes" / bases.current().name


def reproducer_note(source: str, name: str) -> str:
    """What goes after the "---": the reproducer's source, whole."""
    return f"The reproducer, {name}:\n\n{source.rstrip()}\n\n"


def with_reproducer(patch: str, source: str, name: str) -> str:
    """`patch` (git format-patch output) with the reproducer after its "---"."""
    lines = patch.splitlines(keepends=True)
    try:
        i = lines.index("---\n")
    except ValueError:
        raise HarnessError("the patch has no '---' line to put the reproducer after") from None
    return "".join(lines[:i + 1]) + reproducer_note(source, name) + "".join(lines[i + 1:])


def export(src: Path | None = None) -> list[Path]:
    """Write each fix of FIXES that the tree's series has; return the files."""
    src = src or paths.tree_dir()
    log = tree.git("log", "--reverse", "--format=%H %s", f"{tree.BASE_TAG}..HEAD", cwd=src)
    commits = [line.split(" ", 1) for line in log.splitlines() if line]
    base = tree.git("rev-parse", f"{tree.BASE_TAG}^{{commit}}", cwd=src).strip()
    out_dir = fixes_dir()
    written = []
    for subject, repro in FIXES.items():
        sha = next((h for h, s in commits if s == subject), None)
        if sha is None:
            continue
        if tree.git("rev-parse", f"{sha}^", cwd=src).strip() != base:
            raise HarnessError(f"{subject!r} is not the first commit of the series: "
                               "a fix sent on its own must apply to the base as it is")
        with tempfile.TemporaryDirectory() as tmpd:
            tree.git("-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
                     "format-patch", "-q", "--zero-commit", "--no-signature", "--no-thread",
                     "--no-to", "--no-cc", "--abbrev=12", f"--subject-prefix={PREFIX}",
                     *[f"--to={t}" for t in TO], *[f"--cc={c}" for c in CC],
                     "-o", tmpd, "-1", sha, cwd=src)
            (made,) = Path(tmpd).glob("*.patch")
            name, text = made.name, made.read_text(errors="replace")
        source = (paths.REPO / repro).read_text()
        out_dir.mkdir(parents=True, exist_ok=True)
        for old in out_dir.glob(re.sub(r"^\d{4}-", "*", name)):
            old.unlink()
        dest = out_dir / name
        dest.write_text(with_reproducer(text, source, Path(repro).name))
        written.append(dest)
    return written
