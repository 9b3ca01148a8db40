"""A steal search's mean timed cost per loader of a side-by-side JSON.

    python3 results/scx/search-time/cost.py results/scx/search-time/2x2x2.json

Loaders are told apart by their final steal count (the JSON's "steals").
Without a `timed` counter (builds before it) every search was timed,
except for vsamp and vsampq, which timed one in 8: searches / 8 (a CPU's first
search is timed, so this is within 1 per CPU of the count).
"""
import json
import re
import sys
from typing import Iterator


def finals(path: str) -> Iterator[tuple[str, dict[str, int]]]:
    """Each load's loader and the counters of its final line."""
    d = json.load(open(path))
    names = {n: c for c, ns in d["steals"].items() for n in ns}
    for lines in d["loaders"].values():
        m = re.search(r"final (.*?) steal=", " ".join(lines))
        if m:
            kv = {k: int(v) for k, v in (w.split("=") for w in m.group(1).split())}
            yield names.get(kv["steals"], "?"), kv


def main(path: str) -> None:
    acc: dict[str, list[float]] = {}
    for c, kv in finals(path):
        searches = kv["steals"] + kv["failed"]
        timed = kv.get("timed", searches // 8 if "vsamp" in c else searches)
        acc.setdefault(c, []).append(kv["search_ns"] / max(timed, 1) / 1000)
    for c, v in acc.items():
        print(f"{c:24} mean timed search {sum(v) / len(v):8.1f} us  (loads: "
              + " ".join(f"{x:.0f}" for x in v) + ")")


if __name__ == "__main__":
    main(sys.argv[1])
