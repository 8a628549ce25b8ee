"""The page-table walk, step by step, as the hardware does it (spec 4.3.2).

`walk()` reads page-table entries from guest physical memory and returns a `Walk`: a
record of every level (VPN[i], the PTE's address, its value) and either the physical
address or the `Fault` that stopped it, as a value. The inspector shows exactly which
bit ended the walk; tests compare the outcome with the hart's own translation.

Like QEMU 7.2, hardware sets A and D rather than faulting, and every PTE bit reserved
for future use (bits 63..54 on Sv39: no Svnapot or Svpbmt) faults.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from ..abi.csr import Csr, Exc, Priv, csr_fields
from ..errors import GuestError
from .address import PAGE_SHIFT, PAGE_SIZE, PhysAddr, VirtAddr
from .scheme import PagingScheme, Pte, PteFlag, SatpValue, decode_satp

__all__ = [
    "Access",
    "Fault",
    "FaultKind",
    "PhysicalMemory",
    "TranslationContext",
    "Walk",
    "WalkStep",
    "context_from_status",
    "read_pte",
    "read_table",
    "walk",
]


class PhysicalMemory(Protocol):
    """Anything that reads guest physical memory (privlab.machine.Memory does); it
    raises GuestError for an address that is not RAM."""

    def read(self, paddr: int, size: int) -> bytes: ...


class Access(Enum):
    READ = "r"
    WRITE = "w"
    EXECUTE = "x"

    @property
    def page_fault(self) -> Exc:
        return {"r": Exc.LOAD_PAGE_FAULT, "w": Exc.STORE_PAGE_FAULT,
                "x": Exc.EXEC_PAGE_FAULT}[self.value]

    @property
    def access_fault(self) -> Exc:
        return {"r": Exc.FAULT_LOAD, "w": Exc.FAULT_STORE,
                "x": Exc.FAULT_FETCH}[self.value]


class FaultKind(Enum):
    NOT_CANONICAL = "virtual address is not canonical"
    PTE_NOT_RAM = "the PTE's address is not RAM (access fault)"
    INVALID = "PTE not valid (V=0)"
    WRITE_WITHOUT_READ = "reserved encoding W=1 with R=0"
    RESERVED_BITS = "reserved PTE bits are set"
    NONLEAF_RESERVED = "A, D or U set in a non-leaf PTE (reserved)"
    NO_LEAF = "non-leaf PTE at level 0"
    NOT_USER = "U-mode access to a page without U"
    USER_PAGE_FROM_S = "S-mode access to a U page with sstatus.SUM=0"
    EXEC_USER_PAGE_FROM_S = "S-mode never executes from a U page"
    NOT_READABLE = "load from a page without R (and not X with MXR)"
    NOT_WRITABLE = "store to a page without W"
    NOT_EXECUTABLE = "fetch from a page without X"
    MISALIGNED_SUPERPAGE = "superpage PTE with nonzero low PPN bits"


@dataclass(frozen=True)
class Fault:
    """Why a page-table walk failed, and the page-fault cause it raises."""
    kind: FaultKind
    level: int | None
    cause: Exc

    @property
    def message(self) -> str:
        where = f"level {self.level}: " if self.level is not None else ""
        return f"{where}{self.kind.value}"


@dataclass(frozen=True)
class TranslationContext:
    """The privilege a data access or fetch is checked at, and sstatus.SUM/MXR."""

    priv: Priv
    sum: bool = False
    mxr: bool = False


def context_from_status(priv: Priv, mstatus: int, access: Access,
                        xlen: int) -> TranslationContext:
    """The effective context: M-mode loads and stores with MPRV=1 use MPP (spec 3.1.6.3)."""
    f = {x.name: x for x in csr_fields(Csr.MSTATUS, xlen)}
    eff = priv
    if priv == Priv.M and access != Access.EXECUTE and f["MPRV"].extract(mstatus, xlen):
        eff = Priv(f["MPP"].extract(mstatus, xlen))
    return TranslationContext(eff, bool(f["SUM"].extract(mstatus, xlen)),
                              bool(f["MXR"].extract(mstatus, xlen)))


@dataclass(frozen=True)
class WalkStep:
    """One level of a page-table walk: the table read and the PTE found."""
    level: int
    index: int               # VPN[level]
    table: PhysAddr          # the page table read at this level
    pte_addr: PhysAddr
    pte: Pte | None          # None when the PTE could not be read


@dataclass(frozen=True)
class Walk:
    """A whole translation of a virtual address: each level's step, and the physical
    address or the fault."""
    va: VirtAddr
    access: Access
    context: TranslationContext
    satp: SatpValue
    steps: tuple[WalkStep, ...]
    pa: PhysAddr | None
    fault: Fault | None
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.fault is None

    @property
    def leaf(self) -> WalkStep | None:
        last = self.steps[-1] if self.steps else None
        return last if self.ok and last is not None else None

    @property
    def page_size(self) -> int:
        if self.leaf is None or self.satp.scheme is None:
            return PAGE_SIZE
        return self.satp.scheme.level_size(self.leaf.level)


def read_pte(memory: PhysicalMemory, scheme: PagingScheme, addr: int) -> Pte | None:
    try:
        data = memory.read(addr, scheme.pte_size)
    except GuestError:
        return None
    return Pte(int.from_bytes(data, "little"), scheme)


def _leaf_fault(pte: Pte, access: Access, ctx: TranslationContext) -> FaultKind | None:
    fl = pte.flags
    if ctx.priv == Priv.U and not fl & PteFlag.U:
        return FaultKind.NOT_USER
    if ctx.priv == Priv.S and fl & PteFlag.U:
        if access == Access.EXECUTE:
            return FaultKind.EXEC_USER_PAGE_FROM_S
        if not ctx.sum:
            return FaultKind.USER_PAGE_FROM_S
    if access == Access.READ and not (fl & PteFlag.R or (ctx.mxr and fl & PteFlag.X)):
        return FaultKind.NOT_READABLE
    if access == Access.WRITE and not fl & PteFlag.W:
        return FaultKind.NOT_WRITABLE
    if access == Access.EXECUTE and not fl & PteFlag.X:
        return FaultKind.NOT_EXECUTABLE
    return None


def walk(memory: PhysicalMemory, satp: int, va: int, access: Access = Access.READ,
         context: TranslationContext | None = None, xlen: int = 64) -> Walk:
    """Translate `va` under `satp` for `access` at `context` (default: S-mode)."""
    ctx = context or TranslationContext(Priv.S)
    sv = decode_satp(satp, xlen)
    vaddr = VirtAddr(va)
    scheme = sv.scheme

    def done(steps: list[WalkStep], pa: int | None, kind: FaultKind | None = None,
             level: int | None = None, cause: Exc | None = None,
             notes: tuple[str, ...] = ()) -> Walk:
        fault = Fault(kind, level, cause or access.page_fault) if kind else None
        return Walk(vaddr, access, ctx, sv, tuple(steps),
                    PhysAddr(pa) if pa is not None else None, fault, notes)

    if scheme is None or ctx.priv == Priv.M:
        return done([], va)  # Bare, or M-mode: no translation
    if not scheme.canonical(va):
        return done([], None, FaultKind.NOT_CANONICAL)
    steps: list[WalkStep] = []
    table = int(sv.ppn) << PAGE_SHIFT
    for level in range(scheme.levels - 1, -1, -1):
        index = scheme.vpn(va, level)
        addr = table + index * scheme.pte_size
        pte = read_pte(memory, scheme, addr)
        steps.append(WalkStep(level, index, PhysAddr(table), PhysAddr(addr), pte))
        if pte is None:
            return done(steps, None, FaultKind.PTE_NOT_RAM, level, access.access_fault)
        fl = pte.flags
        if not fl & PteFlag.V:
            return done(steps, None, FaultKind.INVALID, level)
        if fl & PteFlag.W and not fl & PteFlag.R:
            return done(steps, None, FaultKind.WRITE_WITHOUT_READ, level)
        if pte.reserved:
            return done(steps, None, FaultKind.RESERVED_BITS, level)
        if not pte.leaf:
            if fl & (PteFlag.A | PteFlag.D | PteFlag.U):
                return done(steps, None, FaultKind.NONLEAF_RESERVED, level)
            if level == 0:
                return done(steps, None, FaultKind.NO_LEAF, level)
            table = int(pte.ppn) << PAGE_SHIFT
            continue
        kind = _leaf_fault(pte, access, ctx)
        if kind is not None:
            return done(steps, None, kind, level)
        low = (1 << (level * scheme.vpn_bits)) - 1   # PPN bits a superpage takes from the VA
        if int(pte.ppn) & low:
            return done(steps, None, FaultKind.MISALIGNED_SUPERPAGE, level)
        notes: tuple[str, ...] = ()
        if not fl & PteFlag.A or (access == Access.WRITE and not fl & PteFlag.D):
            notes = ("the hardware sets A" + ("/D" if access == Access.WRITE else "")
                     + " in this PTE",)
        offset = va & (scheme.level_size(level) - 1)
        pa = ((int(pte.ppn) & ~low) << PAGE_SHIFT) | offset
        return done(steps, pa, notes=notes)
    raise AssertionError("unreachable: level 0 returns")  # pragma: no cover


def read_table(memory: PhysicalMemory, scheme: PagingScheme, table: int) -> tuple[int, ...]:
    """All entries of one page-table page, as raw integers."""
    data = memory.read(table, PAGE_SIZE)
    fmt = f"<{scheme.entries}{'Q' if scheme.pte_size == 8 else 'I'}"
    return struct.unpack(fmt, data)
