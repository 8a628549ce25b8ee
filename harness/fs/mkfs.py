"""`make_image(files)`: a fresh, consistent file-system image holding `files`.

    make_image({"hello": elf, "bin/ls": ls})      # /hello, /bin/ls (bin created)

The layout is harness/abi/fs_layout.py's, the geometry harness/fs/superblock.py's
`plan`. What the image holds, so that fsck finds nothing to say:

- inode 1 (ROOTINO) is the root directory; inodes are given in depth-first order, each
  directory's names sorted by their bytes, so the same files always make the same
  bytes (nothing in an image records a time);
- every directory starts with "." and ".." (the root's ".." is itself), then one entry
  per name; its size is its entries' bytes, a multiple of DIRENT_SIZE;
- nlink is 1 for everything: a file has one name, and a directory counts only its
  parent's entry for it (the root, which has none, counts its place in the superblock);
- data blocks are taken in order from the start of the data region, a file's indirect
  block just before the first block it maps; the bitmap marks exactly the metadata
  blocks and the blocks taken; the log is empty (n = 0).

Without `size_blocks`, the image is DEFAULT_SIZE_BLOCKS (8 MiB), or larger in whole
MiB if the files need it, with at least MIN_FREE_BLOCKS free; without `ninodes`,
DEFAULT_NINODES, or more if the files need them. Too large a file, a bad name, an
image too small or too few inodes for what was asked is a one-line BadInput.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..abi.fs_layout import (
    BSIZE,
    DINODE,
    DIRENT_SIZE,
    INDIRECT,
    INODES_PER_BLOCK,
    LOGBLOCKS,
    MAXFILE,
    NDIRECT,
    NINDIRECT,
    ROOTINO,
    T_DIR,
    T_FILE,
)
from ..errors import BadInput
from .records import DirEntry, Inode, encode_name
from .superblock import SUPERBLOCK_BLOCK, Superblock, bitmap_blocks, inode_blocks, plan

__all__ = ["DEFAULT_NINODES", "DEFAULT_NLOG", "DEFAULT_SIZE_BLOCKS", "MIN_FREE_BLOCKS",
           "blocks_for", "make_image"]

MIB_BLOCKS = (1 << 20) // BSIZE
DEFAULT_SIZE_BLOCKS = 8 * MIB_BLOCKS
MIN_FREE_BLOCKS = 4 * MIB_BLOCKS     # free space an automatically sized image keeps
DEFAULT_NINODES = 512
DEFAULT_NLOG = LOGBLOCKS + 1         # the header and room for the largest transaction


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def blocks_for(nbytes: int) -> int:
    """Blocks (data and indirect) that a file of `nbytes` bytes takes."""
    n = _ceil_div(nbytes, BSIZE)
    mapping = 0
    if n > NDIRECT:
        mapping += 1
    if n > NDIRECT + NINDIRECT:
        mapping += 1 + _ceil_div(n - NDIRECT - NINDIRECT, NINDIRECT)
    return n + mapping


@dataclass
class _Node:
    """A file (`data`) or a directory (`children`, by stored name) to be written."""

    path: str
    data: bytes | None = None
    children: dict[bytes, _Node] = field(default_factory=dict)
    inum: int = 0

    @property
    def is_dir(self) -> bool:
        return self.data is None

    def content_size(self) -> int:
        return (2 + len(self.children)) * DIRENT_SIZE if self.is_dir else len(self.data or b"")


def _parts(path: str) -> list[str]:
    parts = path.removeprefix("/").split("/")
    if parts == [""] or "" in parts:
        raise BadInput(f"bad path {path!r}: empty name in it")
    for part in parts:
        encode_name(part)
    return parts


def _directory(root: _Node, parts: list[str], whole: str) -> _Node:
    node = root
    for i, part in enumerate(parts):
        raw = part.encode()
        child = node.children.get(raw)
        if child is None:
            child = node.children[raw] = _Node("/" + "/".join(parts[:i + 1]))
        elif not child.is_dir:
            raise BadInput(f"{whole}: {child.path} is a file, not a directory")
        node = child
    return node


def _tree(files: Mapping[str, bytes], dirs: Iterable[str]) -> _Node:
    root = _Node("/")
    for d in dirs:
        _directory(root, _parts(d), d)
    for path, data in files.items():
        *parent, name = _parts(path)
        where = _directory(root, parent, path)
        raw = name.encode()
        if raw in where.children:
            what = "directory" if where.children[raw].is_dir else "file"
            raise BadInput(f"{path}: given twice (already a {what})")
        if _ceil_div(len(data), BSIZE) > MAXFILE:
            raise BadInput(f"{path}: {len(data)} bytes is more than the largest file "
                           f"({MAXFILE} blocks of {BSIZE} bytes)")
        where.children[raw] = _Node("/" + "/".join([*parent, name]), bytes(data))
    return root


def _preorder(node: _Node) -> list[_Node]:
    out = [node]
    for raw in sorted(node.children):
        out += _preorder(node.children[raw])
    return out


def _ninodes(needed: int, asked: int | None) -> int:
    """Inode slots: `needed` inodes plus slot 0, which no inode uses."""
    if asked is None:
        return max(DEFAULT_NINODES, _ceil_div(needed + 1, INODES_PER_BLOCK) * INODES_PER_BLOCK)
    if asked < needed + 1:
        raise BadInput(f"{needed} files and directories need {needed + 1} inodes "
                       f"(inode 0 is never used); ninodes is {asked}")
    return asked


def _size(data_blocks: int, ninodes: int, asked: int | None) -> Superblock:
    def meta(size: int) -> int:
        return SUPERBLOCK_BLOCK + 1 + DEFAULT_NLOG + inode_blocks(ninodes) + bitmap_blocks(size)

    if asked is None:
        size = DEFAULT_SIZE_BLOCKS
        while meta(size) + data_blocks + MIN_FREE_BLOCKS > size:
            size += MIB_BLOCKS
        return plan(size, ninodes, DEFAULT_NLOG)
    sb = plan(asked, ninodes, DEFAULT_NLOG)
    if data_blocks > sb.nblocks:
        raise BadInput(f"an image of {asked} blocks is too small: the files need "
                       f"{data_blocks} data blocks and it has {sb.nblocks}")
    return sb


class _Writer:
    """Blocks taken in order from the data region, written into `image`."""

    def __init__(self, sb: Superblock) -> None:
        self.sb = sb
        self.image = bytearray(sb.size * BSIZE)
        self.next = sb.datastart

    def take(self) -> int:
        block = self.next
        self.next += 1
        return block

    def put(self, block: int, data: bytes) -> None:
        self.image[block * BSIZE:block * BSIZE + len(data)] = data

    def file(self, content: bytes) -> tuple[int, ...]:
        """Write `content`; return the inode's addrs."""
        addrs = [0] * (NDIRECT + 2)
        single: list[int] = []
        double: list[int] = []
        children: list[list[int]] = []
        for index in range(_ceil_div(len(content), BSIZE)):
            if index < NDIRECT:
                table = addrs
            elif index < NDIRECT + NINDIRECT:
                if not single:
                    addrs[NDIRECT] = self.take()
                table = single
            else:
                if not double:
                    addrs[NDIRECT + 1] = self.take()
                if (index - NDIRECT - NINDIRECT) % NINDIRECT == 0:
                    double.append(self.take())
                    children.append([])
                table = children[-1]
            block = self.take()
            if table is addrs:
                addrs[index] = block
            else:
                table.append(block)
            self.put(block, content[index * BSIZE:(index + 1) * BSIZE])
        if single:
            self.put(addrs[NDIRECT], INDIRECT.pack(addrs=single))
        if double:
            self.put(addrs[NDIRECT + 1], INDIRECT.pack(addrs=double))
            for block, table in zip(double, children, strict=True):
                self.put(block, INDIRECT.pack(addrs=table))
        return tuple(addrs)

    def inode(self, ino: Inode) -> None:
        offset = self.sb.inode_block(ino.inum) * BSIZE + ino.inum % INODES_PER_BLOCK * DINODE.size
        self.image[offset:offset + DINODE.size] = ino.pack()

    def bitmap(self) -> None:
        """Mark blocks 0 .. next-1 (metadata, then every block taken) in use."""
        start = self.sb.bmapstart * BSIZE
        used = self.next
        self.image[start:start + used // 8] = b"\xff" * (used // 8)
        if used % 8:
            self.image[start + used // 8] = (1 << used % 8) - 1


def _directory_bytes(node: _Node, parent: _Node) -> bytes:
    entries = [DirEntry.pack(node.inum, b"."), DirEntry.pack(parent.inum, b"..")]
    entries += [DirEntry.pack(node.children[raw].inum, raw) for raw in sorted(node.children)]
    return b"".join(entries)


def make_image(files: Mapping[str, bytes], *, size_blocks: int | None = None,
               ninodes: int | None = None, dirs: Iterable[str] = ()) -> bytes:
    """An image with each of `files` (path -> bytes; "a/b" makes directory a) and the
    (empty) directories `dirs`. Same arguments, same bytes."""
    root = _tree(files, dirs)
    nodes = _preorder(root)
    for inum, node in enumerate(nodes, ROOTINO):
        node.inum = inum
    slots = _ninodes(len(nodes), ninodes)
    sb = _size(sum(blocks_for(n.content_size()) for n in nodes), slots, size_blocks)
    w = _Writer(sb)
    w.put(SUPERBLOCK_BLOCK, sb.pack())
    parents = {id(child): node for node in nodes for child in node.children.values()}
    for node in nodes:
        if node.is_dir:
            content = _directory_bytes(node, parents.get(id(node), node))
        else:
            content = node.data or b""
        w.inode(Inode(node.inum, T_DIR if node.is_dir else T_FILE, 0, 0, 1, len(content),
                      w.file(content)))
    w.bitmap()
    return bytes(w.image)
