"""A raw disk image for virtio-blk, as QEMU's `-drive file=IMAGE,format=raw`.

Writes reach the file (QEMU's default, writeback through the host); with
`snapshot=on` the file is opened read-only and writes go to an overlay in memory, lost
at the end of the run. Opening checks what QEMU would refuse, as one-line BadInput: a
missing or unreadable file, a directory, a size that is not whole 512-byte sectors,
and a read-only file without snapshot=on (QEMU will not open it read-write).

`Drive.in_memory(content, name)` is an image held in memory, not a file (the disk
harness/boot/bootdisk.py gives the bundled system): always a snapshot.
"""

from __future__ import annotations

import mmap
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..abi.platform import PLATFORM
from ..errors import BadInput

__all__ = ["SECTOR", "Disk", "Drive", "as_drive", "parse_drive"]

SECTOR = PLATFORM.virtio["VIRTIO_BLK_SECTOR_SIZE"]


@dataclass(frozen=True)
class Drive:
    """What `--drive IMAGE[,snapshot=on]` asks for. With `content`, the image is those
    bytes and `path` only names it in messages."""

    path: Path
    snapshot: bool = False
    content: bytes | mmap.mmap | None = field(default=None, repr=False, compare=False)

    @classmethod
    def in_memory(cls, content: bytes | mmap.mmap, name: str) -> Drive:
        return cls(Path(name), snapshot=True, content=content)


def parse_drive(text: str) -> Drive:
    """`IMAGE` or `IMAGE,snapshot=on|off` (the CLI's --drive value)."""
    path, *options = text.split(",")
    if not path:
        raise BadInput(f"--drive {text!r}: no image file")
    snapshot = False
    for opt in options:
        key, _, value = opt.partition("=")
        if key != "snapshot" or value not in ("on", "off"):
            raise BadInput(f"--drive {text!r}: unknown option {opt!r} (only snapshot=on|off)")
        snapshot = value == "on"
    return Drive(Path(path), snapshot)


def as_drive(value: Drive | str | Path | None) -> Drive | None:
    """A Drive from what the API accepts: a Drive, "IMAGE[,snapshot=on]", or a path."""
    if value is None or isinstance(value, Drive):
        return value
    return parse_drive(value) if isinstance(value, str) else Drive(value)


class Disk:
    """The sectors of an opened image. Offsets and lengths are whole sectors."""

    def __init__(self, drive: Drive) -> None:
        self.path = drive.path
        self._overlay: dict[int, bytes] = {}
        self._fd = -1
        self._content = drive.content
        if drive.content is not None:
            if len(drive.content) % SECTOR:
                raise BadInput(f"{drive.path}: size {len(drive.content)} is not a multiple "
                               f"of {SECTOR} (a raw image is whole sectors)")
            self.snapshot = True
            self.size = len(drive.content)
            return
        path = drive.path
        try:
            st = path.stat()
        except OSError as e:
            raise BadInput(f"{path}: cannot open disk image: {e.strerror}") from None
        if stat.S_ISDIR(st.st_mode):
            raise BadInput(f"{path}: is a directory, not a disk image")
        if not stat.S_ISREG(st.st_mode):
            raise BadInput(f"{path}: not a regular file")
        if st.st_size % SECTOR:
            raise BadInput(f"{path}: size {st.st_size} is not a multiple of {SECTOR} "
                           "(a raw image is whole sectors)")
        writable = bool(st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) \
            and os.access(path, os.W_OK)
        if not drive.snapshot and not writable:
            raise BadInput(f"{path}: the image is read-only; use --drive {path},snapshot=on "
                           "to run with writes kept in memory")
        try:
            self._fd = os.open(path, os.O_RDONLY if drive.snapshot else os.O_RDWR)
        except OSError as e:
            raise BadInput(f"{path}: cannot open disk image: {e.strerror}") from None
        self.snapshot = drive.snapshot
        self.size = st.st_size

    @property
    def sectors(self) -> int:
        return self.size // SECTOR

    def contents(self) -> bytes:
        """The whole image as the guest sees it now (its overlay included)."""
        return self.read(0, self.sectors)

    def read(self, sector: int, count: int) -> bytes:
        parts = []
        for s in range(sector, sector + count):
            data = self._overlay.get(s)
            if data is None:
                data = (os.pread(self._fd, SECTOR, s * SECTOR) if self._content is None
                        else self._content[s * SECTOR:(s + 1) * SECTOR])
            parts.append(data)
        return b"".join(parts)

    def write(self, sector: int, data: bytes) -> None:
        if self.snapshot:
            for i in range(0, len(data), SECTOR):
                self._overlay[sector + i // SECTOR] = data[i:i + SECTOR]
        else:
            os.pwrite(self._fd, data, sector * SECTOR)

    def flush(self) -> None:
        if not self.snapshot:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
