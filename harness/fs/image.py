"""Reading a file-system image: the superblock, inodes, files and directories.

    img = DiskImage.open("build/rv64/fs.img")    # or DiskImage(data)
    img.superblock.ninodes                        # 512
    img.read_path("/hello")[:4]                   # b'\\x7fELF'
    [e.name for e in img.listdir(ROOTINO)]        # ['.', '..', 'compute', ...]
    for entry in img.walk(): print(entry.path, entry.inode.size)

Everything is read as the kernel would read it (harness/abi/fs_layout.py), and nothing
is trusted: a block number outside the image, an inode number outside the table or a
path that is not there is a one-line BadInput, never an IndexError. (`fsck` checks
the same image for consistency; this module only reads.)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..abi.fs_layout import (
    BSIZE,
    DINODE,
    DIRENT_SIZE,
    FSMAGIC,
    INDIRECT,
    MAXFILE,
    NDIRECT,
    NINDIRECT,
    ROOTINO,
)
from ..errors import BadInput
from .records import DirEntry, Inode, LogHeader
from .superblock import SUPERBLOCK_BLOCK, Superblock

__all__ = ["DiskImage", "FileBlocks", "TreeEntry"]


@dataclass(frozen=True)
class FileBlocks:
    """Where an inode's bytes are. `data` pairs each present block of the file (its
    index in the file) with its block number, in file order; `mapping` lists the
    indirect blocks (the indirect one, the doubly indirect one, then its children);
    `unreadable` the mapping blocks whose numbers lie outside the image, which were
    not followed."""

    data: tuple[tuple[int, int], ...]
    mapping: tuple[int, ...]
    unreadable: tuple[int, ...]

    @property
    def all(self) -> tuple[int, ...]:
        """Every block number the inode holds, mapping blocks first."""
        return self.mapping + tuple(b for _, b in self.data)


@dataclass(frozen=True)
class TreeEntry:
    """One name in the tree: its absolute path and the inode it names."""

    path: str
    inode: Inode


class DiskImage:
    """An image in memory. With `strict` (the default) a superblock whose regions do
    not fit the image is BadInput; without, only a wrong magic number or a file too
    short to hold a superblock is, and `problems` lists the rest (fsck reports them)."""

    def __init__(self, data: bytes, name: str = "image", *, strict: bool = True) -> None:
        self.data = bytes(data)
        self.name = name
        if len(self.data) < (SUPERBLOCK_BLOCK + 1) * BSIZE:
            raise BadInput(f"{name}: not a file-system image ({len(self.data)} bytes is less "
                           f"than a boot block and a superblock)")
        self.superblock = Superblock.parse(self.block(SUPERBLOCK_BLOCK, check=False))
        if self.superblock.magic != FSMAGIC:
            raise BadInput(f"{name}: not a file-system image (magic {self.superblock.magic:#x}, "
                           f"not {FSMAGIC:#x})")
        self.problems = self.superblock.problems(len(self.data) // BSIZE)
        if strict and self.problems:
            raise BadInput(f"{name}: bad superblock: {self.problems[0]}")

    @classmethod
    def open(cls, path: str | Path, *, strict: bool = True) -> DiskImage:
        p = Path(path)
        if p.is_dir():
            raise BadInput(f"{p}: is a directory, not a disk image")
        try:
            data = p.read_bytes()
        except OSError as e:
            raise BadInput(f"{p}: cannot read disk image: {e.strerror}") from None
        return cls(data, str(p), strict=strict)

    # -- blocks ------------------------------------------------------------------------
    def in_image(self, block: int) -> bool:
        """Whether `block` is a block of the disk (below the superblock's size)."""
        return 0 <= block < min(self.superblock.size, len(self.data) // BSIZE)

    def block(self, number: int, *, check: bool = True) -> bytes:
        if check and not self.in_image(number):
            raise BadInput(f"{self.name}: block {number} is outside the disk "
                           f"({self.superblock.size} blocks)")
        return self.data[number * BSIZE:(number + 1) * BSIZE]

    def bitmap_says_used(self, block: int) -> bool:
        """Bit `block` of the free bitmap (byte block/8, bit block%8, LSB first)."""
        byte = self.data[self.superblock.bmapstart * BSIZE + block // 8]
        return bool(byte >> (block % 8) & 1)

    def log_header(self) -> LogHeader:
        return LogHeader.parse(self.block(self.superblock.logstart))

    # -- inodes ------------------------------------------------------------------------
    def inode(self, inum: int) -> Inode:
        sb = self.superblock
        if not 1 <= inum < sb.ninodes:
            raise BadInput(f"{self.name}: no inode {inum} (inodes are 1 to {sb.ninodes - 1})")
        offset = sb.inode_block(inum) * BSIZE + inum % (BSIZE // DINODE.size) * DINODE.size
        return Inode.parse(inum, self.data, offset)

    def inodes(self) -> Iterator[Inode]:
        """Every inode slot from 1 on, free ones included."""
        for inum in range(1, self.superblock.ninodes):
            yield self.inode(inum)

    def _pointers(self, block: int) -> tuple[int, ...]:
        addrs: tuple[int, ...] = INDIRECT.unpack(self.block(block))["addrs"]
        return addrs

    def blocks(self, inode: Inode) -> FileBlocks:
        data = [(i, b) for i, b in enumerate(inode.addrs[:NDIRECT]) if b]
        mapping: list[int] = []
        bad: list[int] = []

        def follow(block: int) -> tuple[int, ...]:
            """The block numbers in mapping block `block` (none if it is unreadable)."""
            mapping.append(block)
            if not self.in_image(block):
                bad.append(block)
                return ()
            return self._pointers(block)

        single, double = inode.addrs[NDIRECT], inode.addrs[NDIRECT + 1]
        if single:
            data.extend((NDIRECT + j, b) for j, b in enumerate(follow(single)) if b)
        if double:
            for k, child in enumerate(follow(double)):
                if child:
                    first = NDIRECT + NINDIRECT + k * NINDIRECT
                    data.extend((first + j, b) for j, b in enumerate(follow(child)) if b)
        return FileBlocks(tuple(data), tuple(mapping), tuple(bad))

    # -- files and directories ------------------------------------------------------------
    def read(self, inode: Inode | int, *, strict: bool = True) -> bytes:
        """The inode's `size` bytes; a block the file lacks (a hole) reads as zeros.
        BadInput if it maps a block outside the disk or is larger than MAXFILE blocks;
        without `strict`, such blocks read as zeros and a size past MAXFILE is cut."""
        ino = self.inode(inode) if isinstance(inode, int) else inode
        size = ino.size
        if size > MAXFILE * BSIZE:
            if strict:
                raise BadInput(f"{self.name}: inode {ino.inum}'s size {size} is more than "
                               f"the largest file ({MAXFILE} blocks)")
            size = MAXFILE * BSIZE
        fb = self.blocks(ino)
        if fb.unreadable and strict:
            raise BadInput(f"{self.name}: inode {ino.inum}'s indirect block "
                           f"{fb.unreadable[0]} is outside the disk")
        out = bytearray(-(-size // BSIZE) * BSIZE)
        for index, block in fb.data:
            if index * BSIZE >= len(out):
                break
            if self.in_image(block):
                out[index * BSIZE:(index + 1) * BSIZE] = self.block(block)
            elif strict:
                raise BadInput(f"{self.name}: inode {ino.inum}'s block {index} is block "
                               f"{block}, outside the disk")
        return bytes(out[:size])

    def entries(self, inode: Inode | int, *, strict: bool = True) -> list[DirEntry]:
        """Every entry of a directory, free ones (inum 0) included, in disk order (a
        partial entry at the end, in a size that is not whole entries, is left out)."""
        ino = self.inode(inode) if isinstance(inode, int) else inode
        if not ino.is_dir:
            raise BadInput(f"{self.name}: inode {ino.inum} is a {ino.type_name}, "
                           "not a directory")
        data = self.read(ino, strict=strict)
        return [DirEntry.parse(data, off)
                for off in range(0, len(data) - DIRENT_SIZE + 1, DIRENT_SIZE)]

    def listdir(self, inode: Inode | int) -> list[DirEntry]:
        """The directory's entries in use, "." and ".." included."""
        return [e for e in self.entries(inode) if e.inum]

    def lookup(self, path: str) -> Inode:
        """The inode `path` names, from the root ("/a/b" or "a/b")."""
        ino = self.inode(ROOTINO)
        for part in (p for p in path.split("/") if p):
            if not ino.is_dir:
                raise BadInput(f"{self.name}: {path}: not a directory on the way")
            found = next((e for e in self.listdir(ino) if e.name == part), None)
            if found is None:
                raise BadInput(f"{self.name}: {path}: no such file or directory")
            ino = self.inode(found.inum)
        return ino

    def read_path(self, path: str) -> bytes:
        ino = self.lookup(path)
        if ino.is_dir:
            raise BadInput(f"{self.name}: {path}: is a directory")
        return self.read(ino)

    def walk(self) -> Iterator[TreeEntry]:
        """The root, then every name below it, depth first in each directory's order
        ("." and ".." skipped; a directory reached twice is listed but not entered)."""
        root = self.inode(ROOTINO)
        yield TreeEntry("/", root)
        seen = {ROOTINO}

        def below(directory: Inode, prefix: str) -> Iterator[TreeEntry]:
            for e in self.listdir(directory):
                if e.raw in (b".", b".."):
                    continue
                child = self.inode(e.inum)
                yield TreeEntry(prefix + e.name, child)
                if child.is_dir and child.inum not in seen:
                    seen.add(child.inum)
                    yield from below(child, f"{prefix}{e.name}/")

        yield from below(root, "/")
