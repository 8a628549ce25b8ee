"""The superblock and the geometry it describes: where each region of a disk starts.

The regions follow each other in this order (harness/abi/fs_layout.py):

    boot (block 0) | super (block 1) | log: header + nlog-1 blocks | inodes | bitmap | data

The numbers `mkfs` does not store but every reader derives the same way:

- the inode table holds `ninodes` slots, INODES_PER_BLOCK to a block, so it takes
  ceil(ninodes / INODES_PER_BLOCK) blocks; inode `i` is slot `i` (block
  inodestart + i / INODES_PER_BLOCK). Slot 0 is never used ("no inode"), so the usable
  inode numbers are 1 .. ninodes-1 (xv6's convention);
- the bitmap has one bit per block of the disk: ceil(size / BITS_PER_BLOCK) blocks;
- the data region is the last `nblocks` blocks: it starts at size - nblocks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import pairwise

from ..abi.fs_layout import BSIZE, FSMAGIC, INODES_PER_BLOCK, LOGBLOCKS, SUPERBLOCK
from ..errors import BadInput

__all__ = ["BITS_PER_BLOCK", "SUPERBLOCK_BLOCK", "Region", "Superblock", "bitmap_blocks",
           "inode_blocks", "plan"]

SUPERBLOCK_BLOCK = 1
BITS_PER_BLOCK = BSIZE * 8
_LOGSTART = SUPERBLOCK_BLOCK + 1


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def inode_blocks(ninodes: int) -> int:
    """Blocks of an inode table of `ninodes` slots."""
    return _ceil_div(ninodes, INODES_PER_BLOCK)


def bitmap_blocks(size: int) -> int:
    """Bitmap blocks for a disk of `size` blocks."""
    return _ceil_div(size, BITS_PER_BLOCK)


@dataclass(frozen=True)
class Region:
    """`count` blocks from `start`."""

    name: str
    start: int
    count: int

    @property
    def end(self) -> int:
        return self.start + self.count

    def __contains__(self, block: object) -> bool:
        return isinstance(block, int) and self.start <= block < self.end


@dataclass(frozen=True)
class Superblock:
    """Block 1, field by field (fs_layout.SUPERBLOCK), and the regions it implies."""

    magic: int
    size: int
    nblocks: int
    ninodes: int
    nlog: int
    logstart: int
    inodestart: int
    bmapstart: int

    @classmethod
    def parse(cls, block: bytes) -> Superblock:
        return cls(**SUPERBLOCK.unpack(block))

    def pack(self) -> bytes:
        return SUPERBLOCK.pack(**asdict(self))

    @property
    def ninodeblocks(self) -> int:
        return inode_blocks(self.ninodes)

    @property
    def nbitmap(self) -> int:
        return bitmap_blocks(self.size)

    @property
    def datastart(self) -> int:
        return self.size - self.nblocks

    def regions(self) -> list[Region]:
        """Every region in disk order (the data region last)."""
        return [Region("boot", 0, 1), Region("super", SUPERBLOCK_BLOCK, 1),
                Region("log", self.logstart, self.nlog),
                Region("inodes", self.inodestart, self.ninodeblocks),
                Region("bitmap", self.bmapstart, self.nbitmap),
                Region("data", self.datastart, self.nblocks)]

    @property
    def data(self) -> Region:
        return Region("data", self.datastart, self.nblocks)

    def inode_block(self, inum: int) -> int:
        return self.inodestart + inum // INODES_PER_BLOCK

    def problems(self, file_blocks: int) -> list[str]:
        """What is wrong with this superblock for an image file of `file_blocks` whole
        blocks: each a one-line message; [] when the geometry is sound."""
        if self.magic != FSMAGIC:
            return [f"bad magic {self.magic:#x} (a file system has {FSMAGIC:#x})"]
        out: list[str] = []
        if self.size > file_blocks:
            out.append(f"the superblock says {self.size} blocks but the image holds only "
                       f"{file_blocks}")
        if self.nblocks > self.size:
            out.append(f"{self.nblocks} data blocks in a disk of {self.size}")
        if self.ninodes < 2:
            out.append(f"ninodes is {self.ninodes}: there is no room for the root inode")
        if self.nlog < LOGBLOCKS + 1:
            out.append(f"the log has {self.nlog} blocks; a transaction may write {LOGBLOCKS} "
                       f"(nlog must be at least {LOGBLOCKS + 1})")
        regions = self.regions()
        for prev, nxt in pairwise(regions):
            if nxt.start < prev.end:
                out.append(f"the {nxt.name} region (from block {nxt.start}) overlaps the "
                           f"{prev.name} region (blocks {prev.start}-{prev.end - 1})")
        if self.datastart < 0:
            out.append(f"the data region would start at block {self.datastart}")
        return out


def plan(size: int, ninodes: int, nlog: int = LOGBLOCKS + 1) -> Superblock:
    """The superblock of a fresh disk: the regions packed from block 2 on, the rest
    data. BadInput when they leave no data blocks."""
    inodestart = _LOGSTART + nlog
    bmapstart = inodestart + inode_blocks(ninodes)
    datastart = bmapstart + bitmap_blocks(size)
    if datastart >= size:
        raise BadInput(f"a disk of {size} blocks has no room for data after its "
                       f"{datastart} blocks of metadata")
    return Superblock(FSMAGIC, size, size - datastart, ninodes, nlog, _LOGSTART, inodestart,
                      bmapstart)
