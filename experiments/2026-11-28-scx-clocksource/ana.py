"""scx_idlesteal / EEVDF per workload from cmp.sh's "RUN" lines: the mean
ratio with its 95% interval and Welch's p (idlesteal.measure.stats).

    python3 results/scx/clocksource/ana.py output-hpet.txt output-tsc.txt
"""
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from idlesteal.measure import stats  # noqa: E402

for path in sys.argv[1:]:
    text = Path(path).read_text(errors="replace")
    vals: dict[tuple[str, str], list[float]] = defaultdict(list)
    for m in re.finditer(r"^RUN (\S+) (\S+) \d+ ([0-9.]+)", text, re.M):
        vals[(m.group(2), m.group(1))].append(float(m.group(3)))
    clock = re.findall(r"^CLOCKSOURCE (\S+)", text, re.M)
    print(f"{path}: clocksource {' -> '.join(clock)}")
    for w in sorted({k[0] for k in vals}):
        a, b = vals[(w, "eevdf")], vals[(w, "scx_idlesteal")]
        if len(a) < 2 or len(b) < 2:
            print(f"  {w:6} too few runs: {len(a)} / {len(b)}")
            continue
        print(f"  {w:6} eevdf {stats.mean(a):8.3f}  scx_idlesteal {stats.mean(b):8.3f}  "
              f"ratio {stats.ratio(b, a).fmt()}  p {stats.welch(b, a).p:.3f}  (n {len(a)}/{len(b)})")
