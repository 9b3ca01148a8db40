import pytest

from idlesteal.measure import kcsan
from idlesteal.guest import vm

BASE = """\
[   12.000001] ==================================================================
[   12.000002] BUG: KCSAN: data-race in tick_nohz_next_event / tick_nohz_stop_tick
[   12.000003]
[   12.000004] write to 0xffff88807dc1e0a8 of 8 bytes by task 0 on cpu 2:
[   12.000005]  tick_nohz_stop_tick+0x9c/0x3a0
[   12.000006]  tick_nohz_idle_stop_tick+0x57/0x120
[   12.000007]  do_idle+0x1b2/0x240
[   12.000008]
[   12.000009] read to 0xffff88807dc1e0a8 of 8 bytes by task 0 on cpu 5:
[   12.000010]  tick_nohz_next_event+0x3d/0x1c0
[   12.000011]  do_idle+0x1a1/0x240
[   12.000012]
[   12.000013] value changed: 0x0000000000000000 -> 0x0000000000000001
[   12.000014]
[   12.000015] Reported by Kernel Concurrency Sanitizer on:
[   12.000016] CPU: 5 UID: 0 PID: 0 Comm: swapper/5 Not tainted 7.2.13 #1
[   12.000017] ==================================================================
"""
SERIES = """\
==================================================================
BUG: KCSAN: data-race in enqueue_task_fair / pick_task_fair

write to 0xffff88807dc2b1c0 of 4 bytes by task 211 on cpu 1:
 enqueue_task_fair+0x5e1/0x9c0
 ttwu_do_activate+0x80/0x2a0

race at unknown origin, with read to 0xffff88807dc2b1c0 of 4 bytes by interrupt on cpu 3:
 pick_task_fair+0x3f0/0x6a0
 __schedule+0x2ab/0xd20

Reported by Kernel Concurrency Sanitizer on:
==================================================================
"""


def test_reports_are_parsed_and_sorted():
    reports = kcsan.parse(BASE + "unrelated line\n" + SERIES)
    assert [r.title for r in reports] == ["tick_nohz_next_event / tick_nohz_stop_tick",
                                          "enqueue_task_fair / pick_task_fair"]
    base, series = reports
    assert [(a.kind, a.size, a.who, a.cpu) for a in base.accesses] == [
        ("write", 8, "task 0", 2), ("read", 8, "task 0", 5)]
    assert base.accesses[0].frames == ["tick_nohz_stop_tick", "tick_nohz_idle_stop_tick", "do_idle"]
    assert not base.touches_series() and series.touches_series()
    assert series.accesses[1].who == "interrupt"
    s = kcsan.summarize(reports)
    assert s == {"reports": 2, "series": {"enqueue_task_fair / pick_task_fair": 1},
                 "base": {"tick_nohz_next_event / tick_nohz_stop_tick": 1}}


def test_sparsemask_helpers_count_as_series():
    text = SERIES.replace("enqueue_task_fair / pick_task_fair", "foo / bar") \
                 .replace("enqueue_task_fair+", "sparsemask_set_elem+") \
                 .replace("pick_task_fair+", "bar+")
    assert kcsan.parse(text)[0].touches_series()


def test_report_without_accesses_is_an_error():
    with pytest.raises(kcsan.KcsanParseError, match="no access lines"):
        kcsan.parse("BUG: KCSAN: data-race in a / b\n\n====\n")


def test_only_data_races_are_tolerated():
    text = BASE + "BUG: KCSAN: assert: race in foo\n"
    assert vm.kernel_errors(text, kcsan.DATA_RACE) == ["BUG: KCSAN: assert: race in foo"]
    assert len(vm.kernel_errors(text)) == 2
