from pathlib import Path

import pytest

from idlesteal.measure import schedstat

DATA = Path(__file__).parent / "data"


def real(name: str) -> str:
    return (DATA / name).read_text()


def test_real_7_2_sample_parses():
    s = schedstat.parse(real("schedstat-2x2x2-after.txt"))
    assert s.version == 17
    assert sorted(s.cpus) == list(range(8))
    cpu0 = s.cpus[0]
    assert [d.name for d in cpu0.domains] == ["SMT", "MC", "PKG"]
    assert [d.mask for d in cpu0.domains] == ["03", "0f", "ff"]
    assert s.cpus[5].domains[1].mask == "f0"
    assert cpu0.extra == [] and cpu0.debug == {} and cpu0.get("steal_tasks") == 0
    assert cpu0.fields["sched_count"] > 0
    assert cpu0.fields["legacy_zero"] == 0
    for d in cpu0.domains:
        assert set(d.lb) == {"busy", "idle", "newidle"}
        assert set(d.fields) == set(schedstat.DOMAIN_FIELDS)
        assert d.extra == []


def test_real_delta_is_positive_and_consistent():
    before = schedstat.parse(real("schedstat-2x2x2-before.txt"))
    after = schedstat.parse(real("schedstat-2x2x2-after.txt"))
    d = schedstat.delta(before, after)
    assert d.ncpus == 8
    for k in ("sched_count", "sched_goidle", "ttwu_count", "pcount"):
        assert d.totals[k] > 0
    assert d.totals["steal_tasks"] == 0
    assert d.newidle_lb >= d.newidle_gained >= 0
    assert d.jiffies > 0
    assert d.per_cpu("sched_count") == pytest.approx(d.totals["sched_count"] / 8)


def with_extra_fields(text: str, version: int, cpu_extra: list[int], dom_extra: list[int]) -> str:
    out = []
    for line in text.splitlines():
        if line.startswith("version"):
            line = f"version {version}"
        elif line.startswith("cpu"):
            line += "".join(f" {x}" for x in cpu_extra)
        elif line.startswith("domain"):
            line += "".join(f" {x}" for x in dom_extra)
        out.append(line)
    return "\n".join(out) + "\n"


def test_v1_series_version_18_extra_fields():
    """The v1 series appended its counters to the cpu lines as version 18;
    runs kept from it still re-read."""
    text = with_extra_fields(real("schedstat-2x2x2-after.txt"), 18, [7, 3, 900], [5])
    s = schedstat.parse(text)
    assert s.version == 18
    c = s.cpus[3]
    assert c.extra == [7, 3, 900]
    assert c.extra_named() == {"steal_tasks": 7, "steal_failed": 3, "steal_search_ns": 900}
    assert c.get("steal_tasks") == 7
    assert c.domains[0].extra == [5]
    assert s.total("steal_tasks") == 56


def test_steal_delta_from_extra_fields():
    base = real("schedstat-2x2x2-before.txt")
    b = schedstat.parse(with_extra_fields(base, 18, [1, 0, 0], []))
    a = schedstat.parse(with_extra_fields(base, 18, [4, 1, 10], []))
    d = schedstat.delta(b, a)
    assert d.totals["steal_tasks"] == 24 and d.totals["steal_failed"] == 8


def test_domain_mask_with_commas_for_many_cpus():
    zeros = " ".join(["0"] * 45)
    text = (f"version 17\ntimestamp 1\ncpu0 {' '.join(['1'] * 9)}\n"
            f"domain0 SMT 00000000,00000000,00000000,00000003 {zeros}\n"
            f"domain1 NUMA ffffffff,ffffffff,ffffffff,ffffffff {zeros}\n")
    s = schedstat.parse(text)
    assert s.cpus[0].domains[1].name == "NUMA"
    assert s.cpus[0].domains[0].mask.endswith(",00000003")


@pytest.mark.parametrize("text,msg", [
    ("timestamp 1\ncpu0 1 2 3 4 5 6 7 8 9\n", "no version"),
    ("version 15\n", "not supported"),
    ("version 16\ntimestamp 1\ncpu0 1 2 3 4 5 6 7 8 9\ndomain0 3 1 2\n", "expected >= 36"),
    ("version 17\ntimestamp 1\ncpu0 1 2 3\n", "expected >= 9"),
    ("version 17\ntimestamp 1\ndomain0 SMT 3 " + "0 " * 45 + "\n", "before any cpu"),
    ("version 17\ntimestamp 1\ncpu0 1 2 3 4 5 6 7 8 9\ndomain0 SMT 3 1 2\n", "expected >= 45"),
    ("version 17\ntimestamp 1\ncpu0 1 2 x 4 5 6 7 8 9\n", "non-numeric"),
    ("version 17\ntimestamp 1\n", "no cpu lines"),
    ("version 17\nbogus 1\n", "unexpected line"),
    ("version 17\ntimestamp 1\ncpu0 1 2 3 4 5 6 7 8 9\n  .steal_tasks : 1\n", "outside a cpu# section"),
    ("version 17\ntimestamp 1\ncpu0 1 2 3 4 5 6 7 8 9\ncpu#1, 2600.000 MHz\n", "no /proc/schedstat line"),
    ("version 17\ntimestamp 1\ncpu0 1 2 3 4 5 6 7 8 9\ncpu#x\n", "bad debugfs cpu header"),
    ("version 17\ntimestamp 1\ncpu0 1 2 3 4 5 6 7 8 9\ncpu#0\n  .steal_tasks : many\n", "non-numeric"),
])
def test_malformed_input_is_rejected(text, msg):
    with pytest.raises(schedstat.SchedstatError, match=msg):
        schedstat.parse(text)


def test_series_snapshot_with_debugfs_steal_fields():
    """`schedsnap` output of the series (2x2x2): /proc/schedstat at version 17,
    the steal counters and the cost estimate from sched/debug, by name."""
    before = schedstat.parse(real("schedsnap-2x2x2-before.txt"))
    after = schedstat.parse(real("schedsnap-2x2x2-after.txt"))
    assert after.version == 17
    c3 = after.cpus[3]
    assert c3.extra == []
    assert c3.debug == {"avg_idle": 7224034, "max_idle_balance_cost": 20421519,
                        "avg_steal_cost": 217014, "steal_tasks": 61, "steal_failed": 15,
                        "steal_search_ns": 7061151}
    assert all(set(c.debug) == set(c3.debug) for c in after.cpus.values())
    d = schedstat.delta(before, after)
    assert d.totals["steal_tasks"] == sum(after.cpus[i].get("steal_tasks")
                                          - before.cpus[i].get("steal_tasks") for i in range(8))
    assert d.totals["steal_failed"] > 0 and d.totals["steal_search_ns"] > 0
    assert "avg_steal_cost" not in d.totals     # a level, not a counter


def test_version_16_snapshot_of_6_12():
    """`schedsnap` on the 6.12 backport's steal kernel (2x2x2,
    build/ports/6.12/runs/20261126-202849-steal-2x2x2): /proc/schedstat at
    version 16 (no domain names, 8 lb fields per idle type), the series'
    counters from sched/debug as on 7.2."""
    before = schedstat.parse(real("schedsnap-v16-6.12-2x2x2-before.txt"))
    after = schedstat.parse(real("schedsnap-v16-6.12-2x2x2-after.txt"))
    assert after.version == 16 and len(after.cpus) == 8
    d0, d1, d2 = after.cpus[0].domains
    assert [(d.name, d.mask) for d in (d0, d1, d2)] == [
        ("domain0", "03"), ("domain1", "0f"), ("domain2", "ff")]
    assert d0.lb["busy"]["lb_count"] == 116 and d0.lb["busy"]["lb_imbalance"] == 115575
    assert d1.lb["newidle"] == dict(zip(schedstat.LB_FIELDS_V16, (48, 31, 9, 6418, 40, 0, 0, 31)))
    assert d0.fields["ttwu_wake_remote"] == 575 and d2.fields["ttwu_move_affine"] == 201
    assert after.cpus[3].get("steal_tasks") == 17 and before.cpus[3].get("steal_tasks") == 0
    d = schedstat.delta(before, after)
    assert d.totals["steal_tasks"] > 0 and d.why     # the measurement patch is carried
    assert d.newidle_lb == (after.lb_total("newidle", "lb_count")
                            - before.lb_total("newidle", "lb_count")) > 0
    assert after.lb_total("newidle", "lb_imbalance_load") == 0      # 17's fields read 0
    with pytest.raises(KeyError):
        after.lb_total("newidle", "lb_imbalance_lod")                # a typo does not
    assert d.newidle_domains.keys() == {"domain0", "domain1", "domain2"}


def test_version_16_domain_names_from_sched_domains():
    """schedsnap's `domname CPU LEVEL NAME` lines (6.12's sched/domains) name
    the version-16 domains, so the LLC's figures are found under MC."""
    text = real("schedsnap-v16-6.12-2x2x2-after.txt")
    head, sep, rest = text.partition("cpu#0")
    names = "".join(f"domname {c} {k} {n}\n" for c in range(8)
                    for k, n in enumerate(("SMT", "MC", "PKG")))
    s = schedstat.parse(head + names + sep + rest)
    assert [d.name for d in s.cpus[5].domains] == ["SMT", "MC", "PKG"]
    assert s.lb_by_domain("newidle", "lb_count")["MC"] > 0
    with pytest.raises(schedstat.SchedstatError, match="bad domain name line"):
        schedstat.parse(head + "domname 0 MC\n")


def test_debugfs_header_without_frequency():
    """Architectures other than x86 print a bare cpu#N."""
    s = schedstat.parse("version 17\ntimestamp 1\ncpu0 1 2 3 4 5 6 7 8 9\n"
                        "cpu#0\n  .steal_tasks                   : 4\n")
    assert s.cpus[0].get("steal_tasks") == 4


def with_why(text: str, per_cpu: dict[str, int]) -> str:
    """A schedsnap capture with the measurement patch's counters appended
    to every CPU's debugfs section, as its kernel prints them."""
    out = []
    for line in text.splitlines():
        out.append(line)
        if line.strip().startswith(".steal_search_ns"):
            out += [f"  .{k:<30}: {v}" for k, v in per_cpu.items()]
    return "\n".join(out) + "\n"


WHY_BEFORE = {"ni_calls": 100, "ni_rd_idle": 10, "ni_avg_idle": 50, "ni_below": 5,
              "ni_llc_empty": 20, "ni_dice": 5, "ni_pass": 8, "ni_other": 2,
              "steal_gated": 7, "steal_fail_locked": 1, "steal_fail_hot": 2,
              "steal_fail_unmovable": 3, "steal_fail_empty": 4}


def test_why_counters_by_name():
    """The measurement patch (patches/separate/) adds its counters to the
    debugfs sections by name; a delta knows whether the kernel has them."""
    before_text = real("schedsnap-2x2x2-before.txt")
    plain = schedstat.delta(schedstat.parse(before_text),
                            schedstat.parse(real("schedsnap-2x2x2-after.txt")))
    assert not plain.why and plain.totals["ni_calls"] == 0
    after = {k: 2 * v for k, v in WHY_BEFORE.items()}
    d = schedstat.delta(schedstat.parse(with_why(before_text, WHY_BEFORE)),
                        schedstat.parse(with_why(before_text, after)))
    assert d.why
    assert d.totals["ni_calls"] == 8 * 100 and d.totals["steal_fail_empty"] == 8 * 4
    assert sum(WHY_BEFORE[k] for k in schedstat.NEWIDLE_WHY) == WHY_BEFORE["ni_calls"]
    assert set(schedstat.WHY_FIELDS) <= set(d.totals)


def test_why_needs_every_cpu():
    """A snapshot where one CPU lacks a counter is not read as having them."""
    text = with_why(real("schedsnap-2x2x2-before.txt"), WHY_BEFORE)
    snap = schedstat.parse(text)
    assert schedstat.reports_why(snap)
    del snap.cpus[5].debug["steal_gated"]
    assert not schedstat.reports_why(snap)


def test_why_without_the_retired_reason():
    """The series' kernels no longer print ni_llc_empty (the LLC's pass is
    kept on an empty mask): their counters still count, the reason reads 0."""
    text = with_why(real("schedsnap-2x2x2-before.txt"), WHY_BEFORE)
    snap = schedstat.parse(text)
    for c in snap.cpus.values():
        del c.debug["ni_llc_empty"]
    assert schedstat.reports_why(snap)
    assert snap.total("ni_llc_empty") == 0 and snap.total("ni_pass") > 0


def test_real_why_capture():
    """`schedsnap` of the steal kernel with the measurement patch (2x2x2,
    hackbench -g 4 -l 200 with STEAL on, tests/guest/test_steal.py's on0 and
    on1): every newidle balance counted once by its reason, every failed
    pull once by its cause, and the LLC's passes as /proc/schedstat counts
    them (MC newidle lb_count) within the slack of reading CPU by CPU."""
    before = schedstat.parse(real("schedsnap-why-2x2x2-before.txt"))
    after = schedstat.parse(real("schedsnap-why-2x2x2-after.txt"))
    assert schedstat.reports_why(before) and schedstat.reports_why(after)
    d = schedstat.delta(before, after)
    t = d.totals
    assert t["ni_calls"] == 592
    # one balance was between its ni_calls and its reason as a CPU was read
    assert sum(t[k] for k in schedstat.NEWIDLE_WHY) == t["ni_calls"] - 1
    assert sum(t[k] for k in schedstat.STEAL_FAIL_WHY) == t["steal_failed"] == 34
    assert t["ni_pass"] == d.newidle_domains["MC"]["lb_count"] == 66
    assert t["ni_llc_empty"] > 0 and t["steal_tasks"] == 95
