"""The initrd: user programs packed in a cpio "newc" archive.

The format (the one Linux's initramfs uses, and `cpio -o -H newc` writes): each member
is a 110-byte ASCII header, its NUL-terminated name, zero padding to a multiple of 4,
its data, zero padding to a multiple of 4. The header is the magic ``070701`` and 13
fields of 8 hex digits: ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
devminor, rdevmajor, rdevminor, namesize (with the NUL), check (0). A member named
``TRAILER!!!`` ends the archive. The kernel reads it in kernel/initrd.c.

Names are plain program names ("hello"), as exec() looks them up; mtimes are 0, so the
same programs always give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..abi.fs_layout import DIRSIZ
from ..errors import BadInput

__all__ = ["InitrdEntry", "initrd_load_address", "pack_initrd", "unpack_initrd"]

MAGIC = b"070701"
HEADER_SIZE = 110
TRAILER = "TRAILER!!!"
S_IFREG = 0o100000
MODE_EXECUTABLE = S_IFREG | 0o755
_FIELDS = ("ino", "mode", "uid", "gid", "nlink", "mtime", "filesize", "devmajor",
           "devminor", "rdevmajor", "rdevminor", "namesize", "check")


@dataclass(frozen=True)
class InitrdEntry:
    """A file of the initrd: its name, its mode bits and its bytes."""
    name: str
    mode: int
    data: bytes


def _pad4(n: int) -> int:
    return (4 - n % 4) % 4


def _member(ino: int, name: str, mode: int, data: bytes) -> tuple[bytes, bytes, bytes]:
    """A member as its header, data and padding: the archive joins them once, without
    copying each program's bytes into a member first."""
    raw_name = name.encode() + b"\0"
    values = {"ino": ino, "mode": mode, "nlink": 1, "filesize": len(data),
              "namesize": len(raw_name)}
    header = MAGIC + b"".join(b"%08x" % values.get(f, 0) for f in _FIELDS)
    head = header + raw_name
    return head + b"\0" * _pad4(len(head)), data, b"\0" * _pad4(len(data))


def _check_name(name: str) -> None:
    if not name or "/" in name or "\0" in name or name in (".", "..", TRAILER) \
            or len(name.encode()) > DIRSIZ:
        raise BadInput(f"bad initrd program name {name!r}: use a plain name of 1-{DIRSIZ} "
                       "bytes (as a directory entry holds)")


def pack_initrd(files: Mapping[str, bytes]) -> bytes:
    """A newc archive of `files` (name -> ELF bytes), in the given order."""
    parts: list[bytes] = []
    for ino, (name, data) in enumerate(files.items(), 1):
        _check_name(name)
        parts += _member(ino, name, MODE_EXECUTABLE, data)
    parts += _member(0, TRAILER, 0, b"")
    return b"".join(parts)


def unpack_initrd(blob: bytes) -> list[InitrdEntry]:
    """Parse a newc archive (ours or `cpio -H newc`'s); BadInput if malformed."""
    entries: list[InitrdEntry] = []
    at = 0
    while True:
        header = blob[at:at + HEADER_SIZE]
        if len(header) < HEADER_SIZE or header[:6] != MAGIC:
            raise BadInput(f"initrd: no newc header at offset {at}")
        try:
            fields = {f: int(header[6 + 8 * i:14 + 8 * i], 16) for i, f in enumerate(_FIELDS)}
        except ValueError as e:
            raise BadInput(f"initrd: bad header field at offset {at}") from e
        name_end = at + HEADER_SIZE + fields["namesize"]
        name = blob[at + HEADER_SIZE:name_end - 1].decode(errors="replace")
        data_start = name_end + _pad4(name_end)
        data_end = data_start + fields["filesize"]
        if data_end > len(blob):
            raise BadInput(f"initrd: member {name!r} runs past the end")
        if name == TRAILER:
            return entries
        entries.append(InitrdEntry(name.removeprefix("./"), fields["mode"],
                                   blob[data_start:data_end]))
        at = data_end + _pad4(data_end)


def initrd_load_address(ram_base: int, ram_size: int, kernel_base: int) -> int:
    """Where to put the initrd in RAM, as QEMU 7.2 does for `-initrd` (hw/riscv/boot.c):
    half way into RAM, at most 128 MiB above the kernel. The kernel keeps those pages
    out of its allocator (kernel/kalloc.c), so any free spot works; this one matches QEMU.
    """
    del ram_base
    return kernel_base + min(ram_size // 2, 128 << 20)
