"""The picture of a wasted-CPU-time `Timeline`: a PNG, one row a CPU,
running / idle / LLC-wasted in three colours (matplotlib, when present)."""
from __future__ import annotations

from pathlib import Path
from typing import Union

from ...util import pyplot
from .result import Timeline

COLOURS = {"run": "#4c72b0", "idle": "#dddddd", "wasted": "#d62728"}


def plot_timeline(tl: Timeline, path: Union[str, Path], title: str) -> bool:
    """A PNG: CPUs as rows (CPU 0 on top), time across (ms from the first
    segment), running / idle / LLC-wasted in three colours.  False when
    matplotlib is missing (util.pyplot() said so)."""
    plt = pyplot()
    if plt is None:
        return False
    t0 = min((segs[0][0] for segs in tl.values() if segs), default=0.0)
    cpus = sorted(tl)
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.35 * len(cpus)))
    for row, cpu in enumerate(cpus):
        for state, colour in COLOURS.items():
            bars = [((a - t0) * 1e3, (b - a) * 1e3) for a, b, s in tl[cpu] if s == state]
            if bars:
                ax.broken_barh(bars, (row - 0.4, 0.8), facecolors=colour, linewidth=0)
    ax.set_yticks(range(len(cpus)))
    ax.set_yticklabels([f"CPU {c}" for c in cpus])
    ax.set_ylim(len(cpus) - 0.5, -0.5)
    ax.set_xlabel("time (ms)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS.values()]
    ax.legend(handles, ["running", "idle", "idle while a task waits in the LLC"],
              loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.5 / max(len(cpus), 1)),
              ncol=3, fontsize=8)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(str(path), dpi=100)
    plt.close(fig)
    return True
