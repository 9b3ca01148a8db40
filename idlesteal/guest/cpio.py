"""A minimal writer for the cpio "newc" format the kernel unpacks as an
initramfs.  Entries are written with root ownership and a fixed mtime, so
the same inputs give the same bytes."""
from __future__ import annotations

import gzip
import io
import stat
from dataclasses import dataclass


@dataclass
class Entry:
    name: str            # path inside the archive, without leading '/'
    mode: int            # full st_mode (type bits + permissions)
    data: bytes = b""    # file content, or link target for symlinks
    rdev: tuple[int, int] = (0, 0)


def _pad(n: int) -> bytes:
    return b"\0" * ((4 - n % 4) % 4)


def _header(ino: int, e: Entry, nlink: int, size: int, namesize: int) -> bytes:
    fields = [ino, e.mode, 0, 0, nlink, 0, size, 0, 0, e.rdev[0], e.rdev[1], namesize, 0]
    return b"070701" + b"".join(b"%08X" % f for f in fields)


def archive(entries: list[Entry]) -> bytes:
    """Serialize entries (parents before children) into a newc archive."""
    out = io.BytesIO()
    for ino, e in enumerate(entries, 1):
        name = e.name.lstrip("/").encode() + b"\0"
        nlink = 2 if stat.S_ISDIR(e.mode) else 1
        hdr = _header(ino, e, nlink, len(e.data), len(name))
        out.write(hdr + name + _pad(len(hdr) + len(name)))
        out.write(e.data + _pad(len(e.data)))
    trailer = Entry("TRAILER!!!", 0)
    name = b"TRAILER!!!\0"
    hdr = _header(0, trailer, 1, 0, len(name))
    out.write(hdr + name + _pad(len(hdr) + len(name)))
    return out.getvalue()


def gzipped(entries: list[Entry]) -> bytes:
    return gzip.compress(archive(entries), compresslevel=6, mtime=0)


def directory(name: str) -> Entry:
    return Entry(name, stat.S_IFDIR | 0o755)


def file(name: str, data: bytes, executable: bool = False) -> Entry:
    return Entry(name, stat.S_IFREG | (0o755 if executable else 0o644), data)


def symlink(name: str, target: str) -> Entry:
    return Entry(name, stat.S_IFLNK | 0o777, target.encode())


def chardev(name: str, major: int, minor: int) -> Entry:
    return Entry(name, stat.S_IFCHR | 0o600, rdev=(major, minor))


def read_names(data: bytes) -> list[str]:
    """Names in an uncompressed newc archive (for tests)."""
    return [e.name for e in read_entries(data)]


def read_entries(data: bytes) -> list[Entry]:
    """The entries of an uncompressed newc archive (for tests)."""
    entries = []
    pos = 0
    while pos < len(data):
        hdr = data[pos:pos + 110]
        if hdr[:6] != b"070701":
            raise ValueError(f"bad cpio magic at {pos}")
        mode = int(hdr[14:22], 16)
        size = int(hdr[54:62], 16)
        rdev = (int(hdr[78:86], 16), int(hdr[86:94], 16))
        namesize = int(hdr[94:102], 16)
        name = data[pos + 110:pos + 110 + namesize - 1].decode()
        pos += 110 + namesize
        pos += (4 - pos % 4) % 4
        body = data[pos:pos + size]
        pos += size
        pos += (4 - pos % 4) % 4
        if name == "TRAILER!!!":
            break
        entries.append(Entry(name, mode, body, rdev))
    return entries
