"""Steal searches per loader of a side-by-side JSON: steals, failed
searches (and their share), and a timed search's mean cost, over all loads.

    python3 results/scx/failed-search/searches.py results/scx/failed-search/2x2x2.json

Loaders are told apart by their final steal count, as in
results/scx/search-time/cost.py, whose reader this uses.
"""
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search-time"))
from cost import finals  # noqa: E402


def main(path: str) -> None:
    acc: dict[str, Counter[str]] = {}
    for c, kv in finals(path):
        acc.setdefault(c, Counter()).update(
            {k: kv.get(k, 0) for k in ("steals", "failed", "timed", "search_ns")})
    print(path)
    for c, t in sorted(acc.items()):
        searches = t["steals"] + t["failed"]
        print(f"{c:24} steals {t['steals']:8} failed {t['failed']:8}"
              f" ({100 * t['failed'] / max(searches, 1):4.1f}%)"
              f"  timed search {t['search_ns'] / max(t['timed'], 1) / 1000:7.1f} us")


if __name__ == "__main__":
    main(sys.argv[1])
