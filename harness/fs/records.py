"""Records of the on-disk structures, parsed with (and packed back through)
harness/abi/fs_layout.py: an inode, a directory entry, the log header."""

from __future__ import annotations

from dataclasses import dataclass

from ..abi.fs_layout import (
    DINODE,
    DIRENT,
    DIRSIZ,
    LOG_HEADER,
    T_DEVICE,
    T_DIR,
    T_FILE,
)
from ..errors import BadInput

__all__ = ["TYPE_NAMES", "DirEntry", "Inode", "LogHeader", "encode_name"]

TYPE_NAMES = {T_DIR: "dir", T_FILE: "file", T_DEVICE: "device"}


@dataclass(frozen=True)
class Inode:
    """Inode `inum` as stored (fs_layout.DINODE). `addrs` holds NDIRECT direct block
    numbers, then the indirect and the doubly indirect block's."""

    inum: int
    type: int
    major: int
    minor: int
    nlink: int
    size: int
    addrs: tuple[int, ...]

    @classmethod
    def parse(cls, inum: int, data: bytes, offset: int = 0) -> Inode:
        return cls(inum, **DINODE.unpack(data, offset))

    def pack(self) -> bytes:
        return DINODE.pack(type=self.type, major=self.major, minor=self.minor,
                           nlink=self.nlink, size=self.size, addrs=self.addrs)

    @property
    def is_free(self) -> bool:
        return self.type == 0

    @property
    def is_dir(self) -> bool:
        return self.type == T_DIR

    @property
    def type_name(self) -> str:
        """"dir", "file", "device", "free", or "type N" for a value no kernel writes."""
        if self.type == 0:
            return "free"
        return TYPE_NAMES.get(self.type, f"type {self.type}")


def encode_name(name: str) -> bytes:
    """A directory-entry name as stored; BadInput unless 1..DIRSIZ bytes without '/'
    or NUL, and not '.' or '..' (which mkfs writes itself)."""
    raw = name.encode()
    if not raw or len(raw) > DIRSIZ or b"/" in raw or b"\0" in raw or name in (".", ".."):
        raise BadInput(f"bad file name {name!r}: a name is 1 to {DIRSIZ} bytes, "
                       "without '/' or NUL, and not '.' or '..'")
    return raw


@dataclass(frozen=True)
class DirEntry:
    """One entry of a directory, at byte `offset` in it. `raw` is the stored name up
    to its first NUL; `name` the same decoded for display."""

    offset: int
    inum: int
    raw: bytes

    @classmethod
    def parse(cls, data: bytes, offset: int) -> DirEntry:
        fields = DIRENT.unpack(data, offset)
        return cls(offset, fields["inum"], fields["name"].split(b"\0", 1)[0])

    @staticmethod
    def pack(inum: int, raw: bytes) -> bytes:
        return DIRENT.pack(inum=inum, name=raw)

    @property
    def name(self) -> str:
        return self.raw.decode(errors="backslashreplace")


@dataclass(frozen=True)
class LogHeader:
    """The log's first block: `n` committed blocks, going home to `block[:n]`."""

    n: int
    block: tuple[int, ...]

    @classmethod
    def parse(cls, data: bytes, offset: int = 0) -> LogHeader:
        return cls(**LOG_HEADER.unpack(data, offset))

    def pack(self) -> bytes:
        return LOG_HEADER.pack(n=self.n, block=self.block)

    @property
    def homes(self) -> tuple[int, ...]:
        """The home block numbers of the committed transaction."""
        return self.block[:self.n]
