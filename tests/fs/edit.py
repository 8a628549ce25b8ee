"""Editing an image's bytes in place, to build the corruptions fsck must catch."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from privlab.abi.fs_layout import BSIZE, DINODE, DIRENT_SIZE, INODES_PER_BLOCK
from privlab.fs import DirEntry, DiskImage, LogHeader, Superblock


class Editable:
    """An image as a bytearray, with the reader over its current bytes."""

    def __init__(self, image: bytes) -> None:
        self.data = bytearray(image)

    @property
    def img(self) -> DiskImage:
        return DiskImage(bytes(self.data), strict=False)

    @property
    def bytes(self) -> bytes:
        return bytes(self.data)

    def put(self, offset: int, raw: bytes) -> None:
        self.data[offset:offset + len(raw)] = raw

    def superblock(self, **fields: int) -> None:
        sb = replace(Superblock.parse(self.data[BSIZE:2 * BSIZE]), **fields)
        self.put(BSIZE, sb.pack())

    def inode(self, inum: int, **fields: Any) -> None:
        img = self.img
        ino = replace(img.inode(inum), **fields)
        offset = (img.superblock.inode_block(inum) * BSIZE
                  + inum % INODES_PER_BLOCK * DINODE.size)
        self.put(offset, ino.pack())

    def inum(self, path: str) -> int:
        return self.img.lookup(path).inum

    def dirent(self, directory: str, index: int, inum: int, name: bytes) -> None:
        """Write entry `index` of `directory` (in its first block)."""
        ino = self.img.lookup(directory)
        self.put(ino.addrs[0] * BSIZE + index * DIRENT_SIZE, DirEntry.pack(inum, name))

    def append_dirent(self, directory: str, inum: int, name: bytes) -> None:
        """One more entry at the end of `directory` (still in its first block)."""
        ino = self.img.lookup(directory)
        self.dirent(directory, ino.size // DIRENT_SIZE, inum, name)
        self.inode(ino.inum, size=ino.size + DIRENT_SIZE)

    def bit(self, block: int, used: bool) -> None:
        offset = self.img.superblock.bmapstart * BSIZE + block // 8
        mask = 1 << block % 8
        self.data[offset] = self.data[offset] | mask if used else self.data[offset] & ~mask

    def block(self, number: int, content: bytes) -> None:
        self.put(number * BSIZE, content.ljust(BSIZE, b"\0"))

    def log(self, homes: list[int], contents: list[bytes], n: int | None = None) -> None:
        """Commit a transaction: each content in the log, going home to homes[i]."""
        start = self.img.superblock.logstart
        for i, content in enumerate(contents):
            self.block(start + 1 + i, content)
        self.put(start * BSIZE, LogHeader(len(homes) if n is None else n,
                                          tuple(homes)).pack())
