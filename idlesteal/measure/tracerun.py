"""The wasted-CPU-time measure of one guest run (docs/waste.md).

Guest side: helpers.sh's trace_setup / trace_on / trace_off / trace_dump
trace the scheduler events idlesteal/measure/waste/ reads into tracefs' per-CPU
ring buffers for the length of one run (trace_marker lines bound the
window), then print the ring buffers' stats and the trace, gzip'd and
base64'd, as two sections of the guest output.  Host side: `lines()`
decodes those sections (failing on lost events), `measure()` and
`timeline()` run the analyser over them with the preset's topology.

Which side of an A/B run is traced is the spec's `waste` mode: "both"
(default), "A" or "B" (the overhead check: the same features on both
sides, one traced), "off".
"""
from __future__ import annotations

import base64
import binascii
import gzip
import zlib
from typing import Optional

from . import waste
from ..util import ParseError

MODES = ("both", "A", "B", "off")
START, END = "idlesteal window start", "idlesteal window end"
# Per-CPU ring buffer (KB): hackbench -g 4 -l 500 on 2x2x2 writes ~0.6 MB
# per CPU; at most a quarter of the guest's memory in all.  On few CPUs
# each carries more of a run's events: at least TOTAL_KB is spread over
# them (a 1x1x2 side by side dropped 17,428 events of one eevdf+steal run
# with 8 MB per CPU, 2026-12-01).
DEFAULT_KB = 8192
TOTAL_KB = 65536


class TraceParseError(ParseError):
    pass


def traced(mode: str, side: str) -> bool:
    """Whether side "A" or "B" is traced under `mode`."""
    if mode not in MODES:
        raise ValueError(f"waste mode {mode!r}: one of {', '.join(MODES)}")
    return mode == "both" or mode == side


def buffer_kb(ncpus: int, mem_mb: int) -> int:
    """DEFAULT_KB per CPU, or TOTAL_KB shared by the CPUs where that is
    more (few CPUs), less where that would take over a quarter of the
    guest's memory."""
    n = max(ncpus, 1)
    return max(256, min(max(DEFAULT_KB, TOTAL_KB // n), mem_mb * 1024 // (4 * n)))


def setup(ncpus: int, mem_mb: int) -> list[str]:
    """Guest lines, once before the runs."""
    return [f"trace_setup {buffer_kb(ncpus, mem_mb)}"]


def around(tag: str, command: list[str]) -> list[str]:
    """Guest lines: trace `command` (shell lines), then dump the trace as
    sections TAG.trace_stats and TAG.trace."""
    return ["trace_on", *command, "trace_off", f"trace_dump {tag}"]


def lines(sections: dict[str, str], tag: str) -> list[str]:
    """The trace text of run `tag`; raises waste.LostEvents when the ring
    buffer's stats show dropped or overwritten events, TraceParseError when
    the sections are missing or do not decode."""
    if f"{tag}.trace" not in sections or f"{tag}.trace_stats" not in sections:
        raise TraceParseError(f"{tag}: guest output lacks the trace sections "
                              "(a kernel without event tracing? configs/trace.config)")
    waste.check_stats(sections[f"{tag}.trace_stats"])
    try:
        raw = gzip.decompress(base64.b64decode("".join(sections[f"{tag}.trace"].split()),
                                               validate=True))
    except (binascii.Error, OSError, EOFError, zlib.error) as e:
        raise TraceParseError(f"{tag}: the trace section does not decode "
                              f"(base64 of gzip): {e}") from None
    return raw.decode(errors="replace").splitlines()


def measure(sections: dict[str, str], tag: str, topo: waste.Topology,
            affinity: Optional[waste.Affinity] = None) -> waste.Waste:
    """The measure over run `tag`'s window (between its trace markers)."""
    try:
        return waste.analyse(lines(sections, tag), topo, affinity=affinity,
                             start=START, end=END)
    except waste.LostEvents as e:
        raise waste.LostEvents(e.cpu, e.count, f"{tag}: {e.line}", e.lineno) from None


def timeline(sections: dict[str, str], tag: str, topo: waste.Topology,
             affinity: Optional[waste.Affinity] = None) -> waste.Timeline:
    """The per-CPU timeline of run `tag`'s window."""
    return waste.timeline(lines(sections, tag), topo, affinity=affinity,
                          start=START, end=END)[1]
