"""Paired per-round ratios of a side-by-side boot's "RES SCHED WORKLOAD ROUND
SECONDS" lines: geometric mean, bootstrap 95% interval (10,000 resamples,
seed 1), Wilcoxon signed-rank p.

    /usr/bin/python3 results/scx/wake-clock/ana.py OUTPUT A B [A B ...]
"""
import math
import random
import sys
from collections import defaultdict

from scipy.stats import wilcoxon


def gmean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main(path: str, pairs: list[str]) -> None:
    res: dict[str, dict[str, float]] = defaultdict(dict)
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 5 and w[0] == "RES":
                res[w[1]][w[3]] = float(w[4])
    for a, b in zip(pairs[::2], pairs[1::2]):
        rounds = sorted(set(res[a]) & set(res[b]))
        if len(rounds) < 2:
            print(f"{a}/{b}: fewer than 2 paired rounds")
            continue
        r = [res[a][k] / res[b][k] for k in rounds]
        rng = random.Random(1)
        boots = sorted(gmean([rng.choice(r) for _ in r]) for _ in range(10000))
        p = wilcoxon([math.log(x) for x in r]).pvalue
        print(f"{a}/{b}: {gmean(r):.3f} [{boots[250]:.3f}, {boots[9750]:.3f}] p {p:.3f} n={len(r)}")


if __name__ == "__main__":
    if len(sys.argv) < 4 or len(sys.argv) % 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
