"""Side by side's contenders: the schedulers one boot compares.

A contender is either EEVDF with sched features set (`eevdf`: NO_STEAL,
`eevdf+steal`: STEAL, or one of your own: --contender NAME=FEAT,...,
parse_contender()) or a sched_ext loader run in the background
(scx_idlesteal, the kernel's scx_simple, the published peers of
idlesteal/scx/peers.py, or a build of scx_idlesteal from elsewhere:
--idlesteal-build NAME=PATH, parse_idlesteal_build()).  contenders()
turns --sched's names into them; needs_sched_ext() says which need a
kernel with sched_ext (with EEVDF contenders only, `side-by-side
--variant steal` will do).
"""
from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass

from ...scx import peers
from ...util import HarnessError, invalid


@dataclass(frozen=True)
class Contender:
    name: str
    features: tuple[str, ...]      # EEVDF sched features set when switching to it
    loader: tuple[str, ...] = ()   # sched_ext loader argv; () = EEVDF itself
    ops: str = ""                  # the name it registers (root/ops)
    build: str = ""                # host path of a loader built elsewhere (--idlesteal-build)

    @property
    def binary(self) -> str:
        return self.loader[0] if self.loader else ""


# The fair class' own stealing is off under every sched_ext scheduler
# (NO_STEAL): with full switching no task is left in the fair class anyway.
CONTENDERS: dict[str, Contender] = {c.name: c for c in [
    Contender("eevdf", ("NO_STEAL",)),
    Contender("eevdf+steal", ("STEAL",)),
    Contender("scx_idlesteal", ("NO_STEAL",), ("scx_idlesteal",), "idlesteal"),
    Contender("scx_idlesteal-nosteal", ("NO_STEAL",), ("scx_idlesteal", "-o"), "idlesteal"),
    Contender("scx_idlesteal-node", ("NO_STEAL",), ("scx_idlesteal", "-n"), "idlesteal"),
    Contender("scx_idlesteal-nokick", ("NO_STEAL",), ("scx_idlesteal", "-k"), "idlesteal"),
    # kicks any idle CPU, not a fully idle core first (experiments/2026-11-27-scx-whole-core/)
    Contender("scx_idlesteal-anycpu", ("NO_STEAL",), ("scx_idlesteal", "-c"), "idlesteal"),
    # fixed slices and no wakeup preemption: scx_idlesteal before its latency story
    Contender("scx_idlesteal-fixed", ("NO_STEAL",), ("scx_idlesteal", "-f", "-p"), "idlesteal"),
    Contender("scx_simple", ("NO_STEAL",), ("scx_simple",), "simple"),
    *[Contender(n, ("NO_STEAL",), (n,), peers.OPS_NAMES[n]) for n in peers.PEERS],
]}
DEFAULT = ("eevdf", "eevdf+steal", "scx_idlesteal", *peers.PEERS)


# --contender NAME=FEAT[,FEAT...]: an EEVDF contender defined by sched features
# (docs/scx.md).  The feature words are checked for form only: the kernel the
# guest boots says which it has (spec.py's script(): a missing one fails the boot).
CONTENDER_NAME = re.compile(r"[a-z0-9][a-z0-9_+.-]{0,39}")
FEATURE_WORD = re.compile(r"(NO_)?[A-Z][A-Z0-9_]*")
CONTENDER_WANT = ("NAME=FEAT[,FEAT...]: NAME of a-z 0-9 _ + . - (starting with a letter or "
                  "digit, at most 40 characters, not a built-in scheduler's: "
                  + ", ".join(CONTENDERS) + "), each FEAT a sched feature word such as "
                  "STEAL_KICK or NO_NI_RANDOM, each feature once")


def feature_base(word: str) -> str:
    """NO_STEAL -> STEAL; STEAL -> STEAL."""
    return word[3:] if word.startswith("NO_") else word


def parse_contender(text: str) -> Contender:
    """side-by-side --contender (an argparse type): 'NAME=FEAT[,FEAT...]'."""
    name, eq, feats = text.partition("=")
    words = tuple(feats.split(","))
    bases = [feature_base(w) for w in words]
    if not eq or not CONTENDER_NAME.fullmatch(name) or name in CONTENDERS \
            or not all(FEATURE_WORD.fullmatch(w) and FEATURE_WORD.fullmatch(b)
                       for w, b in zip(words, bases)) \
            or len(set(bases)) != len(bases):
        raise argparse.ArgumentTypeError(invalid(text, CONTENDER_WANT))
    return Contender(name, words)


# --idlesteal-build NAME=PATH: scx_idlesteal as built elsewhere (another
# commit, a change under test), installed in the guest as /usr/bin/NAME and
# compared in the same boot as the one `make scx` built.  NAME starts with
# "scx_idlesteal." or "scx_idlesteal-" so it can never replace a tool of
# the image (/usr/bin/perf, say).
BUILD_NAME = re.compile(r"scx_idlesteal[.-][a-z0-9][a-z0-9_+.-]{0,25}")
BUILD_WANT = ("NAME=PATH: NAME scx_idlesteal.X or scx_idlesteal-X (X of a-z 0-9 _ + . -, "
              "at most 26 characters; not a built-in scheduler's name: "
              + ", ".join(n for n in CONTENDERS if n.startswith("scx_idlesteal"))
              + "), PATH an executable file (a scx_idlesteal loader, e.g. "
              "build/wd/scx_idlesteal.NAME of experiments/2026-11-26-scx-wake-clock/mkvar.py)")


def parse_idlesteal_build(text: str) -> Contender:
    """side-by-side --idlesteal-build (an argparse type): 'NAME=PATH'."""
    name, eq, path = text.partition("=")
    if not eq or not BUILD_NAME.fullmatch(name) or name in CONTENDERS \
            or not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise argparse.ArgumentTypeError(invalid(text, BUILD_WANT))
    return Contender(name, ("NO_STEAL",), (name,), "idlesteal", os.path.abspath(path))


def sched_names(text: str) -> list[str]:
    """side-by-side --sched (an argparse type): the form only, 'a,b,...' of
    two or more names, none twice; whether each is built in or defined by
    --contender is checked after parsing (contenders())."""
    words = text.split(",")
    if len(words) < 2 or not all(CONTENDER_NAME.fullmatch(w) for w in words) \
            or len(set(words)) != len(words):
        raise argparse.ArgumentTypeError(invalid(text, "two or more comma-separated "
                                                 "schedulers, each once, the first the "
                                                 "baseline; known: " + ", ".join(CONTENDERS)
                                                 + ", or one of --contender or "
                                                 "--idlesteal-build"))
    return words


def contenders(names: str | tuple[str, ...] | list[str],
               defined: tuple[Contender, ...] | list[Contender] = ()) -> list[Contender]:
    """'a,b,c' (or a sequence) -> Contenders, built in or `defined`
    (--contender); unknown or repeated names fail."""
    table = {**CONTENDERS}
    for c in defined:
        if c.name in table:
            raise HarnessError(f"scheduler {c.name} is defined twice (or is a built-in one)")
        table[c.name] = c
    words = [w for w in names.split(",") if w] if isinstance(names, str) else list(names)
    unknown = [w for w in words if w not in table]
    if unknown:
        raise HarnessError(f"unknown scheduler(s) {', '.join(unknown)}; known: "
                           f"{', '.join(table)}")
    if len(set(words)) != len(words):
        raise HarnessError(f"a scheduler is named twice: {','.join(words)}")
    if len(words) < 2:
        raise HarnessError("side by side needs at least two schedulers")
    return [table[w] for w in words]


def needs_sched_ext(cs: list[Contender]) -> list[str]:
    """The contenders that are sched_ext schedulers (need a kernel with it)."""
    return [c.name for c in cs if c.loader]
