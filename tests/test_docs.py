"""What the repository's documents and results/ must stay: results/ holds
results, not code; each page fits its budget; no doc or comment cites a
project issue number (it means nothing to a reader of the repository)."""
from __future__ import annotations

import re
import subprocess

from idlesteal import paths

DOC_MAX_LINES = 400
RESULTS_README_MAX_LINES = 250
CODE = (".py", ".sh", ".diff", ".c", ".h", ".rs", ".awk", ".pl")
# "issue" and a number, as the tracker's references were written
ISSUE_REF = re.compile(r"\b[Ii]ssues?\s+#?\d+|\(#\d+\)")
SCANNED = (".md", ".py", ".c", ".h", ".rs", ".sh", ".suite", ".config", ".txt")


def tracked(*pathspec: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", "--", *pathspec], cwd=paths.REPO,
                         capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def test_results_holds_no_code():
    code = [f for f in tracked("results") if f.endswith(CODE) or f.endswith("Makefile")]
    assert not code, f"code under results/ (an investigation goes to experiments/): {code}"


def test_each_page_fits_its_budget():
    long = {f: n for f in tracked("docs/*.md")
            if (n := len((paths.REPO / f).read_text().splitlines())) > DOC_MAX_LINES}
    assert not long, f"docs over {DOC_MAX_LINES} lines: {long}"
    n = len((paths.REPO / "results/README.md").read_text().splitlines())
    assert n <= RESULTS_README_MAX_LINES, n


def test_no_doc_or_comment_cites_an_issue_number():
    files = [f for f in tracked(".") if f.endswith(SCANNED) or f == "Makefile"]
    files = [f for f in files if not f.startswith(("vendor/", "patches/", "tests/data/"))
             and f != "tests/test_docs.py"]
    hits = []
    for f in files:
        for i, line in enumerate((paths.REPO / f).read_text(errors="replace").splitlines(), 1):
            if ISSUE_REF.search(line):
                hits.append(f"{f}:{i}: {line.strip()[:80]}")
    assert not hits, "issue numbers (say what is meant instead):\n" + "\n".join(hits[:20])
