"""The harness package's shape (docs/architecture.md): stage packages that
import one way, no two modules importing each other, small modules.

The imports are read with ast from every module under idlesteal/, the
ones inside functions and under `if TYPE_CHECKING:` included: an
annotation-only import still ties two modules together for a reader.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "idlesteal"
ARCH = PKG.parent / "docs" / "architecture.md"

# Lowest first.  A module may import its own stage and the ones before it.
# "foundation" is the top-level util, paths and bases; "top" is the CLI.
ORDER = ("foundation", "kernel", "guest", "measure", "scx", "report", "runs", "commands", "top")
FOUNDATION = {"util", "paths", "bases"}
TOP = {"cli", "__main__"}
MAX_LINES = 600
MAX_TOP_MODULES = 6
MAX_CLI_FUNCTION = 80


def module_name(root: Path, path: Path) -> str:
    """idlesteal/runs/bench.py -> "runs.bench"; a package's __init__.py is
    the package ("runs"); idlesteal/__init__.py is ""."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    return {module_name(root, p): p for p in sorted(root.rglob("*.py"))}


def _resolve(known: dict[str, Path], base: str, name: str | None) -> str:
    """`from BASE import NAME`: the module NAME when BASE.NAME is one, else BASE."""
    if name is not None:
        full = f"{base}.{name}" if base else name
        if full in known:
            return full
    return base


def imports(root: Path) -> dict[str, set[str]]:
    """Module -> the harness modules it imports (anywhere in its text)."""
    known = modules(root)
    out: dict[str, set[str]] = {}
    for mod, path in known.items():
        is_pkg = path.name == "__init__.py"
        here = mod.split(".") if mod else []
        package = here if is_pkg else here[:-1]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    if node.level - 1 > len(package):
                        raise AssertionError(f"{path}: import above the package")
                    base = package[:len(package) - (node.level - 1)]
                    base_mod = ".".join(base + (node.module.split(".") if node.module else []))
                elif node.module and node.module.split(".")[0] == root.name:
                    base_mod = ".".join(node.module.split(".")[1:])
                else:
                    continue
                for alias in node.names:
                    deps.add(_resolve(known, base_mod, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == root.name:
                        deps.add(".".join(alias.name.split(".")[1:]))
        deps.discard(mod)
        deps.discard("")           # the package root holds nothing
        out[mod] = {d for d in deps if d in known}
    return out


def stage(mod: str) -> str:
    first = mod.split(".")[0]
    if first in FOUNDATION:
        return "foundation"
    if first in TOP:
        return "top"
    return first


def violations(root: Path) -> list[str]:
    """Upward imports and import cycles under `root`, as sentences."""
    graph = imports(root)
    bad = []
    for mod, deps in sorted(graph.items()):
        if not mod:
            continue
        s = stage(mod)
        if s not in ORDER:
            bad.append(f"{mod}: stage {s!r} is not one of {', '.join(ORDER)}")
            continue
        for d in sorted(deps):
            t = stage(d)
            if t in ORDER and ORDER.index(t) > ORDER.index(s):
                bad.append(f"{mod} ({s}) imports {d} ({t}), a later stage")
    # cycles: Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                bad.append("import cycle: " + " -> ".join(sorted(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return bad


def test_stages_import_one_way_and_no_module_imports_another_back():
    assert violations(PKG) == []


def test_the_checker_finds_an_upward_import_and_a_cycle(tmp_path):
    root = tmp_path / "idlesteal"
    for d in ("kernel", "runs"):
        (root / d).mkdir(parents=True)
        (root / d / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "util.py").write_text("")
    (root / "kernel" / "build.py").write_text("from ..runs import bench\n")
    (root / "runs" / "bench.py").write_text(
        "from typing import TYPE_CHECKING\nfrom .. import util\n"
        "if TYPE_CHECKING:\n    from . import report\n")
    (root / "runs" / "report.py").write_text("def f():\n    from .bench import x\n")
    bad = violations(root)
    assert "kernel.build (kernel) imports runs.bench (runs), a later stage" in bad
    assert "import cycle: runs.bench -> runs.report" in bad
    assert "import cycle: kernel.build -> runs.bench" not in bad


def test_the_top_holds_few_modules_and_every_package_is_a_stage():
    top = sorted(p.name for p in PKG.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top
    packages = sorted(p.name for p in PKG.iterdir() if (p / "__init__.py").is_file())
    assert set(packages) <= set(ORDER), packages


def test_no_module_is_over_600_lines():
    long = {str(p.relative_to(PKG)): n for p in PKG.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_no_cli_function_is_over_80_lines():
    tree = ast.parse((PKG / "cli.py").read_text())
    long = {n.name: (n.end_lineno or n.lineno) - n.lineno + 1 for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (n.end_lineno or n.lineno) - n.lineno + 1 > MAX_CLI_FUNCTION}
    assert long == {}


def test_architecture_doc_lists_the_stages_in_the_order_the_test_enforces():
    text = ARCH.read_text()
    m = re.search(r"^Order: (.+)$", text, re.M)
    assert m, "docs/architecture.md: no 'Order: a -> b -> ...' line"
    assert tuple(s.strip(" `") for s in m.group(1).split("->")) == ORDER
    packages = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    for name in packages:
        assert re.search(rf"^\| `{name}/` \|", text, re.M), f"{name}/ missing from the table"
    for name in re.findall(r"^\| `(\w+)/` \|", text, re.M):
        assert name in packages, f"docs/architecture.md lists {name}/, which is not a package"


@pytest.mark.parametrize("mod", sorted(FOUNDATION | TOP))
def test_the_top_level_modules_named_here_exist(mod):
    assert (PKG / f"{mod}.py").is_file()
