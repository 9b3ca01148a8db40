"""The documents whose tables are generated: find each marked block, write
the table report/tables.py builds in its place, or say which are stale.

README.md and results/README.md (Markdown) mark a table with
    <!-- table NAME: written by `python3 -m idlesteal tables`, not by hand -->
    ...
    <!-- end table NAME -->
and hold it in a fenced block (bullets as they are); patches/cover-letter.txt (plain text, sent
as mail) with the lines "[table NAME]" and "[end table NAME]", which the
export leaves out of 0000-cover-letter.patch, the table indented by two
spaces.  Everything outside the markers is the author's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..kernel.tree import COVER_TABLE_MARK
from . import findings, latency, tables
from .tables import Table, TableError

TABLES: dict[str, Callable[[Path], Table]] = {
    "pull-paths": tables.paths_table,
    "kick": tables.kick_table,
    "offcost": tables.offcost_table,
    "hot": tables.hot_table,
    "lockstat": tables.lockstat_table,
    "suite": tables.suite_table,
    "scx": tables.scx_table,
    "device": tables.device_table,
    "why": tables.why_table,
    "delay-dequeue": tables.dd_table,
    "latency": latency.latency_table,
    "findings": findings.findings,
    "headline": findings.headline,
}




def build(name: str, root: Path) -> Table:
    try:
        fn = TABLES[name]
    except KeyError:
        raise TableError(f"no table named {name!r} (known: {', '.join(TABLES)})") from None
    return fn(root)


DOCUMENTS = ("README.md", "results/README.md", "patches/cover-letter.txt")

_MD_BEGIN = re.compile(r"^<!-- table ([\w-]+):.*-->$")
_MD_END = "<!-- end table {} -->"
_TXT_BEGIN = re.compile(r"^\[table ([\w-]+)\]$")
_TXT_END = "[end table {}]"
assert COVER_TABLE_MARK.match("[table x]") and COVER_TABLE_MARK.match(_TXT_END.format("x"))


@dataclass
class Stale:
    document: str
    table: str


def _body(name: str, markdown: bool, root: Path) -> list[str]:
    table = build(name, root)
    text = table.text().rstrip("\n").split("\n")
    if markdown:
        return ["```", *text, "```"] if table.fenced else text
    return [f"  {line}" if line else "" for line in text]


def fill(text: str, markdown: bool, root: Path, where: str = "") -> tuple[str, list[str]]:
    """(the text with every marked table written anew, the names of the
    tables whose text changed).  An unknown table or a block that is not
    closed raises TableError naming the line."""
    begin, end = (_MD_BEGIN, _MD_END) if markdown else (_TXT_BEGIN, _TXT_END)
    lines = text.split("\n")
    out: list[str] = []
    changed: list[str] = []
    i = 0
    while i < len(lines):
        m = begin.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        name, close = m.group(1), end.format(m.group(1))
        try:
            j = lines.index(close, i)
        except ValueError:
            raise TableError(f"{where}:{i}: table {name} has no '{close}' line") from None
        body = _body(name, markdown, root)
        if lines[i:j] != body:
            changed.append(name)
        out += body
        out.append(close)
        i = j + 1
    return "\n".join(out), changed


def documents(root: Path) -> list[Path]:
    return [root / d for d in DOCUMENTS if (root / d).exists()]


def stale(root: Path) -> list[Stale]:
    """The marked tables whose committed text differs from their data's."""
    out = []
    for path in documents(root):
        _, changed = fill(path.read_text(), path.suffix == ".md", root,
                          str(path.relative_to(root)))
        out += [Stale(str(path.relative_to(root)), n) for n in changed]
    return out


def write(root: Path) -> list[Stale]:
    """Write every marked table; returns those that changed."""
    out = []
    for path in documents(root):
        rel = str(path.relative_to(root))
        text, changed = fill(path.read_text(), path.suffix == ".md", root, rel)
        if changed:
            path.write_text(text)
        out += [Stale(rel, n) for n in changed]
    return out


def marked(root: Path) -> dict[str, list[str]]:
    """Each document's marked tables, in order."""
    out: dict[str, list[str]] = {}
    for path in documents(root):
        begin = _MD_BEGIN if path.suffix == ".md" else _TXT_BEGIN
        out[str(path.relative_to(root))] = [m.group(1) for line in path.read_text().split("\n")
                                            if (m := begin.match(line))]
    return out
