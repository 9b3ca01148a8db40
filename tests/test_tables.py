"""The generated results tables (report/tables.py, report/generated.py):
the committed documents match their data, Holm's adjustment and the
difference interval, the markers, and the cover letter's export."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from idlesteal import cli, paths
from idlesteal.kernel import tree
from idlesteal.measure import stats
from idlesteal.report import generated, tables


def test_every_committed_table_matches_the_data_it_names():
    stale = generated.stale(paths.REPO)
    assert not stale, ("tables that differ from their data (run `python3 -m idlesteal "
                       "tables` and commit): "
                       + ", ".join(f"{s.document}: {s.table}" for s in stale))


def test_every_table_is_quoted_somewhere_and_names_files_that_exist():
    marked = generated.marked(paths.REPO)
    used = {n for names in marked.values() for n in names}
    assert used == set(generated.TABLES), set(generated.TABLES) ^ used
    assert marked["results/README.md"] and marked["patches/cover-letter.txt"]
    for name in generated.TABLES:
        t = generated.build(name, paths.REPO)
        assert t.files, name
        for f in t.files:
            if "<" not in f:
                assert (paths.REPO / f).exists(), (name, f)


def test_holm_matches_the_textbook_step_down():
    # p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") in R: 0.03 0.06 0.06 0.02
    got = stats.holm([0.01, 0.04, 0.03, 0.005])
    assert got == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    nan = stats.holm([math.nan, 0.02, 0.04])
    assert math.isnan(nan[0]) and nan[1:] == pytest.approx([0.04, 0.04])


def test_the_difference_interval_contains_zero_exactly_when_welch_does_not_reject():
    a, b = [1.0, 1.2, 0.9, 1.1, 1.0], [1.1, 1.3, 1.0, 1.2, 1.05]
    d = stats.difference(a, b)
    assert d.value == pytest.approx(stats.mean(a) - stats.mean(b))
    assert (d.low <= 0 <= d.high) == (d.p >= 0.05)
    far = stats.difference([10.0, 10.1, 9.9], [1.0, 1.1, 0.9])
    assert far.low > 0 and far.p < 0.05 and far.half_width == pytest.approx(
        (far.high - far.low) / 2)


def _fake(monkeypatch: pytest.MonkeyPatch, lines: list[str]) -> None:
    monkeypatch.setitem(generated.TABLES, "fake",
                        lambda root: tables.Table("fake", list(lines), ["results/x.json"]))


def test_fill_writes_between_the_markers_and_says_what_changed(monkeypatch):
    _fake(monkeypatch, ["a  b", "1  2"])
    md = ("intro\n<!-- table fake: written by a command -->\nold\n<!-- end table fake -->\n"
          "outro\n")
    text, changed = generated.fill(md, True, Path("."))
    assert changed == ["fake"]
    assert text == ("intro\n<!-- table fake: written by a command -->\n```\na  b\n1  2\n```\n"
                    "<!-- end table fake -->\noutro\n")
    assert generated.fill(text, True, Path("."))[1] == []
    txt, changed = generated.fill("x\n[table fake]\n[end table fake]\ny\n", False, Path("."))
    assert changed == ["fake"] and txt == "x\n[table fake]\n  a  b\n  1  2\n[end table fake]\ny\n"


def test_an_unknown_or_unclosed_table_is_an_error_naming_the_line(monkeypatch):
    _fake(monkeypatch, ["x"])
    with pytest.raises(tables.TableError, match="no table named 'nope'"):
        generated.fill("[table nope]\n[end table nope]\n", False, Path("."))
    with pytest.raises(tables.TableError, match=r"doc:1: table fake has no"):
        generated.fill("[table fake]\nbody\n", False, Path("."), "doc")


def test_a_missing_results_file_is_named(tmp_path):
    with pytest.raises(tables.TableError, match="results/v7/offcost-pipe.json: missing"):
        generated.build("offcost", tmp_path)


def test_the_exported_cover_letter_leaves_the_markers_out(tmp_path):
    (tmp_path / tree.COVER_TEXT).write_text(
        "subject line\n\nBefore.\n\n[table kick]\n  a b\n[end table kick]\n\nAfter.\n")
    subject, blurb = tree.cover_text(tmp_path) or ("", "")
    assert subject == "subject line"
    assert blurb == "Before.\n\n  a b\n\nAfter."


def test_the_committed_cover_letter_patch_carries_the_tables_without_markers():
    letter = (paths.patches_dir() / tree.COVER_LETTER).read_text()
    _, blurb = tree.cover_text(paths.patches_dir()) or ("", "")
    assert "[table " not in letter and "[end table" not in letter
    assert blurb in letter, "patches/0000-cover-letter.patch is older than cover-letter.txt: " \
                            "run `idlesteal export`"


def test_tables_refuses_a_table_it_does_not_know(capsys):
    assert cli.main(["tables", "--print", "nope"]) == 2
    assert "want one of" in capsys.readouterr().err


def test_tables_refreshes_the_exported_letter_text_and_nothing_else(tmp_path):
    letter = ("From 0 Mon Sep 17 00:00:00 2001\nSubject: [RFC PATCH 0/1] sched: x\n\n"
              "Old text.\n\nidlesteal (1):\n  sched: x\n\n kernel/sched/fair.c | 1 +\n")
    (tmp_path / tree.COVER_LETTER).write_text(letter)
    (tmp_path / tree.COVER_TEXT).write_text("sched: x\n\nNew text.\n[table kick]\n  t\n"
                                            "[end table kick]\n")
    assert tree.refresh_cover(tmp_path)
    assert (tmp_path / tree.COVER_LETTER).read_text() == letter.replace(
        "Old text.", "New text.\n  t")
    assert not tree.refresh_cover(tmp_path)


def test_mean_beaten_asks_both_means_and_no_test():
    from idlesteal.report.tables import mean_beaten
    def f(mean, waste):
        return {"mean": mean, "wasted_llc_pct": {"mean": waste}}
    row = {"higher_better": False, "contenders": {
        "me": f(2.0, 5.0), "both": f(1.9, 4.9), "faster": f(1.0, 6.0), "frugal": f(3.0, 1.0),
        "untraced": {"mean": 0.1}}}
    assert mean_beaten(row, "me") == ["both"]
    row["higher_better"] = True
    assert mean_beaten(row, "me") == ["frugal"]


def _latency_cell(a: list[str], b: list[str]) -> dict:
    fig = {"mean": 10.0, "stdev": 1.0, "ci95": 1.0, "n": 8}
    side = {"value": fig, "waste": {"llc_pct": fig}}
    iv = {"value": 5.0, "low": -5.0, "high": 15.0, "welch_p": 0.2}
    return {"meta": {"A": a, "B": b, "date": "2026-12-03T00:00:00+0000", "tree_head": "f" * 40,
                     "tree_dirty": False, "host": {"cores": 2, "cpu_model": "test CPU"}},
            "summary": [{"level": 1, "A": side, "B": side, "speedup_pct": iv,
                         "waste_removed_pct": iv}]}


def test_the_latency_table_checks_each_boots_sides(tmp_path):
    """Each file of the latency table must be NO_STEAL against STEAL with
    DELAY_DEQUEUE as its directory says: a boot of the wrong sides is an
    error naming the file, not a row under the wrong heading."""
    import json
    from idlesteal.report import latency
    for d, dd, ws in latency.RUNS:
        (tmp_path / d).mkdir(parents=True)
        extra = ["NO_DELAY_DEQUEUE"] if dd == "off" else []
        for w in ws:
            (tmp_path / d / f"2x2x2-{w}.json").write_text(
                json.dumps(_latency_cell(["NO_STEAL", *extra], ["STEAL", *extra])))
    t = latency.latency_table(tmp_path)
    assert len([l for l in t.lines if l.startswith(("schbench", "storm", "wakelat"))]) == 5
    assert "Built from tree fffffff; run 2026-12-03" in t.text()
    bad = tmp_path / "results/latency-nodd/2x2x2-schbench.json"
    bad.write_text(json.dumps(_latency_cell(["NO_STEAL"], ["STEAL"])))
    with pytest.raises(tables.TableError, match="latency-nodd/2x2x2-schbench.json: sides"):
        latency.latency_table(tmp_path)
