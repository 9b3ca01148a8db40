"""Asymmetric CPU capacity with SMT: an arm64 guest (qemu-system-aarch64 -M
virt under TCG) whose device tree gives big and little cores, so the
scheduler builds an SD_ASYM_CPUCAPACITY domain and wakeups go through
select_idle_capacity() (series patch "sched/fair: Pick a stable CPU of an
idle SMT core in select_idle_capacity()").

Device tree: QEMU's own (`-machine dumpdtb=`), decompiled with dtc, with
`capacity-dmips-mhz` added to every cpu node (and a cpu-map with SMT
threads if QEMU did not write one), recompiled, booted with -dtb.  CPU
numbering: cpu = core * threads + thread; the first `big` cores are big.

Placement comparison (`idlesteal asym-bench`): two arm64 kernels from the
same tree, the series as applied in build/linux (obj build/obj-arm64,
variant "arm64") and the commit just before the patch, built from a
separate git worktree build/asym/linux into build/asym/obj-arm64 (build/
linux's HEAD is never moved).  The worktree/obj pair has the same relative
layout as build/linux + build/obj-arm64, so ccache serves most of it.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from ..kernel import build, cross, provenance, tree
from ..guest import image, topology, vm
from .. import paths
from ..measure import stats
from ..guest import read as guest_file
from ..util import HarnessError, log, run

VARIANT = "arm64"
PATCH_SUBJECT = "sched/fair: Pick a stable CPU of an idle SMT core in select_idle_capacity()"
QEMU_CPU = "max,pauth-impdef=on"   # impdef pointer auth: much cheaper under TCG


@dataclass(frozen=True)
class AsymPreset:
    name: str
    big: int                    # big cores (first in CPU numbering)
    little: int                 # little cores
    threads: int = 2            # SMT threads per core
    big_dmips: int = 1024       # capacity-dmips-mhz of big / little CPUs
    little_dmips: int = 512
    mem_mb: int = 1024
    boot_timeout: int = 300
    cmdline: tuple[str, ...] = ()
    nodes: int = 1              # NUMA nodes, cores split evenly in CPU order
    about: str = ""
    qemu: ClassVar[str] = "qemu-system-aarch64"

    @property
    def cores(self) -> int:
        return self.big + self.little

    @property
    def ncpus(self) -> int:
        return self.cores * self.threads

    def smt_groups(self) -> list[list[int]]:
        t = self.threads
        return [list(range(c * t, (c + 1) * t)) for c in range(self.cores)]

    def big_cpus(self) -> list[int]:
        return list(range(self.big * self.threads))

    def race_cpus(self) -> tuple[list[int], list[int]]:
        """(waker CPUs, park CPUs) for placement -W/-P with two threads.

        Thread 0 sleeps on the second sibling of big core 0, thread 1 on the
        first little CPU; their wakers sit on other little CPUs.  With a
        utilization that fits no CPU, both wakeups scan select_idle_capacity()
        from their sleep CPU: thread 0's scan meets big core 0's second
        sibling first, thread 1's meets its first sibling first, so two
        simultaneous wakeups that both see core 0 idle split over its
        siblings (unless each idle core has one representative CPU)."""
        t, lo = self.threads, self.big * self.threads
        if t < 2 or self.little < 2 or self.big < 2:
            raise HarnessError(f"{self.name}: the race layout needs SMT, 2 big and 2 little cores")
        return [lo + 1, lo + t], [1, lo]

    def dmips(self) -> dict[int, int]:
        return {c: self.big_dmips if c < self.big * self.threads else self.little_dmips
                for c in range(self.ncpus)}

    def capacities(self) -> dict[int, int]:
        """cpu_capacity as Linux normalises it (largest = 1024)."""
        top = max(self.big_dmips, self.little_dmips)
        return {c: (d << 10) // top for c, d in self.dmips().items()}

    def machine_args(self) -> list[str]:
        args = ["-machine", "virt,gic-version=3", "-cpu", QEMU_CPU,
                "-accel", "tcg,thread=multi",
                "-smp", f"{self.ncpus},sockets=1,clusters=1,cores={self.cores},"
                        f"threads={self.threads}",
                "-m", f"{self.mem_mb}M"]
        if self.nodes > 1:
            per, mem = self.ncpus // self.nodes, self.mem_mb // self.nodes
            for n in range(self.nodes):
                args += ["-object", f"memory-backend-ram,id=mem{n},size={mem}M",
                         "-numa", f"node,nodeid={n},cpus={n * per}-{(n + 1) * per - 1},"
                                  f"memdev=mem{n}"]
        return args

    def qemu_command(self, kernel: Path, initrd: Path, console: Path, out: Path,
                     cmdline: list[str]) -> list[str]:
        append = ["console=ttyAMA0", *topology.BASE_CMDLINE, *self.cmdline, *cmdline]
        return [self.qemu, *self.machine_args(), "-dtb", str(make_dtb(self)),
                "-kernel", str(kernel), "-initrd", str(initrd), "-append", " ".join(append),
                "-nodefaults", "-display", "none", "-no-reboot",
                "-serial", f"file:{console}",
                "-device", "virtio-serial-device",
                "-chardev", f"file,id=idlesteal-out,path={out}",
                "-device", "virtconsole,chardev=idlesteal-out"]

    @property
    def check_script(self) -> str:
        return GUEST_SNIPPET

    def verify(self, text: str) -> Observed:
        return verify(self, text)

    def describe(self) -> str:
        return (f"{self.name}: {self.big} big ({self.big_dmips}) + {self.little} little "
                f"({self.little_dmips}) core(s) x {self.threads} thread(s) = {self.ncpus} "
                f"arm64 CPUs, {self.mem_mb} MiB"
                + (f", {self.nodes} NUMA nodes" if self.nodes > 1 else "")
                + (f" — {self.about}" if self.about else ""))


PRESETS: dict[str, AsymPreset] = {p.name: p for p in [
    AsymPreset("asym2b2l", 2, 2, about="2 big + 2 little SMT2 cores, one LLC"),
    AsymPreset("asym1b1l", 1, 1, about="smallest asym + SMT guest"),
    AsymPreset("asym2node", 2, 2, nodes=2,
               about="asym2b2l as two NUMA nodes (big, little) from the device tree"),
]}
DEFAULT_PRESET = "asym2b2l"


def get(name: str) -> AsymPreset:
    try:
        return PRESETS[name]
    except KeyError:
        raise HarnessError(f"unknown asymmetric preset {name!r}; known:\n"
                           + "\n".join(f"  {p.describe()}" for p in PRESETS.values())) from None


# ---------------------------------------------------------------- device tree

_CPU_NODE = re.compile(r"^(\s*)cpu@([0-9a-fA-F]+) \{\s*$")


def patch_dts(dts: str, preset: AsymPreset) -> str:
    """Add capacity-dmips-mhz to the cpu nodes (in order: cpu index i is the
    i-th cpu@ node, as QEMU writes them) and a cpu-map if there is none."""
    lines = dts.splitlines()
    dmips = preset.dmips()
    out: list[str] = []
    idx = 0
    phandles: dict[int, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        m = _CPU_NODE.match(line)
        if m:
            if idx >= preset.ncpus:
                raise HarnessError(f"device tree has more cpu nodes than {preset.ncpus}")
            ind = m.group(1) + "\t"
            out.append(f"{ind}capacity-dmips-mhz = <{dmips[idx]:#x}>;")
            # Find this node's phandle (QEMU writes one when it writes cpu-map).
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("};"):
                pm = re.match(r"\s*phandle = <(0x[0-9a-fA-F]+|\d+)>;", lines[j])
                if pm:
                    phandles[idx] = pm.group(1)
                j += 1
            if idx not in phandles:
                phandles[idx] = f"{0x7f00 + idx:#x}"
                out.append(f"{ind}phandle = <{phandles[idx]}>;")
            idx += 1
        i += 1
    if idx != preset.ncpus:
        raise HarnessError(f"device tree has {idx} cpu nodes, preset {preset.name} "
                           f"wants {preset.ncpus}")
    text = "\n".join(out) + "\n"
    if re.search(r"^\s*cpu-map \{", text, re.M):
        return text
    cmap = ["\t\tcpu-map {", "\t\t\tsocket0 {", "\t\t\t\tcluster0 {"]
    for c, group in enumerate(preset.smt_groups()):
        cmap.append(f"\t\t\t\t\tcore{c} {{")
        for t, cpu in enumerate(group):
            cmap += [f"\t\t\t\t\t\tthread{t} {{", f"\t\t\t\t\t\t\tcpu = <{phandles[cpu]}>;",
                     "\t\t\t\t\t\t};"]
        cmap.append("\t\t\t\t\t};")
    cmap += ["\t\t\t\t};", "\t\t\t};", "\t\t};", ""]
    m = re.search(r"^\s*cpus \{\n(?:\s*#[a-z-]+ = <[^>]*>;\n)*", text, re.M)
    if not m:
        raise HarnessError("device tree has no /cpus node")
    return text[:m.end()] + "\n".join(cmap) + text[m.end():]


def dtb_dir() -> Path:
    return paths.build_dir() / "asym" / "dtb"


def make_dtb(preset: AsymPreset) -> Path:
    """build/asym/dtb/<preset>.dtb: QEMU's tree + capacities (+ cpu-map)."""
    d = dtb_dir()
    d.mkdir(parents=True, exist_ok=True)
    raw, dts, dtb = d / f"{preset.name}.qemu.dtb", d / f"{preset.name}.dts", d / f"{preset.name}.dtb"
    mach = preset.machine_args()
    mach[1] += f",dumpdtb={raw}"
    run([preset.qemu, *mach, "-nodefaults", "-display", "none"], capture=True)
    text = run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(raw)], capture=True).stdout
    dts.write_text(patch_dts(text, preset))
    run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(dtb), str(dts)], capture=True)
    return dtb


# ---------------------------------------------------------------- in the guest

GUEST_SNIPPET = guest_file("asym-topology.sh")


@dataclass
class Observed:
    smt: dict[int, list[int]] = field(default_factory=dict)
    cap: dict[int, int] = field(default_factory=dict)
    domains: dict[int, list[tuple[str, set[str]]]] = field(default_factory=dict)
    online: list[int] = field(default_factory=list)


def parse(text: str) -> Observed:
    from ..guest.topology import parse_cpulist
    obs = Observed()
    for line in text.splitlines():
        m = re.match(r"^cpu (\d+) smt=(\S+) cap=(\S+)", line)
        if m:
            cpu = int(m.group(1))
            obs.smt[cpu] = parse_cpulist(m.group(2))
            if m.group(3).isdigit():
                obs.cap[cpu] = int(m.group(3))
            continue
        m = re.match(r"^sd (\d+) (\d+) (\S+)\s*(.*)$", line)
        if m:
            obs.domains.setdefault(int(m.group(1)), []).append(
                (m.group(3), set(m.group(4).split())))
            continue
        m = re.match(r"^online (\S+)", line)
        if m:
            obs.online = parse_cpulist(m.group(1))
    return obs


def check(preset: AsymPreset, obs: Observed) -> list[str]:
    problems = topology.check_cpus(preset.ncpus, obs.online,
                                   [("SMT siblings", obs.smt, preset.smt_groups())])
    want = list(range(preset.ncpus))
    caps = preset.capacities()
    bad = [c for c in want if obs.cap.get(c) != caps[c]]
    if bad:
        problems.append("cpu_capacity: " + ", ".join(
            f"cpu{c}={obs.cap.get(c, 'missing')} (want {caps[c]})" for c in bad[:4])
            + " — capacity-dmips-mhz not applied?")
    for cpu in want:
        doms = obs.domains.get(cpu, [])
        if not doms:
            problems.append(f"cpu{cpu}: no sched domains in debugfs")
            break
        if preset.threads > 1 and (doms[0][0] != "SMT" or "SD_SHARE_CPUCAPACITY" not in doms[0][1]):
            problems.append(f"cpu{cpu}: lowest domain is {doms[0][0]}, expected an SMT "
                            "domain with SD_SHARE_CPUCAPACITY (sched_smt_active() off)")
            break
        if len(set(caps.values())) > 1 and not any(
                "SD_ASYM_CPUCAPACITY" in f and "SD_ASYM_CPUCAPACITY_FULL" in f for _, f in doms):
            problems.append(f"cpu{cpu}: no domain with SD_ASYM_CPUCAPACITY(_FULL): "
                            + "; ".join(f"{n}: {' '.join(sorted(f))}" for n, f in doms))
            break
    return problems


class AsymTopologyError(HarnessError):
    pass


def verify(preset: AsymPreset, text: str) -> Observed:
    obs = parse(text)
    problems = check(preset, obs)
    if problems:
        raise AsymTopologyError(f"arm64 guest does not match preset {preset.name}:\n"
                                + "\n".join(f"  {p}" for p in problems))
    return obs


RESULT_RE = re.compile(r"^RESULT (\{.*\})\s*$", re.M)


def parse_results(text: str) -> list[dict]:
    return [json.loads(m.group(1)) for m in RESULT_RE.finditer(text)]


# ---------------------------------------------------------------- kernels

def asym_dir() -> Path:
    return paths.build_dir() / "asym"


def patch_commit(src: Path | None = None) -> str:
    """The commit of build/linux that applies the patch (by subject)."""
    src = src or paths.tree_dir()
    revs = tree.git("log", "--format=%H %s", f"{tree.BASE_TAG}..HEAD", cwd=src).splitlines()
    for line in revs:
        rev, _, subj = line.partition(" ")
        if subj.strip() == PATCH_SUBJECT:
            return rev
    raise HarnessError(f"build/linux has no commit {PATCH_SUBJECT!r} on top of {tree.BASE_TAG}; "
                       "run `idlesteal prepare`")


def ensure_without_tree() -> tuple[Path, str]:
    """Worktree build/asym/linux at the commit before the patch."""
    rev = tree.git("rev-parse", f"{patch_commit()}^").strip()
    return tree.worktree(asym_dir() / "linux", rev), rev


@dataclass
class Kernel:
    label: str      # "with" / "without"
    image: Path
    commit: str


def kernels(build_them: bool = True, verbose: bool = False) -> dict[str, Kernel]:
    """{'with': series kernel, 'without': the series before the patch}."""
    head = tree.git("rev-parse", "HEAD").strip()
    wt, rev = ensure_without_tree()
    obj = asym_dir() / "obj-arm64"
    if build_them:
        with_img = build.build(VARIANT, verbose=verbose, arch="arm64")
        without_img = build.build(VARIANT, src=wt, obj=obj, verbose=verbose, arch="arm64")
    else:
        with_img = build.kernel_image(VARIANT, arch="arm64")
        without_img = build.kernel_image(VARIANT, obj=obj, arch="arm64")
    if head != patch_commit():
        log(f"note: build/linux HEAD {head[:12]} is not the patch's commit; "
            "'with' is the whole series as applied")
    return {"with": Kernel("with", with_img, head), "without": Kernel("without", without_img, rev)}


# ---------------------------------------------------------------- scripts

def smoke_script(preset: AsymPreset, threads: int, rounds: int, spin_ms: float = 5,
                 idle_ms: float = 20, flip_features: bool = True,
                 race: tuple[list[int], list[int]] | None = None) -> str:
    """Topology + one short placement run (+ sched_feat flips meanwhile,
    i.e. static key patching under multi-threaded TCG); with `race`
    (AsymPreset.race_cpus()), a second short run with concurrent wakers."""
    flips = ""
    if flip_features:
        flips = ("(for i in 1 2 3 4 5 6 7 8 9 10; do echo NO_TTWU_QUEUE > "
                 "/sys/kernel/debug/sched/features; sleep 0.1; echo TTWU_QUEUE > "
                 "/sys/kernel/debug/sched/features; sleep 0.1; done; echo flips-done) &\n")
    return (f"section topology\n{GUEST_SNIPPET.strip()}\n"
            f"section placement\n{flips}"
            f"placement -n {threads} -r {rounds} -s {spin_ms:g} -i {idle_ms:g} || fail placement\n"
            "wait\n"
            + (f"section placement-wakers\nplacement -n 2 -r {rounds} -s 10 -i 2"
               f"{_race_args(race)} || fail 'placement -W'\n" if race else "")
            + "section features\ncat /sys/kernel/debug/sched/features\n"
            "section uname\nuname -a\n")


def steal_fit_script(preset: AsymPreset, seconds: int = 5) -> str:
    """Does stealing respect capacity?  Phase "big": one CPU hog per big CPU
    and two more, started there and then allowed on the big CPUs and the
    first little CPU L, so that one always waits on a big CPU, while a pinned sleep loop on L makes it go newidle all the time.
    Every other task that may move (this shell, kthreadd, unbound kthreads
    and workqueues) is kept off L first, so the only tasks L may steal are
    the hogs, whose utilization does not fit L.  Phase "small": the hogs
    gone, wakelat's short requests (16 threads, kept off L), which fit every
    CPU."""
    big = preset.big_cpus()
    little = [c for c in range(preset.ncpus) if c not in big]
    allowed = f"{sum(1 << c for c in big + little[:1]):x}"
    not_l = f"{((1 << preset.ncpus) - 1) & ~(1 << little[0]):x}"
    lo, hi = big[0], big[-1]
    return f"""set -e
echo STEAL > /sys/kernel/debug/sched/features
section topology
{GUEST_SNIPPET.strip()}
# Per-CPU kthreads refuse; they cannot be stolen anyway.
for p in /proc/[0-9]*; do taskset -p {not_l} ${{p#/proc/}} > /dev/null 2>&1 || true; done
echo {not_l} > /sys/devices/virtual/workqueue/cpumask
for c in {' '.join(map(str, little))}; do
    taskset -c $c sh -c 'while :; do usleep 300; done' &
done
hogs=""
for i in $(seq {len(big) + 2}); do
    taskset -c {lo}-{hi} sh -c 'while :; do :; done' &
    hogs="$hogs $!"
done
for p in $hogs; do taskset -p {allowed} $p > /dev/null; done
sleep 1
section big0
schedsnap
sleep {seconds}
section big1
schedsnap
kill $hogs
section small0
schedsnap
wakelat -m 4 -w 3 -d {seconds} -u 50 > /dev/null
section small1
schedsnap
"""


def _race_args(race: tuple[list[int], list[int]] | None) -> str:
    if not race:
        return ""
    wakers, parks = race
    return f" -W {','.join(map(str, wakers))} -P {','.join(map(str, parks))}"


def bench_script(threads: list[int], rounds: int, runs: int, spin_ms: float,
                 idle_ms: float, race: tuple[list[int], list[int]] | None = None) -> str:
    lines = [f"section topology\n{GUEST_SNIPPET.strip()}", "section meta", "uname -a",
             "sleep 2"]
    w = _race_args(race)
    for r in range(runs):
        for n in threads:
            lines += [f"section place.n{n}.r{r}",
                      f"placement -n {n} -r {rounds} -s {spin_ms:g} -i {idle_ms:g}{w} "
                      "|| fail placement"]
    lines += ["section schedstat", "schedsnap"]
    return "\n".join(lines) + "\n"


def results_dir() -> Path:
    return paths.results_dir() / "asym"


def bench(preset_name: str = DEFAULT_PRESET, threads: list[int] | None = None,
          rounds: int = 200, runs: int = 3, boots: int = 2, spin_ms: float = 5,
          idle_ms: float = 20, build_them: bool = True, name: str | None = None,
          outdir: Path | None = None, concurrent: bool = False) -> dict:
    """Boot each kernel `boots` times (alternating), run placement `runs`
    times per thread count per boot; write results/asym/<name>.{json,txt}.

    concurrent: two threads, placement -W/-P with the layout of
    AsymPreset.race_cpus() (two wakeups selected at the same instant on
    different CPUs, scanning from different siblings of big core 0)."""
    preset = get(preset_name)
    race = preset.race_cpus() if concurrent else None
    if concurrent:
        threads = [2]
    threads = threads or [preset.big, preset.cores]
    ks = kernels(build_them)
    initrd = image.build_base("arm64")
    order = ["without", "with"]
    samples: dict[str, dict[int, list[dict]]] = {k: {n: [] for n in threads} for k in ks}
    guests: list[dict] = []
    script = bench_script(threads, rounds, runs, spin_ms, idle_ms, race)
    t0 = time.monotonic()
    for b in range(boots):
        for label in (order if b % 2 == 0 else order[::-1]):
            k = ks[label]
            res = vm.run_script(script, preset, k.image, initrd, name=f"asym-{label}",
                                timeout=300 + runs * len(threads) * rounds * 0.5)
            verify(preset, res.sections.get("topology", ""))
            for r in range(runs):
                for n in threads:
                    got = parse_results(res.sections.get(f"place.n{n}.r{r}", ""))
                    if len(got) != 1:
                        raise HarnessError(f"placement n={n} run {r}: no RESULT line "
                                           f"(run dir {res.run_dir})")
                    samples[label][n].append(got[0])
            guests.append({"kernel": label, "boot": b, "run_dir": str(res.run_dir),
                           "boot_seconds": round(res.boot_seconds, 1),
                           "total_seconds": round(res.seconds, 1),
                           "uname": res.sections.get("meta", "").strip()})
    rows = summarize(samples, rounds)
    meta = {"preset": preset.describe(), "rounds": rounds, "runs_per_boot": runs,
            "boots_per_kernel": boots, "spin_ms": spin_ms, "idle_ms": idle_ms,
            "wakers": race[0] if race else [], "parks": race[1] if race else [],
            "kernels": {k: {"commit": v.commit, "image": str(v.image)} for k, v in ks.items()},
            "patch": PATCH_SUBJECT, "qemu_cpu": QEMU_CPU,
            "cross_gcc": cross.toolchain_version(), "guests": guests,
            "seconds": round(time.monotonic() - t0, 1),
            # date, host, qemu_version, builds
            **provenance.provenance({VARIANT: build.read_meta(VARIANT)}, qemu=preset.qemu)}
    outdir = outdir or results_dir()
    outdir.mkdir(parents=True, exist_ok=True)
    name = name or f"{time.strftime('%Y%m%d-%H%M%S')}-{preset.name}"
    text = table(rows, meta)
    (outdir / f"{name}.json").write_text(json.dumps(
        {"meta": meta, "summary": rows, "samples": samples}, indent=2) + "\n")
    (outdir / f"{name}.txt").write_text(text)
    return {"rows": rows, "table": text, "json": outdir / f"{name}.json",
            "txt": outdir / f"{name}.txt"}


def summarize(samples: dict[str, dict[int, list[dict]]], rounds: int) -> list[dict]:
    rows = []
    ns = sorted({n for per in samples.values() for n in per})
    for n in ns:
        row: dict = {"threads": n}
        for label in ("without", "with"):
            xs = samples.get(label, {}).get(n, [])
            if not xs:
                continue
            for key in ("stacked_rounds", "stacked_pairs", "stacked_rounds_end", "migrated"):
                s = stats.summarize([float(x[key]) for x in xs])
                row[f"{label}.{key}"] = {"mean": s.mean, "stdev": s.stdev, "ci95": s.ci95,
                                         "n": s.n, "values": [x[key] for x in xs]}
        a = [float(x["stacked_rounds"]) for x in samples.get("without", {}).get(n, [])]
        b = [float(x["stacked_rounds"]) for x in samples.get("with", {}).get(n, [])]
        w = stats.welch(a, b)
        row["welch_p"] = w.p
        rows.append(row)
    return rows


def _cell(row: dict, key: str) -> str:
    v = row.get(key)
    if not v:
        return "-"
    return f"{v['mean']:.1f} ± {v['stdev']:.1f}"


def table(rows: list[dict], meta: dict) -> str:
    out = [f"placement, {meta['preset']}",
           f"{meta['rounds']} rounds per run, {meta['runs_per_boot']} runs per boot, "
           f"{meta['boots_per_kernel']} boots per kernel (alternating); spin "
           f"{meta['spin_ms']:g} ms, idle {meta['idle_ms']:g} ms; "
           + (f"concurrent wakers on CPUs {','.join(map(str, meta['wakers']))}, threads "
              f"sleep on CPUs {','.join(map(str, meta.get('parks', [])))} (placement -W -P)"
              if meta.get("wakers") else "one FUTEX_WAKE broadcast releases all threads"),
           f"without = {meta['kernels']['without']['commit'][:12]} (series before the patch), "
           f"with = {meta['kernels']['with']['commit'][:12]}",
           "stacked = rounds (of each run) right after the wakeup in which one core held two "
           "threads while another core was idle; mean ± stdev over runs",
           "",
           f"{'threads':>7} {'stacked without':>16} {'stacked with':>14} {'pairs without':>14} "
           f"{'pairs with':>11} {'stacked@end w/o':>16} {'stacked@end with':>17} {'p':>6}"]
    for r in rows:
        p = r.get("welch_p")
        out.append(f"{r['threads']:>7} {_cell(r, 'without.stacked_rounds'):>16} "
                   f"{_cell(r, 'with.stacked_rounds'):>14} {_cell(r, 'without.stacked_pairs'):>14} "
                   f"{_cell(r, 'with.stacked_pairs'):>11} "
                   f"{_cell(r, 'without.stacked_rounds_end'):>16} "
                   f"{_cell(r, 'with.stacked_rounds_end'):>17} "
                   f"{('%.3f' % p) if p is not None and p == p else '-':>6}")
    return "\n".join(out) + "\n"
