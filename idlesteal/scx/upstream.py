"""scx_idlesteal as a patch against the sched-ext/scx tree.

The crate goes to scheds/rust/scx_idlesteal with the tree's own
dependencies (path dependencies on rust/scx_utils, scx_stats and
scx_cargo at the tree's version, the libbpf-rs its scx_utils pins), is
listed where the tree lists its Rust schedulers (the workspace members,
scheds/rust/README.md, CARGO_BUILD.md, services/scx), and is committed
on a branch of its own and written out with `git format-patch`
(export()).  check() runs, on that tree, what the scx CI runs for one
Rust scheduler: rustfmt, clippy with warnings as errors, and a build
from the tree's Cargo.lock.

The edits are plain text and refuse, with the file named, a tree they do
not recognize, so a change of layout in the scx tree stops the export
instead of producing a patch that does not apply.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from .. import paths
from ..util import HarnessError, log, output, run
from . import own, peers

NAME = "scx_idlesteal"
DEST = Path("scheds/rust") / NAME
BRANCH = NAME
# What goes into the tree: the crate's sources less its lock file (the
# workspace has one) and its manifest (rewritten by manifest()).
FILES = tuple(f for f in own.SOURCES if f not in ("Cargo.toml", "Cargo.lock")) + ("README.md",)
# The scx crates a scheduler depends on, and where they are in the tree.
PATH_DEPS = {"scx_utils": "rust/scx_utils", "scx_stats": "rust/scx_stats",
             "scx_stats_derive": "rust/scx_stats/scx_stats_derive",
             "scx_cargo": "rust/scx_cargo"}
SUBJECT = f"{NAME}: idle CPUs steal waiting tasks from overloaded CPUs of their LLC"
BODY = """\
scx_idlesteal keeps one vtime-ordered queue per CPU and, per LLC, a
cache-sparse mask of the CPUs that have a task waiting.  A CPU about to
go idle walks that mask (SMT siblings first, then the rest of the LLC
from the position after its own) and takes the waiting task from an
overloaded CPU; a task queued behind another gets an idle CPU of its
LLC claimed and kicked to take it.  It is the sched_ext form of a
task-stealing series for the fair class's newidle balance.

Against EEVDF and scx_p2dq, scx_bpfland, scx_cosmos, scx_beerland and
scx_lavd it was measured in QEMU guests on the wasted CPU time of an
LLC (a CPU idle while a task allowed on it waits in the same LLC) and
on elapsed time; the README says where, and what is not measured.
"""


def series_author(patches: Path | None = None) -> str:
    """The author of the kernel series (the From: of patches/0001-*.patch),
    who signs the scheduler's patch too."""
    d = patches or paths.REPO / "patches"
    first = sorted(d.glob("0001-*.patch"))
    for line in first[0].read_text().splitlines() if first else []:
        if line.startswith("From: "):
            return line[len("From: "):].strip()
    raise HarnessError(f"no From: line in {d}/0001-*.patch to take the author from")


def tree_version(tree: Path) -> str:
    """The version the tree's crates carry (rust/scx_utils/Cargo.toml)."""
    return str(_toml(tree / PATH_DEPS["scx_utils"] / "Cargo.toml")["package"]["version"])


def tree_pin(tree: Path, crate: str) -> str:
    """The requirement rust/scx_utils/Cargo.toml gives `crate` (libbpf-rs)."""
    path = tree / PATH_DEPS["scx_utils"] / "Cargo.toml"
    req = _toml(path).get("dependencies", {}).get(crate)
    if isinstance(req, dict):
        req = req.get("version")
    if not isinstance(req, str):
        raise HarnessError(f"{path}: no version of {crate} in [dependencies]")
    return req


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise HarnessError(f"{path} not found: is {path.parents[2]} a sched-ext/scx tree?") \
            from None
    except tomllib.TOMLDecodeError as e:
        raise HarnessError(f"{path}: {e}") from None


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    raise HarnessError(f"cannot write {v!r} into a manifest")


def _dep(name: str, req: Any, version: str, pins: dict[str, str]) -> str:
    spec = dict(req) if isinstance(req, dict) else {"version": req}
    if name in PATH_DEPS:
        spec = {"path": f"../../../{PATH_DEPS[name]}", "version": version,
                **{k: v for k, v in spec.items() if k not in ("version", "path")}}
    elif name in pins:
        spec["version"] = pins[name]
    if list(spec) == ["version"]:
        return f"{name} = {_value(spec['version'])}"
    return f"{name} = {_value(spec)}"


def manifest(text: str, version: str, pins: dict[str, str]) -> str:
    """The crate's Cargo.toml as a member of the scx workspace: the tree's
    version, path dependencies on its scx crates, `pins` (crate ->
    requirement) for the crates the tree pins, clippy in its CI, and no
    `publish = false` (the tree publishes its schedulers)."""
    try:
        m = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise HarnessError(f"{NAME}'s Cargo.toml: {e}") from None
    pkg = dict(m["package"])
    pkg.pop("publish", None)
    pkg["version"] = version
    out = ["[package]"] + [f"{k} = {_value(v)}" for k, v in pkg.items()]
    out += ["", "[package.metadata.scx]", "ci.use_clippy = true"]
    for table in ("dependencies", "dev-dependencies", "build-dependencies"):
        deps = m.get(table)
        if deps:
            out += ["", f"[{table}]"] + [_dep(k, v, version, pins) for k, v in deps.items()]
    missing = [d for d in ("scx_utils", "scx_cargo") if d not in
               {**m.get("dependencies", {}), **m.get("build-dependencies", {})}]
    if missing:
        raise HarnessError(f"{NAME}'s Cargo.toml does not depend on {', '.join(missing)}")
    return "\n".join(out) + "\n"


def readme(text: str) -> str:
    """The README with its links into this repository (../../path) turned
    into plain names: those files are not in the scx tree."""
    return re.sub(r"\[([^\]]+)\]\(\.\./\.\./[^)]+\)", r"\1 (in the idlesteal repository)", text)


def _insert_sorted(path: Path, lines: list[str], pattern: str, new: str) -> list[str]:
    """`lines` with `new` after the last line matching `pattern` that sorts
    before it (or before the first match when none does)."""
    hits = [i for i, x in enumerate(lines) if re.fullmatch(pattern, x)]
    if not hits:
        raise HarnessError(f"{path}: no line like {pattern!r}; the tree's layout changed")
    if new in lines:
        raise HarnessError(f"{path} already lists {NAME}")
    before = [i for i in hits if lines[i] < new]
    at = before[-1] + 1 if before else hits[0]
    return lines[:at] + [new] + lines[at:]


def _edit(path: Path, pattern: str, new: str) -> None:
    lines = path.read_text().split("\n")
    path.write_text("\n".join(_insert_sorted(path, lines, pattern, new)))


def add(tree: Path, src: Path = own.OWN_DIR) -> list[Path]:
    """Put the crate into `tree` and list it; the paths written, relative
    to the tree."""
    dest = tree / DEST
    if dest.exists():
        raise HarnessError(f"{dest} exists: the tree already has {NAME}")
    version = tree_version(tree)
    pins = {"libbpf-rs": tree_pin(tree, "libbpf-rs")}
    for f in FILES:
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        text = (src / f).read_text()
        (dest / f).write_text(readme(text) if f == "README.md" else text)
    (dest / "Cargo.toml").write_text(manifest((src / "Cargo.toml").read_text(), version, pins))
    (dest / "LICENSE").symlink_to("../../../LICENSE")
    _edit(tree / "Cargo.toml", r'    "scheds/rust/scx_\w+",', f'    "{DEST}",')
    _edit(tree / "scheds/rust/README.md", r"- \[scx_\w+\]\(scx_\w+/README\.md\)",
          f"- [{NAME}]({NAME}/README.md)")
    row = f"| `{NAME}` | `cargo build --release -p {NAME}` |"
    _edit(tree / "CARGO_BUILD.md", r"\| `scx_\w+` *\| `cargo build --release -p scx_\w+` \|",
          row)
    services = tree / "services/scx"
    lines = services.read_text().split("\n")
    head = "# List of scx_schedulers: "
    if not lines or not lines[0].startswith(head):
        raise HarnessError(f"{services}: its first line is not {head!r}...")
    names = lines[0][len(head):].split()
    if NAME not in names:
        lines[0] = head + " ".join(sorted(names + [NAME]))
    services.write_text("\n".join(lines))
    return [DEST, Path("Cargo.toml"), Path("Cargo.lock"), Path("scheds/rust/README.md"),
            Path("CARGO_BUILD.md"), Path("services/scx")]


def export(tree: Path, outdir: Path, author: str) -> Path:
    """Add the crate to a clean scx tree on a new branch, update the
    tree's Cargo.lock, commit as `author` and write the patch to outdir
    (its base-commit: line names the tree's commit)."""
    if not (tree / ".git").exists():
        raise HarnessError(f"{tree} is not a git work tree (clone sched-ext/scx there)")
    if output(["git", "-C", str(tree), "status", "--porcelain"]).strip():
        raise HarnessError(f"{tree} has uncommitted changes; export needs a clean tree")
    base = output(["git", "-C", str(tree), "rev-parse", "HEAD"]).strip()
    run(["git", "-C", str(tree), "switch", "-q", "-c", BRANCH])
    paths = add(tree)
    exe, env = peers.toolchain()
    log(f"{tree}: resolving the workspace with {NAME} in it (Cargo.lock)")
    run([str(exe), "metadata", "--format-version", "1", "--quiet"], cwd=tree, env=env,
        capture=True)
    run(["git", "-C", str(tree), "add", "--"] + [str(p) for p in paths])
    # write-tree --missing-ok: a snapshot without its largest blobs (a
    # partial clone) commits as well as a full clone does
    tree_id = output(["git", "-C", str(tree), "write-tree", "--missing-ok"]).strip()
    name, _, email = author.partition(" <")
    ident = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email.rstrip(">"),
             "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email.rstrip(">")}
    commit = run(["git", "-C", str(tree), "commit-tree", tree_id, "-p", base, "-F", "-"],
                 env={**env, **ident}, capture=True, input=f"{SUBJECT}\n\n{BODY}")
    run(["git", "-C", str(tree), "update-ref", f"refs/heads/{BRANCH}", commit.stdout.strip()])
    outdir.mkdir(parents=True, exist_ok=True)
    for old in outdir.glob("0*.patch"):
        old.unlink()
    name_out = output(["git", "-C", str(tree), "format-patch", "-1", "--no-signature",
                       f"--base={base}", "-o", str(outdir.resolve()), BRANCH]).strip()
    return Path(name_out)


def check(tree: Path) -> list[str]:
    """What the scx CI runs for one Rust scheduler, on `tree` with the
    crate in it; one line per step passed (a failure raises)."""
    exe, env = peers.toolchain()
    steps = [("rustfmt", ["fmt", "--check", "-p", NAME]),
             ("clippy -Dwarnings", ["clippy", "--profile", "ci", "--no-deps", "--locked",
                                    "-p", NAME, "--", "-Dwarnings"]),
             ("build --locked", ["build", "--profile", "ci", "--locked", "-p", NAME])]
    done = []
    for what, args in steps:
        log(f"{tree}: cargo {' '.join(args)}")
        run([str(exe)] + args, cwd=tree, env=env, capture=True)
        done.append(f"{what}: passed")
    return done
