"""Page-table views: the whole tree of one satp, and one translation step by step.

    PageTableTree(read_page_table(memory, satp, xlen))
    WalkView(walk(memory, satp, va, Access.READ, context, xlen))

The tree shows each table page and each valid entry, with runs of leaves that map
consecutive virtual pages with the same flags folded into one line; a leaf with W but
not R is marked reserved (the hart faults on every access through it), and one the
kernel shares copy-on-write (PTE_COW, an RSW bit) is marked cow. The walk shows
VPN[i], the PTE's address and value, and its flags at every level, and names the
exact check that stopped a walk that faults.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ..abi.csr import cause_name
from ..abi.paging import PTE_COW
from ..kernelinfo.symbols import Location
from ..mmu.address import PAGE_SIZE, PhysAddr
from ..mmu.scheme import FLAG_ORDER, PagingScheme, Pte, PteFlag, SatpValue
from ..mmu.tree import Mapping, PageTable, TableEntry, TableNode, merge
from ..mmu.walk import FaultKind, Walk
from ..theme import priv_style

__all__ = ["PageTableTree", "WalkView", "flags_text", "satp_text"]

Symbolize = Callable[[int], Location]
_OFFENDING: dict[FaultKind, str] = {
    FaultKind.INVALID: "V", FaultKind.NOT_USER: "U", FaultKind.USER_PAGE_FROM_S: "U",
    FaultKind.EXEC_USER_PAGE_FROM_S: "U", FaultKind.NOT_READABLE: "R",
    FaultKind.NOT_WRITABLE: "W", FaultKind.NOT_EXECUTABLE: "X",
    FaultKind.WRITE_WITHOUT_READ: "W",
}


def _reserved(pte: Pte) -> bool:
    """W without R: an encoding spec 4.3.1 reserves; the walk faults on any access."""
    return bool(pte.raw & PteFlag.W) and not pte.raw & PteFlag.R


def _cow(pte: Pte) -> bool:
    """The kernel's copy-on-write mark (harness/abi/paging.py): the hart ignores it."""
    return bool(pte.raw & PTE_COW)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def flags_text(pte: Pte, offending: str | None = None) -> Text:
    """`rwxugad` with set flags bold, clear ones as dim dashes, the offending one red."""
    t = Text()
    for c in FLAG_ORDER:
        on = bool(pte.raw & PteFlag[c])
        style = "fault" if c == offending else ("flag.set" if on else "flag.clear")
        t.append(c.lower() if on else "-", style)
    return t


def satp_text(sv: SatpValue) -> Text:
    t = Text()
    t.append(f"satp {sv.raw:#x}", "addr")
    t.append(f"  {sv.mode_name}  ASID {sv.asid}  root table {int(sv.ppn.addr):#x}")
    return t


def _va(scheme: PagingScheme, va: int) -> str:
    return f"{va:#0{scheme.va_bits // 4 + 3}x}" if scheme.xlen == 64 else f"{va:#010x}"


@dataclass
class _Group:
    """Entries of one table shown as one line: leaves, or fully mapped sub-tables."""

    first: int
    last: int
    mapping: Mapping
    tables: int = 0            # sub-tables folded into the line
    entry: TableEntry | None = None   # a sub-table shown expanded


def _groups(node: TableNode) -> list[_Group]:
    out: list[_Group] = []
    for e in node.entries:
        m: Mapping | None = None
        tables = 0
        if e.pte.leaf:
            m = merge([Mapping(e.va, PhysAddr(int(e.pte.ppn.addr)), node.span, e.pte,
                               node.level, 1,
                               "identity" if int(e.pte.ppn.addr) == int(e.va)
                               else "contiguous")])[0]
        elif e.child is not None:
            m = e.child.uniform()
            tables = 1
        if m is None:
            out.append(_Group(e.index, e.index, Mapping(e.va, PhysAddr(0), node.span, e.pte,
                                                        node.level), entry=e))
            continue
        last = out[-1] if out else None
        if last is not None and last.entry is None and last.last == e.index - 1 \
                and bool(last.tables) == bool(tables):
            joined = merge([last.mapping, m])
            if len(joined) == 1:
                out[-1] = _Group(last.first, e.index, joined[0], last.tables + tables)
                continue
        out.append(_Group(e.index, e.index, m, tables))
    return out


class PageTableTree:
    """A whole page table as a tree. Consecutive leaves with the same flags fold into
    one line, as do sub-tables that each map all they cover the same way; a table
    with more than `max_lines` lines shows its first and last ones."""

    def __init__(self, table: PageTable, symbolize: Symbolize | None = None,
                 title: str | None = None, max_lines: int | None = 16) -> None:
        self.table = table
        self.symbolize = symbolize
        self.title = title
        self.max_lines = max_lines

    def _range(self, g: _Group) -> Text:
        s = self.table.scheme
        m = g.mapping
        idx = f"[{g.first}]" if g.first == g.last else f"[{g.first}-{g.last}]"
        widest = len(f"[{s.entries - 2}-{s.entries - 1}]")   # Sv39: 9 characters, Sv32: 11
        t = Text()
        t.append(f"{idx:<{widest + 1}}", "muted")
        t.append(f"{_va(s, int(m.va))}-{_va(s, m.end - 1)}  ")
        return t

    def _leaf(self, g: _Group) -> Text:
        m = g.mapping
        t = self._range(g)
        t.append_text(flags_text(m.pte, "W" if _reserved(m.pte) else None))
        t.append(f"  {_size(m.size):>8}  ", "muted")
        if m.frames == "identity":
            t.append("identity", "muted")
        elif m.frames == "contiguous":
            t.append(f"pa {int(m.pa):#x}", "addr")
            if m.count > 1:
                t.append(f"-{int(m.pa) + m.size - 1:#x}", "addr")
        else:
            t.append(f"pa {int(m.pa):#x}…", "addr")
            t.append(" scattered", "muted")
        if g.tables:
            t.append(f"  ({g.tables} level-{m.level} table{'s' if g.tables > 1 else ''})",
                     "muted")
        if _reserved(m.pte):
            t.append("  reserved", "fault")
        if _cow(m.pte):
            t.append("  cow", "muted")
        if self.symbolize is not None:
            loc = self.symbolize(int(m.va))
            if loc.symbol is not None:
                t.append(f"  {loc.name}", "symbol")
        return t

    def _node(self, tree: Tree, node: TableNode) -> None:
        groups = _groups(node)
        limit = self.max_lines
        if limit is not None and len(groups) > limit:
            head, tail = groups[:limit - 4], groups[-3:]
            hidden = len(groups) - len(head) - len(tail)
            shown: list[_Group | int] = [*head, hidden, *tail]
        else:
            shown = list(groups)
        for g in shown:
            if isinstance(g, int):
                tree.add(Text(f"... {g} more lines (--full shows every one)", "muted"))
            elif g.entry is None:
                tree.add(self._leaf(g))
            else:
                e = g.entry
                label = self._range(g)
                if e.child is None:
                    label.append("table not in RAM" if e.unreadable else "(no next level)",
                                 "fault")
                    tree.add(label)
                    continue
                label.append(f"→ level {node.level - 1} table {int(e.child.table):#x}", "muted")
                self._node(tree.add(label), e.child)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.title:
            yield Text(self.title, "heading")
        tree = Tree(satp_text(self.table.satp), guide_style="muted")
        self._node(tree, self.table.root)
        yield tree
        ms = self.table.mappings()
        foot = Text()
        leaves = sum(m.count for m in ms)
        foot.append(f"{leaves} leaf PTE{'' if leaves == 1 else 's'} in {len(ms)} "
                    f"range{'' if len(ms) == 1 else 's'} map "
                    f"{_size(sum(m.size for m in ms))}; flags r w x u g a d, - = clear",
                    "muted")
        if any(_reserved(m.pte) for m in ms):
            foot.append("\nreserved: W without R, an encoding the spec reserves; any access "
                        "through it page-faults", "fault")
        if any(_cow(m.pte) for m in ms):
            foot.append("\ncow: shared by fork, copy-on-write (PTE_COW, a software bit): the "
                        "first store page-faults and the kernel copies the page", "muted")
        if self.table.truncated:
            foot.append("  (truncated: too many entries)", "fault")
        yield foot


class WalkView:
    """One translation, level by level, ending in a physical address or a fault."""

    def __init__(self, walk: Walk, symbolize: Symbolize | None = None) -> None:
        self.walk = walk
        self.symbolize = symbolize

    def _title(self) -> Text:
        w = self.walk
        t = Text()
        t.append("translate ", "heading")
        t.append(f"{int(w.va):#x}", "addr")
        kind = {"r": "load", "w": "store", "x": "fetch"}[w.access.value]
        t.append(f"  {kind} from ")
        t.append(f"{w.context.priv.letter}-mode", priv_style(w.context.priv))
        t.append(f"  SUM={int(w.context.sum)} MXR={int(w.context.mxr)}\n", "muted")
        t.append_text(satp_text(w.satp))
        return t

    def _split(self, s: PagingScheme) -> Text:
        va = int(self.walk.va)
        parts = [f"VPN[{lv}]={s.vpn(va, lv)}" for lv in range(s.levels - 1, -1, -1)]
        return Text("  ".join(parts) + f"  offset={va & (PAGE_SIZE - 1):#x}", "muted")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        w = self.walk
        yield self._title()
        s = w.satp.scheme
        if s is None:
            yield Text(f"no translation ({w.satp.mode_name} or M-mode): pa = va = "
                       f"{int(w.va):#x}")
            return
        yield self._split(s)
        table = Table(box=None, padding=(0, 1), header_style="muted")
        for col in ("level", "index", "PTE address", "PTE", "rwxugad", "meaning"):
            table.add_column(col, no_wrap=col != "meaning")
        for i, step in enumerate(w.steps):
            last = i == len(w.steps) - 1
            fault = w.fault if last else None
            pte = step.pte
            meaning = Text()
            if pte is None:
                meaning.append("cannot read the PTE", "fault")
            elif fault is not None:
                meaning.append(fault.kind.value, "fault")
            elif pte.leaf:
                meaning.append(f"leaf: {s.level_size(step.level) // 1024} KiB page at "
                               f"{int(pte.ppn.addr):#x}", "ok")
            else:
                meaning.append(f"next table at {int(pte.ppn.addr):#x}")
            table.add_row(
                str(step.level), f"VPN[{step.level}]={step.index}", f"{int(step.pte_addr):#x}",
                f"{pte.raw:#x}" if pte else "-",
                flags_text(pte, _OFFENDING.get(fault.kind) if fault else None) if pte else Text(),
                meaning)
        yield table
        yield self._result()

    def _result(self) -> Text:
        w = self.walk
        t = Text()
        if w.fault is not None:
            t.append("✗ ", "fault")
            t.append(f"{cause_name(False, int(w.fault.cause))} (cause {int(w.fault.cause)}): "
                     f"{w.fault.message}", "fault")
            return t
        assert w.pa is not None
        t.append("✓ ", "ok")
        t.append(f"pa {int(w.pa):#x}", "addr")
        if self.symbolize is not None:
            loc = self.symbolize(int(w.va))
            if loc.symbol is not None:
                t.append(f"  {loc}", "symbol")
        for note in w.notes:
            t.append(f"  ({note})", "muted")
        return t
