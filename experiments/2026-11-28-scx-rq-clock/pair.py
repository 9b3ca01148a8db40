"""vnow against head, cell by cell, from a side-by-side JSON: mean of B over
mean of A with its 95% interval, Welch's p over the repetitions (the
harness's idlesteal.measure.stats), and the wasted LLC %.

    python3 results/scx/rq-clock/pair.py 2x2x2.json [A B]
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from idlesteal.measure import stats  # noqa: E402


def main(path: str, a: str, b: str) -> None:
    d = json.load(open(path))
    vals: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    waste: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for m in d["measurements"]:
        key = (m["workload"], m["level"], m["contender"])
        vals[key].append(m["value"])
        if m.get("waste"):
            waste[key].append(100 * m["waste"]["fraction"]["llc"])
    print(f"{'cell':28} {b + ' / ' + a + ' [95% CI]':>24} {'p':>6}  wasted LLC % {a} / {b}")
    for (w, lvl, c) in sorted(k for k in vals if k[2] == a):
        x, y = vals[(w, lvl, a)], vals[(w, lvl, b)]
        p = stats.welch(y, x).p
        wa, wb = waste.get((w, lvl, a), []), waste.get((w, lvl, b), [])
        ws = (f"{statistics.mean(wa):.2f} / {statistics.mean(wb):.2f}"
              if wa and wb else "-")
        print(f"{w + ' ' + str(lvl):28} {stats.ratio(y, x).fmt():>24} {p:6.3f}  {ws}")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[0], *(args[1:3] if len(args) >= 3 else
                    ("scx_idlesteal.head", "scx_idlesteal.vnow")))
