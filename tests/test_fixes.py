"""The fixes sent on their own (patches/fixes/<base>/, idlesteal/kernel/fixes.py):
each is the series' commit word for word, as "[PATCH]" with Fixes: and
Cc: stable, its reproducer after the "---"."""
from __future__ import annotations

import re

import pytest

from idlesteal import bases, paths
from idlesteal.kernel import fixes
from idlesteal.util import HarnessError

FIXES_ROOT = paths.REPO / "patches" / "fixes"


def series_dir(base: str) -> str:
    return bases.get(base).patches or "patches"


def body(text: str) -> str:
    """A patch's changelog and diff, without its headers and reproducer."""
    head, _, rest = text.partition("\n\n")
    msg, _, diff = rest.partition("\n---\n")
    return msg + "\n" + diff[diff.index("diff --git"):]


def test_the_reproducer_goes_after_the_three_dashes_where_git_am_stops():
    patch = "Subject: x\n\nwhy\n---\n a.c | 1 +\n\ndiff --git a/a.c b/a.c\n"
    got = fixes.with_reproducer(patch, "int main(void) {}\n", "r.c")
    assert got.startswith("Subject: x\n\nwhy\n---\nThe reproducer, r.c:\n\nint main(void) {}\n\n")
    assert got.endswith(" a.c | 1 +\n\ndiff --git a/a.c b/a.c\n")
    with pytest.raises(HarnessError, match="no '---' line"):
        fixes.with_reproducer("Subject: x\n\nwhy\n", "", "r.c")


@pytest.mark.parametrize("base", ["7.2", "7.3", "6.12"])
def test_each_base_has_the_fix_as_its_series_first_patch(base):
    got = sorted((FIXES_ROOT / base).glob("*.patch"))
    assert len(got) == len(fixes.FIXES), got
    for patch in got:
        text = patch.read_text()
        subject = re.search(r"^Subject: \[PATCH\] (.*(?:\n .*)*)", text, re.M)
        assert subject, patch
        title = " ".join(subject.group(1).split())
        assert title in fixes.FIXES, title
        # the same commit as the series' own first patch, changelog and diff
        (first,) = (paths.REPO / series_dir(base)).glob("0001-*.patch")
        assert body(text) == body(first.read_text()), (patch, first)
        msg = body(text)
        assert re.search(r'^Fixes: [0-9a-f]{12,} \(".+"\)$', msg, re.M), patch
        assert re.search(r"^Cc: stable@vger\.kernel\.org", msg, re.M), patch
        assert "Signed-off-by" not in msg      # no person to sign for the harness
        repro = paths.REPO / fixes.FIXES[title]
        assert fixes.reproducer_note(repro.read_text(), repro.name) in text, patch


def test_the_cpuset_report_carries_its_script_whole():
    """patches/fixes/cpuset-partition-hotplug.txt (a bug report for the
    cpuset maintainers) ends with the script beside it, word for word, and
    quotes that script's output on the base kernel."""
    report = (FIXES_ROOT / "cpuset-partition-hotplug.txt").read_text()
    script = (FIXES_ROOT / "cpuset-partition-hotplug.sh").read_text()
    assert report.endswith("\n" + script), "the report's script differs from the .sh"
    assert "overlap: CPU " in report.split("\n---\n")[0]
