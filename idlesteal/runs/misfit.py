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
# Written once before the phases.  NI_RANDOM runs the LLC's pass in
# proportion to its success rate, a rate that also counts time per 1024
# entries (NI_RATE): under TCG on a loaded host that swings from phase to
# phase and boot to boot, and with STEAL the pull takes tasks the pass
# would have found.  Either changes how often the dice let the pass run,
# not whether STEAL skips it, which is what the run is for.
SETTLED = ("NO_NI_RANDOM",)


def script(preset: AsymPreset, seconds: int = 4, rounds: int = 2,
           settled: tuple[str, ...] = SETTLED) -> str:
    """Does newidle balancing at the LLC still move misfit tasks with STEAL?
    On the first CPU of each big core a pinned sleep loop makes it go
    newidle all the time, its sibling left idle (a misfit task is pulled
    only to a fully idle core); on the first CPU of each little core a CPU
    hog.  Every 200 ms each hog is pinned to its little CPU for 100 ms and
    then allowed on every CPU, where it is a misfit task, alone on its CPU:
    the LLC's overload mask may be empty while the task waits to be moved
    up.  At the end of each free window, the CPU each hog is on (field 39
    of /proc/PID/stat, a "hogcpu N" line).  The features in `settled` are
    set first (default: the dice off, SETTLED); then NO_STEAL and STEAL
    alternate, `rounds` times each, `seconds` each, a schedsnap around
    each phase (sections misfit.<feature>.r<round>.0 and .1, the hogs'
    CPUs in .cpus between them)."""
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
    where = ('for p in $hogs; do read -r st < /proc/$p/stat; set -- ${st##*) }; '
             'echo "hogcpu ${37}"; done')
    lines += [f"echo {f} > /sys/kernel/debug/sched/features" for f in settled]
    lines.append("sleep 1")
    for r in range(rounds):
        for feat in FEATURES:
            sec = f"misfit.{feat}.r{r}"
            lines += [f"echo {feat} > /sys/kernel/debug/sched/features",
                      f"section {sec}.0", "schedsnap", f"section {sec}.cpus",
                      f"for i in $(seq {seconds * 5}); do",
                      f"    {pin}; usleep 100000; {free}; usleep 100000; {where}",
                      "done", f"section {sec}.1", "schedsnap"]
    lines += ["kill $hogs", "section features", "cat /sys/kernel/debug/sched/features"]
    return "\n".join(lines) + "\n"


def totals(sections: dict[str, str], rounds: int = 2,
           big: tuple[int, ...] = ()) -> dict[str, dict[str, int]]:
    """Per feature of script(), summed over its rounds: the newidle
    passes at the LLC domain (MC: lb_count) and the misfit imbalances they
    found (lb_imbalance_misfit), and the passes at the SMT domain below it
    (smt_lb_count).  With the dice off, the LLC's pass follows every SMT
    pass that pulled nothing where avg_idle covers both, so passes at the
    LLC per SMT pass measure how often it runs per idle entry, whatever
    the number of entries and of those avg_idle or an idle root domain
    stops.  Of the hogs' CPUs at the end of their free windows: how many
    were sampled (hog_samples) and how many were on a CPU of `big`
    (hog_on_big)."""
    out: dict[str, dict[str, int]] = {}
    for feat in FEATURES:
        tot = {"lb_count": 0, "lb_imbalance_misfit": 0, "smt_lb_count": 0,
               "hog_samples": 0, "hog_on_big": 0}
        for r in range(rounds):
            a = schedstat.parse(sections[f"misfit.{feat}.r{r}.0"])
            b = schedstat.parse(sections[f"misfit.{feat}.r{r}.1"])
            for key, k, dom in (("lb_count", "lb_count", "MC"),
                                ("lb_imbalance_misfit", "lb_imbalance_misfit", "MC"),
                                ("smt_lb_count", "lb_count", "SMT")):
                tot[key] += (b.lb_by_domain("newidle", k).get(dom, 0)
                             - a.lb_by_domain("newidle", k).get(dom, 0))
            cpus = [int(w[1]) for w in (ln.split() for ln in
                                        sections.get(f"misfit.{feat}.r{r}.cpus", "").splitlines())
                    if len(w) == 2 and w[0] == "hogcpu" and w[1].isdigit()]
            tot["hog_samples"] += len(cpus)
            tot["hog_on_big"] += sum(c in big for c in cpus)
        out[feat] = tot
    return out
