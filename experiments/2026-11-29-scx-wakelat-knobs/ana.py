"""Requests and latency per configuration of knobs.sh's output, each
against EEVDF of the same boot: mean ratio with its 95% interval and
Welch's p (the harness's idlesteal.measure.stats); the loader's steals,
failed searches and preemptions per run.

    python3 results/scx/wakelat-knobs/ana.py results/scx/wakelat-knobs/output.txt
"""
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from idlesteal.measure import stats  # noqa: E402


def main(path: str) -> None:
    runs: dict[str, list[dict]] = defaultdict(list)
    final: dict[str, list[dict[str, int]]] = defaultdict(list)
    for line in open(path):
        m = re.match(r"RUN (\S+(?: [^\]]*\])?) \d+ RESULT (\{.*\})", line)
        if m:
            runs[m.group(1)].append(json.loads(m.group(2)))
            continue
        m = re.match(r"FINAL (\S+(?: [^\]]*\])?) \d+ final (.*?) steal=", line)
        if m:
            final[m.group(1)].append({k: int(v) for k, v in
                                      (w.split("=") for w in m.group(2).split())})
    base = [r["rps"] for r in runs["eevdf"]]
    print(f"{'config':14} {'n':>2} {'rps':>8} {'/ eevdf [95% CI]':>24} {'p':>6}"
          f" {'p50':>5} {'p99':>5} {'steals':>7} {'failed':>7} {'preempt':>7}")
    for c, rs in runs.items():
        rps = [r["rps"] for r in rs]
        p50 = statistics.median(r["lat_p50_us"] for r in rs)
        p99 = statistics.median(r["lat_p99_us"] for r in rs)
        f = final.get(c, [])
        avg = {k: statistics.mean(x.get(k, 0) for x in f) if f else 0
               for k in ("steals", "failed", "preempt")}
        rat = stats.ratio(rps, base).fmt() if c != "eevdf" else "1"
        p = stats.welch(rps, base).p if c != "eevdf" else 1.0
        print(f"{c:14} {len(rs):2} {statistics.mean(rps):8.0f} {rat:>24} {p:6.3f}"
              f" {p50:5.0f} {p99:5.0f} {avg['steals']:7.0f} {avg['failed']:7.0f}"
              f" {avg['preempt']:7.0f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
