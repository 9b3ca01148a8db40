import gzip
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from idlesteal.guest import cpio, image
from idlesteal.measure import workload
from idlesteal.util import HarnessError


def test_cpio_roundtrip_names_and_layout():
    data = cpio.archive([cpio.directory("bin"), cpio.file("bin/x", b"hello", True),
                         cpio.symlink("bin/sh", "/bin/busybox"), cpio.chardev("dev/console", 5, 1)])
    assert cpio.read_names(data) == ["bin", "bin/x", "bin/sh", "dev/console"]
    assert len(data) % 4 == 0
    assert data.endswith(b"\0") and b"TRAILER!!!" in data


def test_run_archive_is_deterministic_gzip():
    a = image.run_archive("echo hi\n")
    assert a == image.run_archive("echo hi\n")
    assert cpio.read_names(gzip.decompress(a)) == ["run.sh"]


def test_run_archive_carries_the_hang_report_time_for_init():
    a = gzip.decompress(image.run_archive("echo hi\n", 570))
    assert cpio.read_names(a) == ["run.sh", "etc", "etc/idlesteal", image.HANG_REPORT_FILE]
    assert b"570.0\n" in a
    # init.sh reads that file, from the image's root
    assert f"/{image.HANG_REPORT_FILE}" in image.INIT and "rtrun 1 " in image.INIT
    for bad in (0, -5):
        with pytest.raises(HarnessError, match="above 0"):
            image.run_archive("echo hi\n", bad)


def test_parse_output_sections_and_rc():
    raw = ("garbage\r\n@@IDLESTEAL BEGIN@@\r\npre\r\n@@SECTION a@@\r\nline1\r\nline2\r\n"
           "@@SECTION b.c@@\r\n@@SECTION d@@\r\nx\r\n@@IDLESTEAL END rc=3@@\r\n")
    out = image.parse_output(raw)
    assert out is not None and out.rc == 3
    assert out.sections == {"": "pre\n", "a": "line1\nline2\n", "b.c": "", "d": "x\n"}


def test_parse_output_missing_markers():
    assert image.parse_output("no markers") is None
    assert image.parse_output("@@IDLESTEAL BEGIN@@\nhalf way") is None


def test_init_and_helpers_define_protocol():
    assert "@@IDLESTEAL BEGIN@@" in image.INIT
    assert "@@IDLESTEAL END rc=$rc@@" in image.INIT
    assert "/dev/ttyS1" in image.INIT
    assert 'section() { echo "@@SECTION $1@@"; }' in image.HELPERS


def test_shared_libs_of_hackbench():
    libs = image.shared_libs(image.HACKBENCH)
    assert any("libc.so" in l for l in libs)
    assert any("ld-linux" in l for l in libs)


def test_compile_workloads_empty_dir(tmp_path):
    assert image.compile_workloads(tmp_path, tmp_path / "out") == []


# --- host files in the image (--file HOST[:GUEST]) ---

TINY_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    int n = 0;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "-n"))
            n = atoi(argv[i + 1]);
    if (n < 1) {
        fprintf(stderr, "usage: tinybench -n LEVEL\n");
        return 2;
    }
    printf("tinybench: %d workers\nlatency p99: %.1f us\n", n, 100.0 + 23.4 * n);
    return 0;
}
"""


@pytest.fixture
def tinybench(tmp_path: Path) -> Path:
    """A program the repository does not ship, dynamically linked."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    src = tmp_path / "tinybench.c"
    src.write_text(TINY_C)
    exe = tmp_path / "bin" / "tinybench"
    exe.parent.mkdir()
    subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True)
    return exe


@pytest.fixture
def image_build(tmp_path: Path, monkeypatch) -> Path:
    """build_base() into tmp_path, without compiling workloads/*.c."""
    for tool in (image.BUSYBOX, image.HACKBENCH):
        if not Path(tool).exists():
            pytest.skip(f"{tool} is missing (make deps)")
    monkeypatch.setenv("IDLESTEAL_BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(image, "compile_workloads", lambda *a, **kw: [])
    return tmp_path / "build" / "image"


def read_image(path: Path) -> dict[str, cpio.Entry]:
    return {e.name: e for e in cpio.read_entries(gzip.decompress(path.read_bytes()))}


def test_own_program_runs_as_a_custom_workload(tinybench: Path):
    w = workload.custom("tinybench", "tinybench -n {level}", r"latency p99:\s*([0-9.]+) us",
                        False, "us")
    env = {**os.environ, "PATH": f"{tinybench.parent}:{os.environ.get('PATH', '')}"}
    for level in (1, 3):
        out = subprocess.run(w.argv(level, w.default_size), env=env, capture_output=True,
                             text=True, check=True).stdout
        assert w.parse(out) == {"value": pytest.approx(100.0 + 23.4 * level)}
    with pytest.raises(workload.WorkloadParseError):
        w.parse(subprocess.run([str(tinybench)], capture_output=True, text=True).stderr)


def test_own_program_and_its_libc_go_into_the_image(tinybench: Path, image_build: Path):
    libs = image.shared_libs(str(tinybench))
    assert any("libc.so" in lib for lib in libs)
    alone = {e.name for e in image.file_entries([str(tinybench)])}
    assert "usr/local/bin/tinybench" in alone
    assert {lib.lstrip("/") for lib in libs} <= alone     # resolved for the file itself
    path = image.build_base(files=[str(tinybench)])
    assert path.parent == image_build and path.name.startswith("base-files-")
    entries = read_image(path)
    exe = entries["usr/local/bin/tinybench"]
    assert exe.data == tinybench.read_bytes() and exe.mode == stat.S_IFREG | 0o755
    for lib in libs:
        assert lib.lstrip("/") in entries, lib
    assert "usr/local" in entries and stat.S_ISDIR(entries["usr/local"].mode)
    assert "init" in entries and "usr/bin/hackbench" in entries


def test_image_cache_key_follows_file_content_and_list(tmp_path: Path, image_build: Path):
    data = tmp_path / "data.txt"
    data.write_text("one\n")
    plain = image.build_base()
    assert plain.name == "base.cpio.gz"
    p1 = image.build_base(files=[f"{data}:/etc/data.txt"])
    assert p1 != plain and image.build_base(files=[f"{data}:/etc/data.txt"]) == p1
    assert read_image(p1)["etc/data.txt"].data == b"one\n"
    data.write_text("two\n")
    p2 = image.build_base(files=[f"{data}:/etc/data.txt"])
    assert p2 != p1 and read_image(p2)["etc/data.txt"].data == b"two\n"
    p3 = image.build_base(files=[f"{data}:/etc/data.txt", f"{data}:/etc/other.txt"])
    assert p3 not in (p1, p2)
    assert image.build_base(files=[f"{data}:/etc/other.txt"]) not in (p1, p2, p3)
    assert image.build_base() == plain and "etc/data.txt" not in read_image(plain)


def test_files_may_not_replace_what_the_image_has(tmp_path: Path, image_build: Path):
    f = tmp_path / "hackbench"
    f.write_bytes(b"#!/bin/sh\necho fake\n")
    f.chmod(0o755)
    with pytest.raises(HarnessError, match="/usr/bin/hackbench is already in the image"):
        image.build_base(files=[f"{f}:/usr/bin/hackbench"])
    with pytest.raises(HarnessError, match="directory /init is a file in the image"):
        image.build_base(files=[f"{f}:/init/x"])
    with pytest.raises(HarnessError, match="under /usr/bin/hackbench, which is not a dir"):
        image.file_entries([f"{f}:/usr/bin/hackbench", f"{f}:/usr/bin/hackbench/x"])
    with pytest.raises(HarnessError, match="is a directory in the image"):
        image.build_base(files=[f"{f}:/usr/bin"])
    # the same file twice at one path is fine; different ones are not
    g = tmp_path / "g"
    g.write_text("g\n")
    assert image.file_entries([f"{g}:/opt/x", f"{g}:/opt/x"])
    with pytest.raises(HarnessError, match="/opt/x is already in the image"):
        image.file_entries([f"{g}:/opt/x", f"{f}:/opt/x"])


def test_parse_file_spec_defaults_and_errors(tmp_path: Path):
    exe = tmp_path / "prog"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    (tmp_path / "conf.txt").write_text("x\n")
    (tmp_path / "tree").mkdir()
    assert image.parse_file_spec(str(exe)) == image.FileSpec(exe, "/usr/local/bin/prog")
    assert image.parse_file_spec("conf.txt", tmp_path).guest == "/opt/conf.txt"
    assert image.parse_file_spec(f"{tmp_path}/tree/").guest == "/opt/tree"
    s = image.parse_file_spec(f"{exe}:/usr/local//bin/./p2")
    assert str(s) == f"{exe}:/usr/local/bin/p2" and image.parse_file_spec(str(s)) == s
    colon = tmp_path / "a:b"
    colon.write_text("")
    assert image.parse_file_spec(str(colon)).host == colon
    assert image.parse_file_spec(f"{colon}:/opt/ab").host == colon
    for text, msg in [(f"{tmp_path}/nope", "no such host file"),
                      (f"{exe}:usr/bin/p", "must be absolute"),
                      (f"{exe}:/opt/../etc/p", r"'\.\.'"),
                      (f"{exe}:/tmp/p", "mounts over"), (f"{exe}:/dev", "mounts over"),
                      (f"{tmp_path}/tree:/", "not be / itself"), ("", "want HOST"),
                      (f"{exe}:", "want HOST"), ("/dev/null", "neither a regular file")]:
        with pytest.raises(HarnessError, match=msg):
            image.parse_file_spec(text)


def test_directory_tree_keeps_modes_and_symlinks(tmp_path: Path, tinybench: Path):
    tree = tmp_path / "app"
    (tree / "bin").mkdir(parents=True)
    (tree / "share" / "empty").mkdir(parents=True)
    shutil.copy(tinybench, tree / "bin" / "app")
    (tree / "share" / "ro.txt").write_text("read only\n")
    (tree / "share" / "ro.txt").chmod(0o444)
    (tree / "share" / "run.sh").write_text("#!/bin/sh\n")
    (tree / "share" / "run.sh").chmod(0o750)
    os.symlink("../bin/app", tree / "share" / "link")
    es = {e.name: e for e in image.file_entries([str(tree)])}
    assert stat.S_ISDIR(es["opt/app"].mode) and stat.S_ISDIR(es["opt/app/share/empty"].mode)
    assert es["opt/app/share/ro.txt"].mode == stat.S_IFREG | 0o444
    assert es["opt/app/share/run.sh"].mode == stat.S_IFREG | 0o750
    assert es["opt/app/bin/app"].data == tinybench.read_bytes()
    link = es["opt/app/share/link"]
    assert stat.S_ISLNK(link.mode) and link.data == b"../bin/app"
    libc = next(lib for lib in image.shared_libs(str(tinybench)) if "libc.so" in lib)
    assert libc.lstrip("/") in es            # libraries of ELF programs inside the tree
    names = [e.name for e in image.file_entries([str(tree)])]
    assert all(os.path.dirname(n) in names[:i] or "/" not in n for i, n in enumerate(names))


def test_parse_ldd_reports_missing_libraries():
    libs, missing = image.parse_ldd(
        "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibfoo.so.1 => not found\n"
        "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n"
        "\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n")
    assert libs == ["/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"]
    assert missing == ["libfoo.so.1"]


def test_vendored_tarballs_are_checked_against_their_pins(tmp_path):
    """check_vendored(): the pinned schbench and pahole tarballs match their
    sha256; a missing or changed file is refused, naming what is wrong."""
    from idlesteal.guest import schbench
    from idlesteal.kernel import pahole
    from idlesteal.util import check_vendored
    check_vendored(schbench.TARBALL, schbench.SHA256)
    check_vendored(pahole.TARBALL, pahole.SHA256)
    with pytest.raises(HarnessError, match="is missing"):
        check_vendored(tmp_path / "gone.tar.xz", schbench.SHA256)
    other = tmp_path / "other.tar.xz"
    other.write_bytes(b"not schbench")
    with pytest.raises(HarnessError, match="expected " + schbench.SHA256):
        check_vendored(other, schbench.SHA256)
