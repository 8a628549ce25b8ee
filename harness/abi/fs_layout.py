"""The on-disk layout of the kernel's file system: the one definition of it.

The kernel (through the generated `fs_gen.h`, see `render_header`) and the harness's
`mkfs`, reader and `fsck` (harness/fs/, through `Layout.pack`/`unpack`) both read
this module, so a block size or a field can change in one place only.

The disk is an array of BSIZE-byte blocks (two 512-byte virtio sectors each):

    [ 0: boot | 1: super | log header, log blocks | inodes | free bitmap | data ... ]

- block 0 is unused (a boot loader's, as in Unix since V6);
- the superblock says where each region starts and how large it is;
- the log (write-ahead, kernel/log.c) is a header block followed by `nlog - 1` blocks
  holding copies of the blocks one transaction writes; the header lists their home
  block numbers, and a header with n > 0 means "committed: install these";
- inodes are packed INODES_PER_BLOCK to a block, numbered from 1 (0 means "none");
- the bitmap has one bit per block of the disk, set when the block is in use;
- a directory is a file of DIRENT_SIZE-byte entries; inum 0 marks a free entry.

A file's blocks: `addrs[0..NDIRECT-1]` are data blocks, `addrs[NDIRECT]` is a block
of NINDIRECT block numbers, `addrs[NDIRECT + 1]` a block of NINDIRECT numbers of such
blocks (doubly indirect). Every number is little-endian, as the hart is.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "BSIZE",
    "DINODE",
    "DIRENT",
    "DIRENT_SIZE",
    "DIRSIZ",
    "FSMAGIC",
    "INDIRECT",
    "INODES_PER_BLOCK",
    "LOGBLOCKS",
    "LOG_HEADER",
    "MAXFILE",
    "NDIRECT",
    "NINDIRECT",
    "ROOTINO",
    "SECTOR_SIZE",
    "SUPERBLOCK",
    "T_DEVICE",
    "T_DIR",
    "T_FILE",
    "Layout",
    "render_header",
]

SECTOR_SIZE = 512                 # virtio-blk's unit
BSIZE = 1024                      # file-system block
FSMAGIC = 0x53464C50              # "PLFS" read as a little-endian u32
ROOTINO = 1                       # inode of "/"
NDIRECT = 11                      # direct block numbers in an inode
NINDIRECT = BSIZE // 4            # block numbers in an indirect block
MAXFILE = NDIRECT + NINDIRECT + NINDIRECT * NINDIRECT   # largest file, in blocks
DIRSIZ = 62                       # longest name in a directory entry (no NUL if full):
                                  # course test programs run 15-30 bytes
                                  # (ch6b_filetest_simple), and 2 + 62 packs
                                  # 16 entries to a block
LOGBLOCKS = 30                    # most blocks one transaction may write (log size - 1)

# Inode types (dinode.type); 0 = a free inode.
T_DIR = 1
T_FILE = 2
T_DEVICE = 3

_CTYPES = {"u8": ("B", "uint8_t"), "u16": ("H", "uint16_t"), "i16": ("h", "int16_t"),
           "u32": ("I", "uint32_t"), "char": ("s", "char")}


@dataclass(frozen=True)
class Layout:
    """One on-disk structure: its C name and its fields as (type, name, count)."""

    name: str
    doc: str
    fields: tuple[tuple[str, str, int], ...]

    @property
    def format(self) -> str:
        parts = []
        for ctype, _name, count in self.fields:
            code = _CTYPES[ctype][0]
            parts.append(f"{count}s" if code == "s" else f"{count}{code}" if count > 1 else code)
        return "<" + "".join(parts)

    @property
    def size(self) -> int:
        return struct.calcsize(self.format)

    def pack(self, **values: Any) -> bytes:
        """The structure's bytes; arrays as sequences, char arrays as bytes, missing
        fields zero."""
        flat: list[Any] = []
        for ctype, name, count in self.fields:
            v = values.get(name)
            if ctype == "char":
                flat.append(v or b"")
            elif count > 1:
                seq = list(v or ())
                if len(seq) > count:
                    raise ValueError(f"{self.name}.{name}: {len(seq)} values for {count}")
                flat.extend(seq + [0] * (count - len(seq)))
            else:
                flat.append(v or 0)
        return struct.pack(self.format, *flat)

    def unpack(self, data: bytes, offset: int = 0) -> dict[str, Any]:
        flat = list(struct.unpack_from(self.format, data, offset))
        out: dict[str, Any] = {}
        for ctype, name, count in self.fields:
            if ctype == "char" or count == 1:
                out[name] = flat.pop(0)
            else:
                out[name] = tuple(flat[:count])
                del flat[:count]
        return out

    def c_struct(self) -> str:
        lines = [f"// {self.doc}", f"struct {self.name} {{"]
        for ctype, name, count in self.fields:
            decl = f"{_CTYPES[ctype][1]} {name}" + (f"[{count}]" if count > 1 or ctype == "char"
                                                   else "")
            lines.append(f"  {decl};")
        lines.append("};")
        return "\n".join(lines)


SUPERBLOCK = Layout("superblock", "Block 1: where each region of the disk starts.", (
    ("u32", "magic", 1),        # FSMAGIC
    ("u32", "size", 1),         # blocks in the image
    ("u32", "nblocks", 1),      # data blocks
    ("u32", "ninodes", 1),      # inodes
    ("u32", "nlog", 1),         # log blocks, header included
    ("u32", "logstart", 1),     # first log block (the header)
    ("u32", "inodestart", 1),   # first inode block
    ("u32", "bmapstart", 1),    # first bitmap block
))

DINODE = Layout("dinode", "An inode on disk.", (
    ("i16", "type", 1),         # T_DIR, T_FILE, T_DEVICE; 0 = free
    ("i16", "major", 1),        # T_DEVICE only
    ("i16", "minor", 1),
    ("i16", "nlink", 1),        # directory entries naming this inode
    ("u32", "size", 1),         # bytes
    ("u32", "addrs", NDIRECT + 2),  # direct, indirect, doubly indirect
))

DIRENT = Layout("dirent", "A directory entry.", (
    ("u16", "inum", 1),         # 0 = free entry
    ("char", "name", DIRSIZ),   # NUL-padded; not terminated when DIRSIZ long
))

LOG_HEADER = Layout("logheader", "The log's first block: a committed transaction.", (
    ("u32", "n", 1),                    # blocks to install; 0 = nothing committed
    ("u32", "block", LOGBLOCKS),        # their home block numbers
))

INODES_PER_BLOCK = BSIZE // DINODE.size
DIRENT_SIZE = DIRENT.size

# Not a C struct (the kernel reads an indirect block as uint32_t[NINDIRECT]), so not in
# fs_gen.h; the harness packs and unpacks indirect blocks through it.
INDIRECT = Layout("indirect", "An indirect block: NINDIRECT block numbers.", (
    ("u32", "addrs", NINDIRECT),
))
assert INDIRECT.size == BSIZE

_LAYOUTS = (SUPERBLOCK, DINODE, DIRENT, LOG_HEADER)

_DEFINES = {
    "BSIZE": BSIZE, "FSMAGIC": FSMAGIC, "ROOTINO": ROOTINO, "NDIRECT": NDIRECT,
    "NINDIRECT": NINDIRECT, "MAXFILE": MAXFILE, "DIRSIZ": DIRSIZ, "LOGBLOCKS": LOGBLOCKS,
    "T_DIR": T_DIR, "T_FILE": T_FILE, "T_DEVICE": T_DEVICE,
    "INODES_PER_BLOCK": INODES_PER_BLOCK, "SECTORS_PER_BLOCK": BSIZE // SECTOR_SIZE,
    "BITS_PER_BLOCK": BSIZE * 8,
}


def _check() -> None:
    # Whole structures per block, and no padding the C compiler would add differently.
    assert BSIZE % DINODE.size == 0 and BSIZE % DIRENT.size == 0
    assert LOG_HEADER.size <= BSIZE
    assert DINODE.size == 64 and DIRENT.size == 64 and SUPERBLOCK.size == 32


_check()


def render_header() -> str:
    """fs_gen.h: the constants and structures above, for the kernel (and any C tool)."""
    out = ["// fs_gen.h: generated from privlab/abi/fs_layout.py; do not edit.",
           "// The on-disk layout of the file system (see that module's docstring).",
           "#ifndef FS_GEN_H", "#define FS_GEN_H", "", "#include <stdint.h>", ""]
    out += [f"#define {k} {v:#x}" if k == "FSMAGIC" else f"#define {k} {v}"
            for k, v in _DEFINES.items()]
    for layout in _LAYOUTS:
        out += ["", layout.c_struct(),
                f"_Static_assert(sizeof(struct {layout.name}) == {layout.size}, "
                f"\"struct {layout.name} as harness/abi/fs_layout.py\");"]
    out += ["", "#endif // FS_GEN_H", ""]
    return "\n".join(out)
