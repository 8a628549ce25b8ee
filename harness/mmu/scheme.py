"""Paging schemes as data: Sv39 (RV64) and Sv32 (RV32), and the page-table entry.

Everything the walker, the tree and the inspectors need to know about a scheme is
here, after the RISC-V privileged specification v1.12, sections 4.3 (Sv32) and 4.4
(Sv39). satp's own fields (MODE, ASID, PPN) come from harness/csr.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag

from harness.csr import Csr, Field, csr_fields
from harness.mmu.address import PAGE_SHIFT, PPN

__all__ = [
    "PTE_FIELDS",
    "SCHEMES",
    "SV32",
    "SV39",
    "PagingScheme",
    "Pte",
    "PteFlag",
    "SatpValue",
    "decode_satp",
]


class PteFlag(IntFlag):
    """The low eight bits of every PTE (spec figure 4.18/4.21)."""

    V = 1 << 0
    R = 1 << 1
    W = 1 << 2
    X = 1 << 3
    U = 1 << 4
    G = 1 << 5
    A = 1 << 6
    D = 1 << 7


PTE_FIELDS: tuple[Field, ...] = (
    Field("V", 0, doc="valid"),
    Field("R", 1, doc="readable"),
    Field("W", 2, doc="writable"),
    Field("X", 3, doc="executable"),
    Field("U", 4, doc="accessible to U-mode"),
    Field("G", 5, doc="global mapping (all address spaces)"),
    Field("A", 6, doc="accessed"),
    Field("D", 7, doc="dirty"),
    Field("RSW", 8, 2, doc="reserved for software"),
)

FLAG_ORDER = "RWXUGAD"  # how flags are spelled out: r-xu-ad
LEAF_BITS = PteFlag.R | PteFlag.W | PteFlag.X


@dataclass(frozen=True)
class PagingScheme:
    """One translation scheme: `levels` page-table levels of 2**vpn_bits entries."""

    name: str
    xlen: int
    satp_mode: int
    levels: int
    vpn_bits: int
    pte_size: int
    va_bits: int
    ppn_bits: int           # width of the PPN field of a PTE (from bit 10)
    reserved_mask: int      # PTE bits that must be zero (Svnapot/Svpbmt not implemented)

    @property
    def entries(self) -> int:
        return 1 << self.vpn_bits

    def vpn(self, va: int, level: int) -> int:
        """VPN[level] of a virtual address."""
        return (va >> (PAGE_SHIFT + level * self.vpn_bits)) & (self.entries - 1)

    def level_size(self, level: int) -> int:
        """Bytes mapped by one leaf at `level`: 4 KiB at 0, 2 MiB/4 MiB at 1, ..."""
        return 1 << (PAGE_SHIFT + level * self.vpn_bits)

    def canonical(self, va: int) -> bool:
        """Sv39 requires bits 63..39 to equal bit 38; Sv32 uses all 32 bits."""
        if self.va_bits >= self.xlen:
            return 0 <= va < (1 << self.xlen)
        top = va >> (self.va_bits - 1)
        return top in (0, (1 << (self.xlen - self.va_bits + 1)) - 1)

    def sign_extend(self, va: int) -> int:
        """The canonical form of a VA whose bits above va_bits are zero."""
        if self.va_bits < self.xlen and va >> (self.va_bits - 1) & 1:
            return va | (((1 << self.xlen) - 1) ^ ((1 << self.va_bits) - 1))
        return va


SV39 = PagingScheme("Sv39", 64, 8, 3, 9, 8, 39, 44, ((1 << 64) - 1) ^ ((1 << 54) - 1))
SV32 = PagingScheme("Sv32", 32, 1, 2, 10, 4, 32, 22, 0)
SCHEMES: dict[int, PagingScheme] = {64: SV39, 32: SV32}


@dataclass(frozen=True)
class Pte:
    """A decoded page-table entry."""

    raw: int
    scheme: PagingScheme

    @property
    def flags(self) -> PteFlag:
        return PteFlag(self.raw & 0xFF)

    @property
    def ppn(self) -> PPN:
        return PPN((self.raw >> 10) & ((1 << self.scheme.ppn_bits) - 1))

    @property
    def valid(self) -> bool:
        return bool(self.raw & PteFlag.V)

    @property
    def leaf(self) -> bool:
        return bool(self.raw & LEAF_BITS)

    @property
    def reserved(self) -> int:
        return self.raw & self.scheme.reserved_mask

    def spelled(self) -> str:
        """Flags as `rwxugad` letters, a dash for each clear bit (V is implied)."""
        return "".join(c.lower() if self.raw & PteFlag[c] else "-" for c in FLAG_ORDER)


@dataclass(frozen=True)
class SatpValue:
    """satp split into its fields (names and positions from harness/csr.py)."""

    raw: int
    mode: int
    asid: int
    ppn: PPN
    scheme: PagingScheme | None   # None: Bare, or a mode privlab does not implement

    @property
    def mode_name(self) -> str:
        if self.scheme is not None:
            return self.scheme.name
        return "Bare" if self.mode == 0 else f"mode {self.mode}"


def decode_satp(satp: int, xlen: int) -> SatpValue:
    fields = {f.name: f for f in csr_fields(Csr.SATP, xlen)}
    mode = fields["MODE"].extract(satp, xlen)
    scheme = SCHEMES[xlen] if mode == SCHEMES[xlen].satp_mode else None
    return SatpValue(satp, mode, fields["ASID"].extract(satp, xlen),
                     PPN(fields["PPN"].extract(satp, xlen)), scheme)
