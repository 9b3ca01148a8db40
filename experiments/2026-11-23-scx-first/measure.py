"""First side-by-side look (not the harness mode asked for later):
hackbench -g 4 -l 100 on 2x2x2 under EEVDF (NO_STEAL, STEAL), scx_idlesteal
(stealing on, off) and scx_simple, one boot, 6 rounds, order rotated.

    PYTHONPATH=. python3 results/experiments/scx-first/measure.py

Needs the scx kernel and schedulers (`python3 -m idlesteal scx`).  Writes
result.txt and output.log next to this file."""
from __future__ import annotations

import sys
from pathlib import Path

from idlesteal.kernel import build
from idlesteal.guest import image, topology, vm
from idlesteal.scx import own as scx
from idlesteal.measure import stats

HERE = Path(__file__).resolve().parent
ORDER = ["eevdf", "eevdf+steal", "scx_idlesteal", "scx_idlesteal-off", "scx_simple"]


def main() -> int:
    bins = {n: scx.binary(n) for n in scx.SCHEDULERS}
    initrd = image.build_base(files=scx.image_files(bins))
    res = vm.run_script((HERE / "run.sh").read_text(), topology.get("2x2x2"),
                        build.bzimage(scx.VARIANT), initrd, timeout=1200, name="scx-first")
    rows = [l.split() for l in res.output.text.splitlines() if l.startswith("R ")]
    (HERE / "output.log").write_text("\n".join(" ".join(r) for r in rows) + "\n")
    times: dict[str, list[float]] = {k: [] for k in ORDER}
    for _, _, name, t in rows:
        times[name].append(float(t))
    base = times["eevdf"]
    lines = ["scheduler            n   mean s   95% CI        ratio to EEVDF NO_STEAL [95% CI]"]
    for name in ORDER:
        s = stats.summarize(times[name])
        r = stats.ratio(times[name], base)
        lines.append(f"{name:18s} {len(times[name]):3d}  {s.mean:7.3f}  ±{s.ci95:6.3f}     {r.fmt()}")
    out = "\n".join(lines) + "\n"
    (HERE / "result.txt").write_text(out)
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
