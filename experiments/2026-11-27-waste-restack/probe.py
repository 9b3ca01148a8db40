"""Boot the restacked scenario of tests/guest/test_waste.py N times and
print, per blinking run, the LLC-wasted time that began at an idle entry
(ie), the whole LLC-wasted time (llc), and the steals made and failed
(schedstat): the spread the test's STEAL-cut assertion has to live with.

Usage (from the checkout, the steal kernel built):
    python3 results/waste-restack/probe.py N [TAG ...] > OUT

With TAGs (FEATURE.NAME, FEATURE STEAL or NO_STEAL) the blinking runs are
those, in that order, instead of the test's (RESTACK).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "guest")]

from idlesteal.guest import image, topology, vm  # noqa: E402
from idlesteal.kernel import build  # noqa: E402
from idlesteal.measure import schedstat, tracerun  # noqa: E402
import test_waste as tw  # noqa: E402


def main() -> None:
    if len(sys.argv) < 2 or not sys.argv[1].isdigit() or not 1 <= int(sys.argv[1]) <= 100:
        sys.exit("usage: probe.py N [TAG ...]  (N boots, 1-100)")
    boots = int(sys.argv[1])
    for tag in sys.argv[2:]:
        if not re.fullmatch(r"(NO_)?STEAL\.[a-z0-9]+", tag):
            sys.exit(f"probe.py: bad TAG {tag!r}: STEAL.NAME or NO_STEAL.NAME, NAME [a-z0-9]+")
    if len(set(sys.argv[2:])) != len(sys.argv[2:]):
        sys.exit("probe.py: a TAG given twice")
    if sys.argv[2:]:
        tw.RESTACK = {t: (t.split(".")[0], 100) for t in sys.argv[2:]}
    kernel, initrd = build.bzimage("steal"), image.build_base()
    tags = [t for t, (_, blink) in tw.RESTACK.items() if blink is not None]
    print("boot run  " + "  ".join(f"{t}: ie llc steals/failed" for t in tags))
    for i in range(boots):
        r = vm.run_script(tw.restack_script(), topology.get("2x2x2"), kernel, initrd,
                          timeout=600, name="waste-restack")
        cells = []
        for t in tags:
            w = tracerun.measure(r.sections, t, tw.T222)
            d = schedstat.delta(schedstat.parse(r.sections[f"{t}.s0"]),
                                schedstat.parse(r.sections[f"{t}.s1"]))
            cells.append(f"{t}: {w.began['idle_entry']:.4f} {w.wasted['llc']:.4f} "
                         f"{d.totals['steal_tasks']}/{d.totals['steal_failed']}")
        print(i, r.run_dir.name, "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
