"""Per boot: the LLC's newidle passes (MC lb_count), the SMT passes, their
ratio, misfit imbalances, and (where sampled) the hogs on a big CPU, for
NO_STEAL and STEAL.  Run from the repository root of its commit:
/usr/bin/python3 experiments/2026-12-03-misfit-pass-count/count.py"""
import gzip
import re
import sys
from pathlib import Path

sys.path.insert(0, ".")
from idlesteal.runs import misfit  # noqa: E402

HERE = Path(__file__).parent
for p in sorted(HERE.glob("*.log.gz")):
    secs: dict[str, str] = {}
    cur = None
    for line in gzip.open(p, "rt", errors="replace"):
        m = re.match(r"@@SECTION (\S+)@@", line)
        if m:
            cur = m.group(1)
            secs[cur] = ""
        elif cur:
            secs[cur] += line
    t = misfit.totals(secs, 3, (0, 1, 2, 3))
    per = {f: x["lb_count"] / x["smt_lb_count"] for f, x in t.items()}
    print(f"{p.name[:-7]:8} passes {t['NO_STEAL']['lb_count']:5} {t['STEAL']['lb_count']:5} "
          f"({t['STEAL']['lb_count'] / t['NO_STEAL']['lb_count']:.2f}x)  per SMT pass "
          f"{per['NO_STEAL']:.2f} {per['STEAL']:.2f} ({per['STEAL'] / per['NO_STEAL']:.2f}x)  "
          f"misfit {t['NO_STEAL']['lb_imbalance_misfit']:3} {t['STEAL']['lb_imbalance_misfit']:3}  "
          f"hogs on big {t['NO_STEAL']['hog_on_big']}/{t['NO_STEAL']['hog_samples']} "
          f"{t['STEAL']['hog_on_big']}/{t['STEAL']['hog_samples']}")
