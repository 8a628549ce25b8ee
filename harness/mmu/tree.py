"""A whole page table read from guest memory: the tree, its leaves, merged ranges.

`read_page_table(memory, satp, xlen)` visits every valid entry from the root (the
hardware never does this; the kernel's vmprint() does) and keeps the structure so
the inspector can draw it level by level. Leaves that map consecutive virtual pages
with the same flags merge into one `Mapping`, whose frames may be contiguous, the
identity, or scattered (a user stack's frames usually are).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import GuestError
from .address import PAGE_SHIFT, PhysAddr, VirtAddr
from .scheme import PagingScheme, Pte, SatpValue, decode_satp
from .walk import PhysicalMemory, read_table

__all__ = ["Mapping", "PageTable", "TableEntry", "TableNode", "merge", "read_page_table"]

MAX_ENTRIES = 1 << 16  # a corrupt table could name the same pages again and again
FLAG_BITS = 0x3FF      # flags and RSW: what must match for leaves to merge


@dataclass(frozen=True)
class Mapping:
    """`size` bytes at `va` with the flags of `pte`; frames start at `pa`."""

    va: VirtAddr
    pa: PhysAddr
    size: int
    pte: Pte          # the first leaf
    level: int        # level of the first leaf (0: 4 KiB pages)
    count: int = 1    # leaves merged
    frames: str = "contiguous"   # contiguous | identity | scattered

    @property
    def end(self) -> int:
        return int(self.va) + self.size

    def contains(self, va: int) -> bool:
        return int(self.va) <= va < self.end


def _single(va: int, pte: Pte, level: int, size: int) -> Mapping:
    pa = int(pte.ppn) << PAGE_SHIFT
    return Mapping(VirtAddr(va), PhysAddr(pa), size, pte, level, 1,
                   "identity" if pa == va else "contiguous")


def merge(parts: Iterator[Mapping] | list[Mapping]) -> list[Mapping]:
    """Join consecutive mappings with the same flags; keep track of the frames."""
    out: list[Mapping] = []
    for m in parts:
        last = out[-1] if out else None
        if last is None or last.end != int(m.va) or \
                (last.pte.raw & FLAG_BITS) != (m.pte.raw & FLAG_BITS):
            out.append(m)
            continue
        if last.frames == m.frames == "identity":
            frames = "identity"
        elif last.frames != "scattered" and m.frames != "scattered" \
                and int(last.pa) + last.size == int(m.pa):
            frames = "contiguous"
        else:
            frames = "scattered"
        out[-1] = Mapping(last.va, last.pa, last.size + m.size, last.pte, last.level,
                          last.count + m.count, frames)
    return out


@dataclass
class TableEntry:
    """A valid entry of a page table, with the table below it for a non-leaf."""
    index: int
    pte: Pte
    va: VirtAddr
    child: TableNode | None = None     # the next level, for a valid non-leaf entry
    unreadable: bool = False           # a non-leaf pointing outside RAM


@dataclass
class TableNode:
    """One page-table page, at one level, and its valid entries."""
    level: int
    table: PhysAddr
    span: int                          # bytes one entry of this table covers
    slots: int                         # entries per table page (512 Sv39, 1024 Sv32)
    entries: list[TableEntry] = field(default_factory=list)

    def mappings(self) -> list[Mapping]:
        """Every leaf under this table, merged."""
        def leaves() -> Iterator[Mapping]:
            for e in self.entries:
                if e.child is not None:
                    yield from e.child.mappings()
                elif e.pte.leaf:
                    yield _single(int(e.va), e.pte, self.level, self.span)
        return merge(leaves())

    def uniform(self) -> Mapping | None:
        """The one range this table maps, if it maps all it covers with one flag set."""
        ms = self.mappings()
        return ms[0] if len(ms) == 1 and ms[0].size == self.span * self.slots else None


@dataclass
class PageTable:
    """A whole page-table tree read from guest memory, from the root satp names."""
    satp: SatpValue
    scheme: PagingScheme
    root: TableNode
    truncated: bool = False

    def mappings(self) -> list[Mapping]:
        """Every leaf, merged into ranges (consecutive addresses, identical flags)."""
        return self.root.mappings()

    def leaf_count(self) -> int:
        return sum(m.count for m in self.mappings())

    def find(self, va: int) -> Mapping | None:
        return next((m for m in self.mappings() if m.contains(va)), None)


def read_page_table(memory: PhysicalMemory, satp: int, xlen: int) -> PageTable:
    """Read the tree under `satp`. GuestError if satp is Bare or its root is not RAM."""
    sv = decode_satp(satp, xlen)
    if sv.scheme is None:
        raise GuestError(f"satp {satp:#x} selects {sv.mode_name}: no page table")
    scheme = sv.scheme
    budget = [MAX_ENTRIES]

    def node(level: int, table: int, base: int) -> TableNode:
        shift = PAGE_SHIFT + level * scheme.vpn_bits
        out = TableNode(level, PhysAddr(table), 1 << shift, scheme.entries)
        for index, raw in enumerate(read_table(memory, scheme, table)):
            if not raw & 1:
                continue
            if budget[0] <= 0:
                break
            budget[0] -= 1
            pte = Pte(raw, scheme)
            va = base | (index << shift)
            entry = TableEntry(index, pte, VirtAddr(scheme.sign_extend(va)))
            if not pte.leaf and level > 0:
                try:
                    entry.child = node(level - 1, int(pte.ppn) << PAGE_SHIFT, va)
                except GuestError:
                    entry.unreadable = True
            out.entries.append(entry)
        return out

    root = node(scheme.levels - 1, int(sv.ppn) << PAGE_SHIFT, 0)
    return PageTable(sv, scheme, root, truncated=budget[0] <= 0)
