"""Parser for a scheduler statistics snapshot: /proc/schedstat (version 17
as printed by Linux 7.2's kernel/sched/stats.c show_schedstat(), and later
versions that append fields), optionally followed by the per-CPU lines of
/sys/kernel/debug/sched/debug that carry task stealing (the guest's
`schedsnap`, idlesteal/guest/helpers.sh):

    version 17
    timestamp <jiffies>
    cpu<N> <9 fields> [extra fields...]
    domain<K> <name> <cpumask> <3 idle types x 11 lb fields> <12 fields> [extra...]
    cpu#<N>[, <MHz> MHz]
      .<name>      : <integer>

Version 16 (6.12 LTS, the backport's base) has no domain name and 8 lb
fields per idle type, one lb_imbalance where 17 has four kinds:
    domain<K> <cpumask> <3 idle types x 8 lb fields> <12 fields>
Such a domain is named by the `domname <cpu> <level> <name>` lines the
guest's schedsnap adds from sched/domains, else by its line key (domain0,
domain1, ...), where the per-name figures that look for MC
(bench.idle_split()) read 0; the lb fields 17 added read 0 (Domain.lb
keeps what the kernel printed).
The series keeps /proc/schedstat at version 17 and reports its counters
(steal_tasks, steal_failed, steal_search_ns) and the cost estimate
(avg_steal_cost) in debugfs, by name.  The 11-patch series of v1 appended
the three counters to the cpu lines as version 18; CPU_EXTRA_NAMES reads
those positionally, so older runs still re-read.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..util import ParseError

CPU_FIELDS = ("yld_count", "legacy_zero", "sched_count", "sched_goidle", "ttwu_count",
              "ttwu_local", "rq_cpu_time", "run_delay", "pcount")
IDLE_TYPES = ("busy", "idle", "newidle")  # __CPU_NOT_IDLE, CPU_IDLE, CPU_NEWLY_IDLE
LB_FIELDS = ("lb_count", "lb_balanced", "lb_failed", "lb_imbalance_load",
             "lb_imbalance_util", "lb_imbalance_task", "lb_imbalance_misfit", "lb_gained",
             "lb_hot_gained", "lb_nobusyq", "lb_nobusyg")
# Version 16: one imbalance field, no domain name.
LB_FIELDS_V16 = ("lb_count", "lb_balanced", "lb_failed", "lb_imbalance", "lb_gained",
                 "lb_hot_gained", "lb_nobusyq", "lb_nobusyg")
# The oldest version read: 6.12's.
MIN_VERSION = 16
# Every LB field of either version: a name of one reads 0 on the other.
LB_NAMES = frozenset(LB_FIELDS + LB_FIELDS_V16)
DOMAIN_FIELDS = ("alb_count", "alb_failed", "alb_pushed", "sbe_count", "sbe_balanced",
                 "sbe_pushed", "sbf_count", "sbf_balanced", "sbf_pushed", "ttwu_wake_remote",
                 "ttwu_move_affine", "ttwu_move_balance")
# The steal counters, by their names in /sys/kernel/debug/sched/debug.
STEAL_FIELDS = ("steal_tasks", "steal_failed", "steal_search_ns")
# STEAL_KICK (series patch 10): kicks sent by a CPU that became overloaded,
# kicks run by the idle CPU that got one, and those that pulled a task.
KICK_FIELDS = ("steal_kicks_sent", "steal_kicks", "steal_kick_tasks")
# Every counter of the series a run reports (side-by-side, per run).
COUNTERS = STEAL_FIELDS + KICK_FIELDS
# The measurement patch (patches/separate/, "Count why newidle balancing
# leaves a CPU idle"): what newidle balancing did at the LLC domain, one
# count per entry by the first reason that applies (NEWIDLE_WHY, summing to
# ni_calls; ni_llc_empty, STEAL's skip of the pass on an empty mask, only in
# runs of the series before it kept the pass, and 0 since), the pulls the cost estimate kept from searching (steal_gated),
# and the failed pulls by cause (STEAL_FAIL_WHY, summing to steal_failed).
NEWIDLE_WHY = ("ni_rd_idle", "ni_avg_idle", "ni_below", "ni_llc_empty", "ni_dice",
               "ni_pass", "ni_other")
STEAL_FAIL_WHY = ("steal_fail_locked", "steal_fail_hot", "steal_fail_unmovable",
                  "steal_fail_empty")
WHY_FIELDS = ("ni_calls",) + NEWIDLE_WHY + ("steal_gated",) + STEAL_FAIL_WHY
# Positional names for cpu-line fields after the standard nine (version 18
# of the v1 series).
CPU_EXTRA_NAMES = STEAL_FIELDS


class SchedstatError(ParseError):
    pass


@dataclass
class Domain:
    level: int
    name: str
    mask: str
    lb: dict[str, dict[str, int]]      # idle type -> LB field -> value
    fields: dict[str, int]             # DOMAIN_FIELDS
    extra: list[int] = field(default_factory=list)


@dataclass
class Cpu:
    cpu: int
    fields: dict[str, int]
    extra: list[int] = field(default_factory=list)
    domains: list[Domain] = field(default_factory=list)
    debug: dict[str, int] = field(default_factory=dict)  # debugfs name -> value

    def extra_named(self) -> dict[str, int]:
        return dict(zip(CPU_EXTRA_NAMES, self.extra))

    def get(self, name: str) -> int:
        """A standard, debugfs or positional extra field; 0 when the kernel
        has no such field."""
        if name in self.fields:
            return self.fields[name]
        if name in self.debug:
            return self.debug[name]
        return self.extra_named().get(name, 0)


@dataclass
class Schedstat:
    version: int
    timestamp: int
    cpus: dict[int, Cpu]

    def total(self, name: str) -> int:
        return sum(c.get(name) for c in self.cpus.values())

    def lb_total(self, idle_type: str, name: str) -> int:
        return sum(self.lb_by_domain(idle_type, name).values())

    def lb_by_domain(self, idle_type: str, name: str) -> dict[str, int]:
        """An LB field summed over CPUs, per domain name (SMT, MC, PKG, ...)."""
        if name not in LB_NAMES:
            raise KeyError(f"no LB field {name!r} in any schedstat version")
        out: dict[str, int] = {}
        for c in self.cpus.values():
            for d in c.domains:
                out[d.name] = out.get(d.name, 0) + d.lb[idle_type].get(name, 0)
        return out


def _ints(tokens: list[str], where: str) -> list[int]:
    try:
        return [int(t) for t in tokens]
    except ValueError as e:
        raise SchedstatError(f"non-numeric field in {where}: {e}") from None


def parse(text: str) -> Schedstat:
    version = timestamp = None
    cpus: dict[int, Cpu] = {}
    current: Cpu | None = None
    debug_cpu: Cpu | None = None
    names: dict[tuple[int, int], str] = {}    # (cpu, level) -> name (version 16)
    for lineno, line in enumerate(text.splitlines(), 1):
        tok = line.split()
        if not tok:
            continue
        key = tok[0]
        where = f"line {lineno} ({key})"
        if key == "version":
            version = int(tok[1])
            if version < MIN_VERSION:
                raise SchedstatError(f"schedstat version {version} < {MIN_VERSION} "
                                     "is not supported")
        elif key == "timestamp":
            timestamp = int(tok[1])
        elif key == "domname":
            if len(tok) != 4 or not (tok[1].isdigit() and tok[2].isdigit()):
                raise SchedstatError(f"{where}: bad domain name line {line[:60]!r}")
            names[(int(tok[1]), int(tok[2]))] = tok[3]
        elif key.startswith("cpu#"):
            n = key[4:].rstrip(",")
            if not n.isdigit():
                raise SchedstatError(f"{where}: bad debugfs cpu header {line[:60]!r}")
            if int(n) not in cpus:
                raise SchedstatError(f"{where}: debugfs cpu {n} has no /proc/schedstat line")
            debug_cpu = cpus[int(n)]
        elif key.startswith("."):
            name, sep, value = line.strip()[1:].partition(":")
            if debug_cpu is None or not sep:
                raise SchedstatError(f"{where}: debugfs field outside a cpu# section")
            debug_cpu.debug[name.strip()] = _ints([value.strip()], where)[0]
        elif key.startswith("cpu") and key[3:].isdigit():
            vals = _ints(tok[1:], where)
            if len(vals) < len(CPU_FIELDS):
                raise SchedstatError(f"{where}: {len(vals)} fields, expected >= {len(CPU_FIELDS)}")
            current = Cpu(int(key[3:]), dict(zip(CPU_FIELDS, vals)), vals[len(CPU_FIELDS):])
            cpus[current.cpu] = current
        elif key.startswith("domain") and key[6:].isdigit():
            if current is None:
                raise SchedstatError(f"{where}: domain line before any cpu line")
            named = version is None or version >= 17
            head = 3 if named else 2
            lbf = LB_FIELDS if named else LB_FIELDS_V16
            nlb = len(IDLE_TYPES) * len(lbf)
            if len(tok) < head:
                raise SchedstatError(f"{where}: missing {'name or ' if named else ''}mask")
            vals = _ints(tok[head:], where)
            if len(vals) < nlb + len(DOMAIN_FIELDS):
                raise SchedstatError(f"{where}: {len(vals)} fields, expected >= "
                                     f"{nlb + len(DOMAIN_FIELDS)}")
            lb = {it: dict(zip(lbf, vals[i * len(lbf):(i + 1) * len(lbf)]))
                  for i, it in enumerate(IDLE_TYPES)}
            tail = vals[nlb:]
            name, mask = (tok[1], tok[2]) if named else (key, tok[1])
            current.domains.append(Domain(int(key[6:]), name, mask, lb,
                                          dict(zip(DOMAIN_FIELDS, tail)),
                                          tail[len(DOMAIN_FIELDS):]))
        else:
            raise SchedstatError(f"{where}: unexpected line {line[:60]!r}")
    if version is None:
        raise SchedstatError("no version line")
    if not cpus:
        raise SchedstatError("no cpu lines")
    for c in cpus.values():
        for d in c.domains:
            d.name = names.get((c.cpu, d.level), d.name)
    return Schedstat(version, timestamp or 0, cpus)


@dataclass
class Delta:
    """after - before, summed over CPUs (and over domains for LB counts)."""
    ncpus: int
    totals: dict[str, int]
    newidle_lb: int
    newidle_gained: int
    jiffies: int
    # newidle LB fields per domain name: {"MC": {"lb_count": n, ...}, ...}
    newidle_domains: dict[str, dict[str, int]] = field(default_factory=dict)
    # the kernel reports WHY_FIELDS (the measurement patch is applied)
    why: bool = False

    def per_cpu(self, name: str) -> float:
        return self.totals.get(name, 0) / self.ncpus if self.ncpus else 0.0


def delta(before: Schedstat, after: Schedstat) -> Delta:
    if set(before.cpus) != set(after.cpus):
        raise SchedstatError("CPU sets differ between the two snapshots")
    names = list(CPU_FIELDS) + list(STEAL_FIELDS) + list(KICK_FIELDS) + list(WHY_FIELDS)
    totals = {n: after.total(n) - before.total(n) for n in names}
    doms: dict[str, dict[str, int]] = {}
    for f in ("lb_count", "lb_balanced", "lb_failed", "lb_gained"):
        b, a = before.lb_by_domain("newidle", f), after.lb_by_domain("newidle", f)
        for name in a:
            doms.setdefault(name, {})[f] = a[name] - b.get(name, 0)
    return Delta(len(after.cpus), totals,
                 after.lb_total("newidle", "lb_count") - before.lb_total("newidle", "lb_count"),
                 after.lb_total("newidle", "lb_gained") - before.lb_total("newidle", "lb_gained"),
                 after.timestamp - before.timestamp, doms, reports_why(after))


# The reasons of the series before it kept the LLC's pass on an empty mask,
# which its kernels no longer print (they read 0).
RETIRED_WHY = frozenset({"ni_llc_empty"})


def reports_why(snap: Schedstat) -> bool:
    """Does every CPU of @snap carry the measurement patch's counters?"""
    return bool(snap.cpus) and all(all(n in c.debug for n in WHY_FIELDS if n not in RETIRED_WHY)
                                   for c in snap.cpus.values())
