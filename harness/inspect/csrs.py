"""The CSR view: every field of the trap-related CSRs, named, with changes marked.

    CsrPanel(snapshot, previous=earlier_snapshot, symbolize=info.symbolize)

Each CSR is one row: its name, its value, and its fields decoded (privilege levels
by letter, cause names, trap vectors and pcs as symbol+offset and file:line). Given
a `previous` snapshot, CSRs and fields that differ are highlighted and show their
old value, so a student sees exactly what taking a trap changed.

The CSRs of the level the hart is in come first: at an M-mode trap (an SBI call,
the machine timer) the machine CSRs lead, elsewhere the supervisor CSRs do.
`machine=False` or `supervisor=False` leaves one level out.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from ..abi.csr import Csr, Exc, Field, Priv, decode_cause
from ..kernelinfo.symbols import Location
from ..mmu.scheme import decode_satp
from ..theme import priv_style
from .state import MACHINE_CSRS, SUPERVISOR_CSRS, CsrSnapshot, CsrValue

__all__ = ["CsrPanel", "Symbolize"]

Symbolize = Callable[[int], Location]

_STATUS = (Csr.MSTATUS, Csr.SSTATUS)
_BITS = (Csr.MIE, Csr.MIP, Csr.SIE, Csr.SIP, Csr.MIDELEG)
_EXT_STATE = ("Off", "Initial", "Clean", "Dirty")
_XL = {1: "32", 2: "64", 3: "128"}
_PAGE_FAULTS = (Exc.EXEC_PAGE_FAULT, Exc.LOAD_PAGE_FAULT, Exc.STORE_PAGE_FAULT)


def _field_text(f: Field, v: int) -> str:
    if f.name in ("SPP", "MPP"):
        return Priv(v).letter if v in (0, 1, 3) else str(v)
    if f.name in ("FS", "VS", "XS"):
        return _EXT_STATE[v]
    if f.name in ("UXL", "SXL"):
        return _XL.get(v, str(v))
    return str(v)


class CsrPanel:
    """The trap CSRs of one snapshot; `previous` marks what changed since then."""

    def __init__(self, snapshot: CsrSnapshot, previous: CsrSnapshot | None = None,
                 symbolize: Symbolize | None = None, title: str | None = None,
                 machine: bool = True, supervisor: bool = True,
                 only: tuple[Csr, ...] | None = None, head: bool = True) -> None:
        """`head=False` leaves out the first line (level, pc, what changed): for a
        view that shows those beside it."""
        self.now = snapshot
        self.head = head
        self.before = previous
        self.symbolize = symbolize
        self.title = title
        self.machine = machine
        self.supervisor = supervisor
        self.only = only

    def levels(self) -> tuple[tuple[tuple[Csr, ...], str], ...]:
        """The CSR groups shown, in order: the hart's own level first."""
        sup, mach = ((tuple(c for c in csrs if self.only is None or c in self.only), heading)
                     for csrs, heading in ((SUPERVISOR_CSRS, "Supervisor"),
                                           (MACHINE_CSRS, "Machine")))
        groups = (sup,) if self.supervisor else ()
        if self.machine:
            groups = (mach, *groups) if self.now.priv is Priv.M else (*groups, mach)
        return tuple(g for g in groups if g[0])

    def _old(self, csr: Csr) -> CsrValue | None:
        if self.before is None:
            return None
        old = self.before.get(csr)
        return old if old is not None and old.value != self.now[csr].value else None

    def _where(self, addr: int) -> Text:
        t = Text()
        if self.symbolize is not None and addr:
            loc = self.symbolize(addr)
            if loc.symbol is not None:
                t.append(loc.name, "symbol")
                if loc.source:
                    t.append(f" {loc.source}", "source")
        return t

    def _fields(self, v: CsrValue, old: CsrValue | None) -> Text:
        t = Text()
        before = dict((f.name, x) for f, x in old.fields) if old else {}
        for f, x in v.fields:
            if t:
                t.append("  ")
            if f.name in before and before[f.name] != x:
                t.append(f"{f.name}={_field_text(f, before[f.name])}→{_field_text(f, x)}",
                         "changed")
            else:
                t.append(f"{f.name}={_field_text(f, x)}", "field.set" if x else "field.clear")
        return t

    def _delegated(self, v: CsrValue, old: CsrValue | None) -> Text:
        names = [f.name for f, x in v.fields if x]
        t = Text()
        t.append("delegated to S: " if names else "nothing delegated", "muted")
        t.append(", ".join(names))
        if old is not None:
            t.append(f"  (was {old.value:#x})", "changed")
        return t

    def _cause(self, v: CsrValue) -> Text:
        irq, code = decode_cause(v.value, v.xlen)
        t = Text()
        t.append(v.cause or "", "trap.interrupt" if irq else "trap.exception")
        t.append(f"  ({'interrupt' if irq else 'exception'} {code})", "muted")
        return t

    def _tval(self, v: CsrValue, cause: CsrValue | None) -> Text:
        if cause is None or v.value == 0:
            return Text("0", "muted")
        irq, code = decode_cause(cause.value, cause.xlen)
        if not irq and code in _PAGE_FAULTS:
            return Text("the faulting virtual address", "muted")
        if not irq and code == Exc.ILLEGAL_INSTRUCTION:
            return Text("the illegal instruction's bits", "muted")
        return Text("")

    def _decode(self, v: CsrValue, old: CsrValue | None) -> Text:
        c = v.csr
        if c in _STATUS or c in _BITS:
            return self._fields(v, old)
        if c == Csr.MEDELEG:
            return self._delegated(v, old)
        if c in (Csr.MCAUSE, Csr.SCAUSE):
            return self._cause(v)
        if c in (Csr.MTVEC, Csr.STVEC):
            base = v.field("BASE") << 2
            t = Text(f"BASE={base:#x} MODE={'vectored' if v.field('MODE') == 1 else 'direct'} ")
            return t.append_text(self._where(base))
        if c == Csr.SATP:
            sv = decode_satp(v.value, v.xlen)
            t = Text(f"MODE={sv.mode_name}  ASID={sv.asid}  PPN={int(sv.ppn):#x}")
            if sv.scheme is not None:
                t.append(f"  root table at {int(sv.ppn.addr):#x}", "muted")
            return t
        if c in (Csr.MTVAL, Csr.STVAL):
            return self._tval(v, self.now.get(Csr.MCAUSE if c == Csr.MTVAL else Csr.SCAUSE))
        return self._where(v.value)

    def _table(self, csrs: tuple[Csr, ...], heading: str) -> Table:
        width = self.now.xlen // 4 + 2
        table = Table(box=None, padding=(0, 1), show_header=False, expand=False,
                      title=Text(heading, "heading"), title_justify="left")
        table.add_column("csr", width=9, no_wrap=True)
        table.add_column("value", width=width, no_wrap=True)
        table.add_column("decoded", ratio=1)
        for csr in csrs:
            v = self.now.get(csr)
            if v is None:
                continue
            old = self._old(csr)
            name = Text(v.name + ("*" if old else ""), "changed" if old else "csr.name")
            value = Text(f"{v.value:#0{width}x}", "changed" if old else "addr")
            decoded = self._decode(v, old)
            if old is not None and csr not in _STATUS + _BITS + (Csr.MEDELEG,):
                decoded.append(f"  (was {old.value:#x})", "changed")
            table.add_row(name, value, decoded)
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.head:
            yield self._head()
        for csrs, heading in self.levels():
            yield self._table(csrs, heading)

    def _head(self) -> Text:
        head = Text()
        if self.title:
            head.append(self.title + "  ", "heading")
        head.append(f"{self.now.priv.letter}-mode", priv_style(self.now.priv))
        if self.before is not None and self.before.priv != self.now.priv:
            head.append(f" (was {self.before.priv.letter}-mode)", "changed")
        head.append(f"  pc {self.now.pc:#x} ")
        head.append_text(self._where(self.now.pc))
        if self.before is not None:
            shown = {c for csrs, _ in self.levels() for c in csrs}
            n = len(self.now.changed(self.before) & shown)
            head.append(f"   {n} changed (*)", "muted")
        return head
