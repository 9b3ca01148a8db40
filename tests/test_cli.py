"""Command-line parsing: options a command would ignore are errors."""
from __future__ import annotations

import pytest

from idlesteal import cli


def parse(*argv: str):
    return cli.parser().parse_args(list(argv))


@pytest.mark.parametrize("argv", [
    ("suite", "--preset", "1x1x2"),        # was taken as --presets (abbreviation)
    ("kernels", "--variant", "steal"),     # was taken as --variants
    ("bench", "--work", "wakelat"),        # no abbreviations at all
])
def test_ignored_or_abbreviated_options_are_rejected(argv, capsys):
    with pytest.raises(SystemExit) as e:
        parse(*argv)
    assert e.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_guest_commands_keep_their_options():
    a = parse("bench", "--preset", "1x1x2", "--variant", "steal", "--no-build")
    assert (a.preset, a.variant, a.build) == ("1x1x2", "steal", False)
    a = parse("suite", "--presets", "2x2x2", "--no-build")
    assert (a.presets, a.variant, a.build) == ("2x2x2", "steal", False)
    a = parse("kernels", "--variants", "steal,reference", "--preset", "2x2x2")
    assert (a.variants, a.preset) == ("steal,reference", "2x2x2")
