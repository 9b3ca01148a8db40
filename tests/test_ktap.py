from pathlib import Path

import pytest

from idlesteal.measure import ktap

DATA = Path(__file__).parent / "data"


def test_real_console_all_pass():
    suites = ktap.check((DATA / "ktap_sparsemask_console.txt").read_text(), ["sched_sparsemask"])
    s = suites["sched_sparsemask"]
    assert s.planned == 18
    assert len(s.cases) == 18
    assert s.status == "ok"
    assert s.cases[0].name == "sparsemask_test_size_exact_multiple"


def test_failed_case_is_reported():
    text = (DATA / "ktap_sparsemask_console.txt").read_text().replace(
        "    ok 4 sparsemask_test_bad_args", "    not ok 4 sparsemask_test_bad_args")
    with pytest.raises(ktap.KtapError, match="sparsemask_test_bad_args failed"):
        ktap.check(text, ["sched_sparsemask"])


def test_missing_suite_and_crash():
    text = "[ 1.0] KTAP version 1\n[ 1.0] 1..1\n[ 1.1]     # Subtest: foo\n[ 1.1]     1..2\n" \
           "[ 1.2]     ok 1 a\n[ 1.3] BUG: something\n"
    with pytest.raises(ktap.KtapError) as e:
        ktap.check(text, ["foo", "bar"])
    msg = str(e.value)
    assert "bar: suite did not run" in msg
    assert "foo: no result line" in msg
    assert "planned 2 cases, saw 1" in msg


def test_skip_is_not_failure():
    text = "KTAP version 1\n1..1\n    # Subtest: s\n    1..2\n    ok 1 a\n" \
           "    ok 2 b # SKIP no hardware\nok 1 s\n"
    s = ktap.check(text, ["s"])["s"]
    assert [c.status for c in s.cases] == ["ok", "skip"]


def test_interleaved_console_noise():
    text = "[ 0.5] KTAP version 1\n[ 0.5] 1..1\n[ 0.6]     # Subtest: s\n[ 0.6]     1..1\n" \
           "[ 0.7] random: crng init done\n[ 0.8]     ok 1 only\n[ 0.9] ok 1 s\n"
    assert ktap.check(text, ["s"])["s"].cases == [ktap.Case("only", "ok")]
