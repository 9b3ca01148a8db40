"""Migrations, waiting-task moves and bounces on synthetic ftrace
text, with the answers worked out by hand; the helpers and the 2x2x2
topology of tests/test_waste.py (times in microseconds)."""
from __future__ import annotations

import json

import pytest

from idlesteal.report import ab as report
from idlesteal.measure import waste
from tests.test_waste import A, B, C, D, E, Trace

G = 107
KW = 106                                   # a per-CPU kthread: kworker/0:1
NAMES = {G: "worker-g", KW: "kworker/0:1"}
MS = 1000


def scenario() -> Trace:
    """CPU 0 runs A, CPU 1 runs C, CPU 4 runs E; the others are idle.

    - B (waiting on CPU 0) is pulled to CPU 1 at 20 and back to CPU 0 at
      1020 (1 ms later), still waiting: 2 waiting moves, 1 bounce.
    - D (waiting on CPU 0) is pulled to CPU 2 at 2100 and back to CPU 0 at
      8100 (6 ms later, outside the 5 ms window): 2 waiting moves, no
      bounce.
    - E sleeps on CPU 4 at 3000 and is woken onto CPU 5 at 3100 (a
      wakeup placement): 1 migration, not a waiting move.
    - kworker/0:1 waits on CPU 0 and is moved to CPU 1: a per-CPU kthread,
      not counted at all.
    - G (waiting on CPU 0) is pulled to CPU 6 at 9000 (a waiting move),
      runs there, sleeps, and is woken back onto CPU 0 at 9300, 0.3 ms
      later: the return is a wakeup placement, so no bounce.

    Hand: 7 migrations, 5 of waiting tasks, 1 bounce."""
    t = Trace(cur={0: A, 1: C, 4: E}, names=NAMES)
    t.wakeup(10, 0, B, 0)
    t.migrate(20, 1, B, 0, 1)
    t.migrate(20 + MS, 0, B, 1, 0)
    t.wakeup(2000, 0, D, 0)
    t.migrate(2100, 2, D, 0, 2)
    t.switch(3000, 4, "S", 0)
    t.wakeup(3100, 5, E, 5, event="sched_waking")
    t.migrate(3100, 5, E, 4, 5)
    t.wakeup(3101, 5, E, 5)
    t.switch(3200, 5, "R", E)
    t.wakeup(4000, 0, KW, 0)
    t.migrate(4100, 1, KW, 0, 1)
    t.migrate(2100 + 6 * MS, 0, D, 2, 0)
    t.wakeup(8500, 0, G, 0)
    t.migrate(9000, 6, G, 0, 6)
    t.switch(9100, 6, "R", G)
    t.switch(9200, 6, "S", 0)
    t.wakeup(9300, 0, G, 0, event="sched_waking")
    t.migrate(9300, 0, G, 6, 0)
    t.wakeup(9301, 0, G, 0)
    t.mark(10_000, 0, "end")
    return t


def test_counts_of_a_bounce_a_late_return_a_wakeup_and_a_kthread():
    w = scenario().analyse()
    assert w.inconsistencies == 0
    assert (w.migrations, w.migrations_waiting, w.bounces) == (7, 5, 1)
    d = w.as_dict()
    assert w.window == pytest.approx(10_000e-6) and w.cpu_time == pytest.approx(8 * 0.01)
    assert d["migrations_waiting_per_cpu_s"] == pytest.approx(5 / 0.08)
    assert d["bounces_per_cpu_s"] == pytest.approx(1 / 0.08)
    assert d["migrations_per_cpu_s"] == pytest.approx(7 / 0.08)
    assert d["bounce_window_ns"] == waste.BOUNCE_WINDOW_NS == 5_000_000
    json.dumps(d)
    assert "migrations 7" in w.format() and "bounces 1" in w.format()


def test_the_window_edge_is_inclusive_and_a_return_beyond_it_is_not():
    for gap, want in ((5 * MS, 1), (5 * MS + 1, 0)):
        t = Trace(cur={0: A})
        t.wakeup(10, 0, B, 0)
        t.migrate(20, 1, B, 0, 1)
        t.migrate(20 + gap, 0, B, 1, 0)
        assert t.analyse().bounces == want, gap


def test_ping_pong_counts_each_move_undone_by_the_next():
    t = Trace(cur={0: A})
    t.wakeup(10, 0, B, 0)
    for i, (orig, dest) in enumerate([(0, 1), (1, 0), (0, 1), (1, 2)]):
        t.migrate(100 + 100 * i, dest, B, orig, dest)
    w = t.analyse()
    # 0->1 undone by 1->0, 1->0 undone by 0->1; 0->1 then 1->2 is no return
    assert (w.migrations, w.migrations_waiting, w.bounces) == (4, 4, 2)


def test_moves_before_the_window_start_are_not_counted():
    t = Trace(cur={0: A})
    t.wakeup(10, 0, B, 0)
    t.migrate(20, 1, B, 0, 1)              # before the start marker
    t.mark(100, 0, "go")
    t.migrate(200, 0, B, 1, 0)             # a return, but its first move is outside
    t.migrate(300, 3, B, 0, 3)
    w = t.analyse(start="go")
    assert (w.migrations, w.migrations_waiting, w.bounces) == (2, 2, 0)


def test_a_pinned_per_cpu_kthread_name_is_what_excludes():
    t = Trace(cur={0: A}, names={KW: "kworker/u16:2"})   # unbound kworker: counted
    t.wakeup(10, 0, KW, 0)
    t.migrate(20, 1, KW, 0, 1)
    assert t.analyse().migrations_waiting == 1


def _waste_dict(waiting: int, bounces: int, migrations: int) -> dict:
    w = scenario().analyse().as_dict()
    w.update(migrations=migrations, migrations_waiting=waiting, bounces=bounces)
    return w


def test_report_stats_and_lines():
    from idlesteal.report.ab import MIGRATION_KEYS, migration_lines
    d = _waste_dict(8, 4, 16)
    assert MIGRATION_KEYS["migrations_waiting_per_cpu_s"][1](d) == pytest.approx(100.0)
    assert MIGRATION_KEYS["bounces_per_cpu_s"][1](d) == pytest.approx(50.0)
    e = {k: {"mean": f(d), "ci95": 1.5} for k, (_, f) in MIGRATION_KEYS.items()}
    lines = migration_lines([{"level": 2, "A": {"waste": e}}])
    assert "migrations of waiting tasks /CPU-s" in lines[0] and "bounces /CPU-s" in lines[0]
    assert "100.00 ± 1.50" in lines[1] and "50.00 ± 1.50" in lines[1]
    assert report.migration_lines([{"level": 2, "A": {}}]) == []
