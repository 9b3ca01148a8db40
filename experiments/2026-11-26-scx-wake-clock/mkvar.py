"""Build one scx_idlesteal loader variant for a side-by-side boot.

    python3 results/scx/wake-clock/mkvar.py NAME DIFF|@COMMIT|-

NAME: the variant (build/wd/scx_idlesteal.NAME); DIFF: a patch against
tools/scx_idlesteal/ (-p1, a/scx_idlesteal.bpf.c or
a/tools/scx_idlesteal/...: both are tried), @COMMIT: that commit's
tools/scx_idlesteal (Rust user space: 0d33e08 or later), -: the work tree.
The copy is touched before cargo runs: cargo judges freshness by mtime,
and with the shared target directory a copy with old mtimes is taken as
built and the last variant's binary handed back (exp6-exp8 of README.md).
Variants build in their own target directory (build/wd/target, seeded
from the harness's cargo cache): cargo keeps one fingerprint for a
package name and version whatever its path, so a variant built in the
harness's directory can be what the harness's next build hands back.
"""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from idlesteal.scx import peers  # noqa: E402


def main(name: str, what: str) -> None:
    if not name.isidentifier():
        sys.exit(f"mkvar: bad name {name!r}")
    src = Path(f"/tmp/var-{name}")
    shutil.rmtree(src, ignore_errors=True)
    if what.startswith("@"):
        src.mkdir()
        subprocess.run(f"git -C {ROOT} archive {what[1:]} tools/scx_idlesteal"
                       f" | tar -x -C {src} --strip-components=2", shell=True, check=True)
    else:
        shutil.copytree(ROOT / "tools" / "scx_idlesteal", src)
        if what != "-":
            diff = str(Path(what).resolve())
            if subprocess.run(["patch", "-p1", "-d", str(src), "-i", diff]).returncode:
                subprocess.run(["patch", "-p3", "-d", str(src), "-i", diff], check=True)
    subprocess.run(["find", str(src), "-exec", "touch", "{}", "+"], check=True)
    exe, env = peers.toolchain()
    env["BPF_CLANG"] = str(peers.CLANG_DIR / "clang")
    target = ROOT / "build" / "wd" / "target"   # not the harness's: see above
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-a", str(peers.target_dir()), str(target)], check=True)
    subprocess.run([str(exe), "build", "--release", "--locked", "--manifest-path",
                    str(src / "Cargo.toml"), "--target-dir", str(target)], env=env, check=True)
    out = ROOT / "build" / "wd" / f"scx_idlesteal.{name}"
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(target / "release" / "scx_idlesteal", out)
    print(f"built {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
