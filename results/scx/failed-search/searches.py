"""Steal searches per loader of a side-by-side JSON: steals, failed
searches (and their share), and a timed search's mean cost, over all loads.

    python3 results/scx/failed-search/searches.py results/scx/failed-search/2x2x2.json

Loaders are told apart by their final steal count (the JSON's "steals"),
as in results/scx/search-time/cost.py.
"""
import json
import re
import sys
from collections import Counter

d = json.load(open(sys.argv[1]))
names = {n: c for c, ns in d["steals"].items() for n in ns}
acc: dict[str, Counter[str]] = {}
for lines in d["loaders"].values():
    m = re.search(r"final (.*?) steal=", " ".join(lines))
    if not m:
        continue
    kv = {k: int(v) for k, v in (w.split("=") for w in m.group(1).split())}
    c = names.get(kv["steals"], "?")
    acc.setdefault(c, Counter()).update({k: kv.get(k, 0) for k in
                                         ("steals", "failed", "timed", "search_ns")})
print(sys.argv[1])
for c, t in sorted(acc.items()):
    searches = t["steals"] + t["failed"]
    print(f"{c:24} steals {t['steals']:8} failed {t['failed']:8}"
          f" ({100 * t['failed'] / max(searches, 1):4.1f}%)"
          f"  timed search {t['search_ns'] / max(t['timed'], 1) / 1000:7.1f} us")
