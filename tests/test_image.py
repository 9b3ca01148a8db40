import gzip

from idlesteal import cpio, image


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
