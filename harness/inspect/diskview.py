"""Views of a file-system image (harness/fs): its geometry, its tree, one inode.

    DiskSummary(img)             the superblock's regions, the log, blocks in use
    DiskTree(img.walk())         ls -lR-like: inum, type, nlink, size, path
    InodeView(img, inode, path)  every field of one inode and where its blocks are
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from ..abi.fs_layout import BSIZE, INODES_PER_BLOCK, NDIRECT, NINDIRECT
from ..fs.image import DiskImage, TreeEntry
from ..fs.records import Inode
from ..fs.runs import format_runs

__all__ = ["DiskSummary", "DiskTree", "InodeView"]

RUNS_SHOWN = 6


def _blocks(first: int, count: int) -> str:
    return f"{first}" if count == 1 else f"{first}-{first + count - 1}"


def _runs(blocks: list[int]) -> str:
    return format_runs(blocks, RUNS_SHOWN, keep_order=True)


def _count(n: int, what: str = "block") -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _size(nbytes: int) -> str:
    mib, kib = nbytes / (1 << 20), nbytes / 1024
    return f"{mib:g} MiB" if mib >= 1 else f"{kib:g} KiB"


class DiskSummary:
    """The geometry: one row per region, then how much of each region is in use."""

    def __init__(self, img: DiskImage) -> None:
        self.img = img

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        img, sb = self.img, self.img.superblock
        inodes = sum(1 for ino in img.inodes() if not ino.is_free)
        head = Text()
        head.append(img.name, "heading")
        head.append(f": {sb.size} blocks of {BSIZE} bytes ({_size(sb.size * BSIZE)}), "
                    f"{sb.ninodes} inodes ({inodes} in use)")
        yield head
        table = Table(box=None, padding=(0, 1), header_style="muted")
        table.add_column("region", no_wrap=True)
        table.add_column("blocks", no_wrap=True)
        table.add_column("count", justify="right", no_wrap=True)
        table.add_column("", no_wrap=True, style="muted")
        header = img.log_header()
        in_use = sum(1 for b in range(sb.datastart, sb.size) if img.bitmap_says_used(b))
        notes = {
            "log": ("empty" if header.n == 0 else
                    f"holds a committed transaction of {header.n} blocks"),
            "inodes": f"{INODES_PER_BLOCK} per block",
            "bitmap": "1 bit per block",
            "data": f"{in_use} in use, {sb.nblocks - in_use} free",
        }
        for r in sb.regions():
            table.add_row(r.name, _blocks(r.start, r.count), str(r.count), notes.get(r.name, ""))
        yield table


class DiskTree:
    """Every name from the root down, one row each."""

    def __init__(self, entries: Iterable[TreeEntry]) -> None:
        self.entries = list(entries)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(box=None, padding=(0, 1), header_style="muted")
        for col in ("inum", "type", "nlink", "size", "path"):
            table.add_column(col, no_wrap=True,
                             justify="right" if col in ("inum", "nlink", "size") else "left")
        for e in self.entries:
            ino = e.inode
            table.add_row(str(ino.inum), ino.type_name, str(ino.nlink), str(ino.size),
                          Text(e.path + ("/" if ino.is_dir and e.path != "/" else ""),
                               "heading" if ino.is_dir else ""))
        yield table


class InodeView:
    """One inode: its fields, its blocks (direct, through the indirect block and the
    doubly indirect one) and, for a directory, its entries."""

    def __init__(self, img: DiskImage, inode: Inode, path: str | None = None) -> None:
        self.img = img
        self.inode = inode
        self.path = path

    @staticmethod
    def _field(name: str, value: str, note: str = "") -> Text:
        t = Text()
        t.append(f"  {name:<10}", "csr.name")
        t.append(f"{value:<14}" if note else value)
        if note:
            t.append(note, "muted")
        return t

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        ino = self.inode
        head = Text()
        head.append(f"inode {ino.inum}", "heading")
        head.append(f" ({self.path})" if self.path else "")
        head.append(f": {ino.type_name}", "muted")
        yield head
        yield self._field("type", str(ino.type), ino.type_name)
        yield self._field("major", str(ino.major))
        yield self._field("minor", str(ino.minor))
        yield self._field("nlink", str(ino.nlink))
        yield self._field("size", str(ino.size), f"bytes: {_count(-(-ino.size // BSIZE))}")
        fb = self.img.blocks(ino)
        single, double = ino.addrs[NDIRECT], ino.addrs[NDIRECT + 1]
        direct = [b for b in ino.addrs[:NDIRECT] if b]
        through = [b for i, b in fb.data if NDIRECT <= i < NDIRECT + NINDIRECT]
        children = [b for b in fb.mapping if b not in (single, double)]
        far = [b for i, b in fb.data if i >= NDIRECT + NINDIRECT]
        yield self._field("direct", f"addrs[0..{NDIRECT - 1}]", _runs(direct) or "-")
        yield self._field("indirect", f"addrs[{NDIRECT}]",
                          f"{single}: {_count(len(through))} {_runs(through)}".rstrip()
                          if single else "-")
        yield self._field("doubly", f"addrs[{NDIRECT + 1}]",
                          f"{double}: {_count(len(children), 'indirect block')} "
                          f"{_runs(children)}: {_count(len(far))} {_runs(far)}".rstrip()
                          if double else "-")
        if ino.is_dir:
            used = [e for e in self.img.entries(ino, strict=False) if e.inum]
            yield self._field("entries", str(len(used)), "inum  name")
            for e in used:
                yield Text(f"{'':<26}{e.inum:<6}{e.name}")
