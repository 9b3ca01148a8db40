"""Summarize cost.sh's output: per loader and workload, the workload's
result per round, and per callback the calls per run and the mean ns
(all rounds' run time over all their calls).

    python3 results/scx/callback-cost/ana.py OUTPUT.LOG
"""
import re
import statistics
import sys
from collections import defaultdict


def main(path: str) -> None:
    res: dict[tuple[str, str], list[float]] = defaultdict(list)
    cost: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for line in open(path, errors="replace"):
        f = line.split()
        if f[:1] == ["RUN"] and len(f) >= 6:
            res[(f[1], f[2])].append(float(re.sub(r"[^0-9.]", "", f[-1])))
        elif len(f) == 11 and f[3] == "cost":
            c = cost[(f[0], f[1], f[4])]
            calls, mean = int(f[6]), int(f[8])
            c[0] += calls
            c[1] += calls * mean
            c[2] += 1
    for (loader, w), vals in sorted(res.items()):
        print(f"{loader:24} {w:6} result {statistics.mean(vals):9.3f} "
              f"(rounds: {' '.join(f'{v:g}' for v in vals)})")
        rows = [(k[2], v) for k, v in cost.items() if k[:2] == (loader, w) and v[0]]
        rows.sort(key=lambda r: -r[1][1])
        total = 0
        for name, (calls, ns, runs) in rows:
            total += ns / runs
            print(f"    {name:12} calls/run {calls / runs:9.0f} mean_ns {ns / calls:8.0f} "
                  f"ms/run {ns / runs / 1e6:7.1f}")
        print(f"    {'all':12} ms/run {total / 1e6:7.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
