"""Does newidle balancing still move misfit tasks with STEAL?  The arm64
asymmetric guest (runs/asym.py) with a CPU hog sent back to a little CPU
again and again while big CPUs go newidle: the newidle passes at the LLC
domain and the misfit moves they made, with STEAL off and on in one boot
(tests/guest/test_asym.py).
"""
from __future__ import annotations

from ..measure import schedstat
from .asym import GUEST_SNIPPET, AsymPreset

FEATURES = ("NO_STEAL", "STEAL")


def script(preset: AsymPreset, seconds: int = 4, rounds: int = 2) -> str:
    """Does newidle balancing at the LLC still move misfit tasks with STEAL?
    On the first CPU of each big core a pinned sleep loop makes it go
    newidle all the time, its sibling left idle (a misfit task is pulled
    only to a fully idle core); on the first CPU of each little core a CPU
    hog.  Every 200 ms each hog is pinned to its little CPU for 100 ms and
    then allowed on every CPU, where it is a misfit task, alone on its CPU:
    the LLC's overload mask may be empty while the task waits to be moved
    up.  NO_STEAL and STEAL
    alternate, `rounds` times each, `seconds` each, a schedsnap around
    each phase (sections misfit.<feature>.r<round>.0 and .1)."""
    big = preset.big_cpus()
    little = [c for c in range(preset.ncpus) if c not in big]
    homes = little[::preset.threads]
    every = f"{(1 << preset.ncpus) - 1:x}"
    lines = ["set -e", "section topology", GUEST_SNIPPET.strip()]
    lines += [f"taskset -c {c} sh -c 'while :; do usleep 300; done' &"
              for c in big[::preset.threads]]
    lines.append('hogs=""')
    for c in homes:
        lines += [f"taskset -c {c} sh -c 'while :; do :; done' &", 'hogs="$hogs $!"']
    pin = "; ".join(f"taskset -p {1 << c:x} $(echo $hogs | cut -d' ' -f{i + 1}) > /dev/null"
                    for i, c in enumerate(homes))
    free = f"for p in $hogs; do taskset -p {every} $p > /dev/null; done"
    lines.append("sleep 1")
    for r in range(rounds):
        for feat in FEATURES:
            sec = f"misfit.{feat}.r{r}"
            lines += [f"echo {feat} > /sys/kernel/debug/sched/features",
                      f"section {sec}.0", "schedsnap",
                      f"for i in $(seq {seconds * 5}); do",
                      f"    {pin}; usleep 100000; {free}; usleep 100000",
                      "done", f"section {sec}.1", "schedsnap"]
    lines += ["kill $hogs", "section features", "cat /sys/kernel/debug/sched/features"]
    return "\n".join(lines) + "\n"


def totals(sections: dict[str, str], rounds: int = 2) -> dict[str, dict[str, int]]:
    """Per feature of script(), summed over its rounds: the newidle
    passes at the LLC domain (MC: lb_count) and the misfit imbalances they
    found (lb_imbalance_misfit)."""
    out: dict[str, dict[str, int]] = {}
    for feat in FEATURES:
        tot = {"lb_count": 0, "lb_imbalance_misfit": 0}
        for r in range(rounds):
            a = schedstat.parse(sections[f"misfit.{feat}.r{r}.0"])
            b = schedstat.parse(sections[f"misfit.{feat}.r{r}.1"])
            for k in tot:
                tot[k] += (b.lb_by_domain("newidle", k).get("MC", 0)
                           - a.lb_by_domain("newidle", k).get("MC", 0))
        out[feat] = tot
    return out
