"""The table of results/README.md's `make bench-scx` entries, from the
side-by-side text files: per cell, each scheduler's ratio to the first
(the baseline), its 95% interval, and Welch's p in bold where p < 0.05.

    python3 results/scx/cells.py results/scx/2x2x2.txt results/scx/1x1x2.txt ...
"""
import re
import sys
from pathlib import Path

HEAD = re.compile(r"^(\S+) (\S+) (\d+): (\w+)")
ROW = re.compile(r"^  (\S+)\s+\S+ ± \S+\s+(\d+\.\d+) \[(-?\d+\.\d+), (-?\d+\.\d+)\]\s+(\d+\.\d+)")
BASE = re.compile(r"^  (\S+)\s+\S+ ± \S+\s+1\s")


def cells(path: Path) -> list[tuple[str, dict[str, str]]]:
    preset = path.stem
    out: list[tuple[str, dict[str, str]]] = []
    cur: dict[str, str] | None = None
    for line in path.read_text().splitlines():
        m = HEAD.match(line)
        if m:
            unit = "rps" if m.group(4) == "rps" else "time"
            cur = {}
            out.append((f"{preset} {m.group(1)} {m.group(3)} ({unit})", cur))
            continue
        if cur is None:
            continue
        r = ROW.match(line)
        if r:
            name, ratio, lo, hi, p = r.groups()
            cell = f"{float(ratio):.2f} [{float(lo):.2f}, {float(hi):.2f}]"
            if float(p) < 0.05:
                cell = f"**{cell}** p {float(p):.3f}"
            cur[name] = cell
        elif BASE.match(line):
            cur.setdefault("_base", BASE.match(line).group(1))  # type: ignore[union-attr]
    return out


def main(paths: list[str]) -> None:
    rows = [c for p in paths for c in cells(Path(p))]
    names: list[str] = []
    for _, row in rows:
        for n in row:
            if n != "_base" and n not in names:
                names.append(n)
    print("| cell | " + " | ".join(names) + " |")
    print("| --- |" + " --- |" * len(names))
    for cell, row in rows:
        print(f"| {cell} | " + " | ".join(row.get(n, "left out") for n in names) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
