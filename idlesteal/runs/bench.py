"""A/B sweeps of one workload (idlesteal/measure/workload.py) in one boot.

`plan()` lays out the runs (for each repetition, for each load level, side
A then B, or B then A on odd repetitions when alternating), `script()` turns
the plan into the guest's /run.sh, and `collect()` turns the guest's
sections back into per-run measurements: the workload's metrics, %busy from
/proc/stat, the /proc/schedstat and sched/debug deltas (steals, their cost, newidle
balancing), newidle balance's own cost estimate from debugfs, the
wasted CPU time of each traced run (idlesteal/measure/tracerun.py, waste/) and,
with `lock_stat`, the run queue lock's /proc/lock_stat over the run
(idlesteal/measure/lockstat.py).
"""
from __future__ import annotations

import gzip

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from ..kernel import build
from ..guest import image, topology, vm
from ..measure import lockstat, overload, procstat, schedstat, tracerun
from ..report import ab as report
from ..measure import waste as wst
from ..measure import workload as wl
from ..measure.sample import BenchParseError, BenchSpec, Measurement
from ..measure.sample import Side as Side    # bench.Side: the commands and tests build specs with it
from ..util import HarnessError, log

# Per CPU and domain: newidle balance's decaying maximum cost (ns), the
# estimate sched_balance_newidle() compares with avg_idle (only there with
# sched/verbose on).
NEWIDLE_COST_GLOB = "/sys/kernel/debug/sched/domains/cpu*/domain*/max_newidle_lb_cost"


@dataclass(frozen=True)
class Run:
    index: int
    rep: int
    level: int
    side: str                # label
    warmup: bool = False

    @property
    def tag(self) -> str:
        return f"r{self.index:03d}"


def plan(spec: BenchSpec) -> list[Run]:
    runs: list[Run] = []
    for _ in range(spec.warmup):
        runs.append(Run(len(runs), -1, max(spec.levels), "A", warmup=True))
    for rep in range(spec.reps):
        order = ("B", "A") if spec.alternate and rep % 2 else ("A", "B")
        for g in spec.levels:
            for label in order:
                runs.append(Run(len(runs), rep, g, label))
    return runs


def traced(spec: BenchSpec, run: Run) -> bool:
    """Whether `run` is traced for the wasted-CPU-time measure (warm-ups never)."""
    return not run.warmup and tracerun.traced(spec.waste, run.side)


def script(spec: BenchSpec, runs: list[Run], ncpus: int = 8, mem_mb: int = 1024,
           trace_kb: int = 0) -> str:
    """The guest script: topology, then each run with before/after snapshots
    (and, for traced runs, the scheduler trace of the run itself).
    `trace_kb`: the per-CPU trace buffer, when not tracerun's guest size
    (host mode traces every task of the machine: idlesteal/runs/host/sweep.py)."""
    # sched/verbose makes the kernel create sched/domains/ (newidle cost).
    lines = ["echo 1 > /sys/kernel/debug/sched/verbose 2>/dev/null || :",
             "section meta", "uname -a", "cat /proc/cmdline", "nproc",
             "section possible", "cat /sys/devices/system/cpu/possible",
             "section features.initial", "cat /sys/kernel/debug/sched/features",
             "section topology", topology.GUEST_SNIPPET.strip()]
    w = spec.wl
    lines += [f"command -v {w.binary} >/dev/null || fail '{w.binary} is not in the guest image'"]
    if any(traced(spec, r) for r in runs):
        lines += [f"trace_setup {trace_kb}"] if trace_kb else tracerun.setup(ncpus, mem_mb)
    if spec.lock_stat:      # fails at once on a kernel without /proc/lock_stat
        lines += ["lockstat_reset"]
    for r in runs:
        side = spec.side(r.side)
        cmd = shlex.join(spec.command(r.level))
        lines += [
            f"# run {r.index}: rep {r.rep} {w.level} {r.level} side {r.side}"
            + (" (warm-up)" if r.warmup else ""),
            f"set_features {' '.join(side.features)}" if side.features else ":",
            f"section {r.tag}.features", "cat /sys/kernel/debug/sched/features",
            f"section {r.tag}.schedstat.before", "schedsnap",
            f"section {r.tag}.stat.before", "cat /proc/stat",
        ]
        lines += ["lockstat_reset"] if spec.lock_stat else []
        lines += [f"section {r.tag}.output"]
        if not w.benign_exit:
            run = [f"{cmd} 2>&1 || fail '{w.name} failed in run {r.index}'"]
        else:
            run = [f"{cmd} >/tmp/workload.out 2>&1; rc=$?; cat /tmp/workload.out",
                   f"[ $rc = 0 ] || tail -n 1 /tmp/workload.out | grep -Eq "
                   f"{shlex.quote(w.benign_exit)} || fail '{w.name} failed in run {r.index}'"]
        traced_run = traced(spec, r)
        lines += (["trace_on", *run, "trace_off"] if traced_run else run)
        if spec.lock_stat:
            lines += [f"section {r.tag}.lockstat.window", "lockstat_window",
                      f"section {r.tag}.lockstat", f"lockstat_snap '{lockstat.RQ_LOCK}'"]
        lines += [
            f"section {r.tag}.stat.after", "cat /proc/stat",
            f"section {r.tag}.schedstat.after", "schedsnap",
            f"section {r.tag}.newidle_cost",
            f"for f in {NEWIDLE_COST_GLOB}; do [ -r \"$f\" ] && echo \"$f $(cat \"$f\")\"; done",
        ]
        if traced_run:
            lines.append(f"trace_dump {r.tag}")
    lines += ["section features.final", "cat /sys/kernel/debug/sched/features",
              # The series' per-LLC overload masks must be empty once the load
              # is gone (kernels without the series have no such file).
              "section overload.after",
              f"if [ -r {overload.OVERLOAD} ]; then",
              overload.overload_settled("/tmp/overload").strip(), "fi"]
    return "\n".join(lines) + "\n"


def parse_newidle_cost(text: str) -> float:
    """Lines '<path>/cpuN/domainM/max_newidle_lb_cost <ns>' -> mean over CPUs
    of the per-CPU sum over domains (what one newidle balance is expected to
    cost on that CPU); 0.0 when there are none (no debugfs, one CPU)."""
    per_cpu: dict[str, int] = {}
    for line in text.splitlines():
        m = re.search(r"/(cpu\d+)/domain\d+/max_newidle_lb_cost\s+(\d+)\s*$", line)
        if m:
            per_cpu[m.group(1)] = per_cpu.get(m.group(1), 0) + int(m.group(2))
    return sum(per_cpu.values()) / len(per_cpu) if per_cpu else 0.0


def measure(run: Run, spec: BenchSpec, sections: dict[str, str],
            topo: wst.Topology | None = None) -> Measurement:
    """One run's measurement; a traced run needs the guest's topology."""
    t = run.tag
    try:
        out = sections[f"{t}.output"]
        before = schedstat.parse(sections[f"{t}.schedstat.before"])
        after = schedstat.parse(sections[f"{t}.schedstat.after"])
        s0 = procstat.parse(sections[f"{t}.stat.before"])
        s1 = procstat.parse(sections[f"{t}.stat.after"])
    except KeyError as e:
        raise BenchParseError(f"run {run.index}: guest output lacks section {e}") from None
    try:
        metrics = spec.wl.parse(out)
    except wl.WorkloadParseError as e:
        raise BenchParseError(f"run {run.index}: {spec.workload}: {e}") from None
    d = schedstat.delta(before, after)
    feats = sections.get(f"{t}.features", "").split()
    side = spec.side(run.side)
    for w in side.features:
        if w not in feats:
            raise BenchParseError(f"run {run.index}: feature {w} not active "
                                  f"(features: {' '.join(feats)})")
    return Measurement(run.index, run.rep, run.level, run.side, list(side.features),
                       metrics[spec.wl.metric], metrics, procstat.busy(s0, s1),
                       d.per_cpu("sched_count"), d.per_cpu("sched_goidle"),
                       d.per_cpu("ttwu_count"), d.per_cpu("steal_tasks"),
                       d.per_cpu("steal_failed"), d.per_cpu("steal_search_ns"),
                       d.newidle_lb / d.ncpus, d.newidle_gained / d.ncpus,
                       parse_newidle_cost(sections.get(f"{t}.newidle_cost", "")),
                       procstat.cpu_ns(s0, s1), _waste(run, spec, sections, topo),
                       idle_split(d), _lock_stat(run, spec, sections, d))


def _lock_stat(run: Run, spec: BenchSpec, sections: dict[str, str],
               d: schedstat.Delta) -> dict | None:
    """lockstat.record() of the run queue lock, the window's length, and the
    series' own time in steal searches (all CPUs, us): a bound on the hold
    time steal_from() added, since it holds a victim's lock only inside one."""
    if not spec.lock_stat:
        return None
    try:
        stat = lockstat.parse(sections[f"{run.tag}.lockstat"])
        if stat.debug_locks_off:
            raise lockstat.LockStatError("lock debugging was off (a lockdep warning "
                                         "stopped lock_stat): see the console")
        window = sections[f"{run.tag}.lockstat.window"]
        return {**lockstat.record(stat), "seconds": lockstat.window_seconds(window),
                "steal_search_us": d.totals.get("steal_search_ns", 0) / 1000}
    except KeyError as e:
        raise BenchParseError(f"run {run.index}: guest output lacks section {e}") from None
    except lockstat.LockStatError as e:
        raise BenchParseError(f"run {run.index}: /proc/lock_stat: {e}") from None


# The LLC's sched domain in /proc/schedstat (x86 and arm64 with SCHED_MC).
LLC_DOMAIN = "MC"


def idle_split(d: schedstat.Delta) -> dict[str, float]:
    """What the run's switches to idle led to, per CPU, from schedstat:
    idle_entries (sched_goidle), newidle passes that reached the LLC domain
    and what they found there (balanced: nothing to pull, failed: could not
    move, gained: tasks pulled), newidle pulls at any level, steal attempts
    and steals.  Counters, not a per-entry trace: the rest of the entries
    were gated before the LLC level (avg_idle against the domains' cost,
    NI_RANDOM, no overload in the root domain) or pulled at the SMT level."""
    llc = d.newidle_domains.get(LLC_DOMAIN, {})
    n = d.ncpus or 1
    out = {"idle_entries": d.totals.get("sched_goidle", 0) / n,
           "newidle_llc": llc.get("lb_count", 0) / n,
           "newidle_llc_balanced": llc.get("lb_balanced", 0) / n,
           "newidle_llc_failed": llc.get("lb_failed", 0) / n,
           "newidle_llc_gained": llc.get("lb_gained", 0) / n,
           "newidle_gained": d.newidle_gained / n,
           "steal_tries": (d.totals.get("steal_tasks", 0) + d.totals.get("steal_failed", 0)) / n,
           "steals": d.totals.get("steal_tasks", 0) / n}
    if d.why:
        # the measurement patch's reasons (schedstat.WHY_FIELDS), per CPU
        out.update({k: d.totals.get(k, 0) / n for k in schedstat.WHY_FIELDS})
    return out


def _waste(run: Run, spec: BenchSpec, sections: dict[str, str],
           topo: wst.Topology | None) -> dict | None:
    if not traced(spec, run):
        return None
    if topo is None:
        raise BenchParseError(f"run {run.index}: traced, but no topology to measure it with")
    try:
        return tracerun.measure(sections, run.tag, topo).as_dict()
    except HarnessError as e:
        raise BenchParseError(f"run {run.index}: wasted-time measure: {e}") from None


def collect(spec: BenchSpec, runs: list[Run], sections: dict[str, str],
            topo: wst.Topology | None = None) -> list[Measurement]:
    """Measurements of the non-warm-up runs."""
    return [measure(r, spec, sections, topo) for r in runs if not r.warmup]


def timelines(spec: BenchSpec, runs: list[Run], sections: dict[str, str], topo: wst.Topology,
              outdir: Path, name: str) -> dict[str, Path]:
    """outdir/<name>-timeline-<side>.png for each traced side: the first
    repetition at the highest load level (CPUs as rows, time across).
    Returns {"timeline_A": path, ...} for the pictures written."""
    out: dict[str, Path] = {}
    for side in ("A", "B"):
        path = outdir / f"{name}-timeline-{side}.png"
        pick = [r for r in runs if traced(spec, r) and r.side == side
                and r.level == max(spec.levels)]
        if not pick:
            path.unlink(missing_ok=True)      # an older run set's
            continue
        r = pick[0]
        tl = tracerun.timeline(sections, r.tag, topo)
        title = (f"{name}: side {side} ({spec.side(side).name}), run {r.index}, "
                 f"{spec.wl.name} {spec.wl.level} {r.level}")
        if wst.plot_timeline(tl, path, title):
            out[f"timeline_{side}"] = path
    return out


def traces(spec: BenchSpec, runs: list[Run], sections: dict[str, str], outdir: Path,
           name: str) -> dict[str, Path]:
    """outdir/<name>-traces/<side>-<level>-<rep>.trace.gz: each traced run's
    scheduler trace as tracefs printed it (the ftrace text format, which
    Perfetto's UI and trace_processor open, gzip and all).  Returns
    {"traces": the folder} when one was written."""
    d = outdir / f"{name}-traces"
    picked = [r for r in runs if traced(spec, r) and not r.warmup]
    if not picked:
        return {}
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob("*.trace.gz"):         # an older run set's
        old.unlink()
    for r in picked:
        text = "\n".join(tracerun.lines(sections, r.tag)) + "\n"
        with gzip.open(d / f"{r.side}-{spec.wl.level}{r.level}-rep{r.rep}.trace.gz", "wt") as f:
            f.write(text)
    return {"traces": d}


def run_ab(spec: BenchSpec, preset: topology.Preset, kernel: Path, variant: str,
           name: str, outdir: Path, append: str = "", timeout: float = 0) -> dict:
    """One boot, one A/B sweep; writes outdir/<name>.{txt,json,png} and
    returns report.write()'s paths and table.  The run directory keeps
    run.json, so `idlesteal collect` can redo the results from it."""
    w = spec.wl
    initrd = image.build_base(tools=(w.binary,) if w.binary in image.TOOLS else (),
                              files=spec.files)
    runs = plan(spec)
    timeout = timeout or 120 + 240 * len(runs)
    log(f"bench {name}: {len(runs)} {w.name} runs ({w.level} "
        f"{','.join(map(str, spec.levels))}, {w.size_name} {spec.size}) on {preset.name}; "
        f"A = {spec.a.name}, B = {spec.b.name}")
    build_meta, qemu = build.read_meta(variant), vm.qemu_version(preset)
    res = vm.run_script(script(spec, runs, preset.ncpus, preset.mem_mb), preset, kernel, initrd,
                        timeout=timeout,
                        name="bench", cmdline=append.split() if append else None,
                        meta={"kind": "bench", "name": name, "preset": preset.name,
                              "variant": variant, "spec": spec.to_json(), "build": build_meta,
                              "qemu": qemu})
    preset.verify(res.sections.get("topology", ""))
    topo = wst.from_preset(preset)
    ms = collect(spec, runs, res.sections, topo)
    check_schedstat(res.sections, runs, preset.ncpus)
    overload = res.sections.get("overload.after", "")
    guest = {"uname": res.sections.get("meta", "").strip(), "run_dir": str(res.run_dir),
             "boot_seconds": round(res.boot_seconds, 1), "total_seconds": round(res.seconds, 1),
             "possible_cpus": res.sections.get("possible", "").strip(),
             "overload_after": overload.splitlines(),
             "stale_code_retries": [str(d) for d in res.retried]}
    return finish(spec, runs, ms, res.sections, topo, name, outdir,
                  report.metadata(spec, preset.name, build_meta, qemu, guest), res.run_dir)


def finish(spec: BenchSpec, runs: list[Run], ms: list[Measurement], sections: dict[str, str],
           topo: wst.Topology, name: str, outdir: Path, meta: dict, run_dir: Path) -> dict:
    """The results of a run's measurements, a guest's or the host's
    (idlesteal/runs/host/sweep.py): outdir/<name>.{txt,json,png}, the timelines, and
    the check that the series' overload masks were left empty."""
    out = report.write(name, outdir, spec, ms, meta)
    out.update(timelines(spec, runs, sections, topo, outdir, name))
    left = overload_left(sections.get("overload.after", ""))
    if left:
        raise HarnessError(f"{name}: CPUs still marked overloaded after the runs: "
                           + "; ".join(f"llc {llc}: {cpus}" for llc, cpus in left)
                           + f" (results kept in {out['json']}, run dir {run_dir})")
    return out


def check_schedstat(sections: dict[str, str], runs: list[Run], ncpus: int) -> None:
    """Every /proc/schedstat snapshot lists the preset's CPUs, each with the
    same domains, and no CPU counter (all cumulative) goes backwards in a run."""
    for r in runs:
        if r.warmup:
            continue
        snaps = [schedstat.parse(sections[f"{r.tag}.schedstat.{w}"]) for w in ("before", "after")]
        for snap in snaps:
            doms = {tuple(d.name for d in c.domains) for c in snap.cpus.values()}
            if len(snap.cpus) != ncpus or len(doms) != 1:
                raise BenchParseError(f"run {r.index}: /proc/schedstat lists {len(snap.cpus)} "
                                      f"CPUs (want {ncpus}) with domain sets {sorted(doms)}")
        back = [k for k, v in schedstat.delta(*snaps).totals.items() if v < 0]
        if back:
            raise BenchParseError(f"run {r.index}: schedstat {', '.join(back)} went backwards")


def overload_left(text: str) -> list[tuple[str, str]]:
    """(llc, overloaded CPUs) of every LLC whose overload mask is not empty
    in a settled read of overload_cpus (overload.overload_settled())."""
    try:
        return [(llc, cpus) for llc, cpus in overload.parse_overload(text) if cpus]
    except ValueError as e:
        raise BenchParseError(f"overload_cpus: {e}") from None
