"""Page-table entries and satp values as the walker and the inspectors read them.

The paging schemes themselves (Sv39, Sv32: levels, index widths, PTE bits) are facts
the kernel shares, defined in harness/abi/paging.py; satp's own fields (MODE, ASID,
PPN) come from privlab/abi/csr.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..abi.csr import Csr, csr_fields
from ..abi.paging import (
    ALL_SCHEMES,
    FLAG_ORDER,
    LEAF_BITS,
    PTE_FIELDS,
    PTE_FLAG_MASK,
    PTE_PPN_SHIFT,
    SCHEMES,
    SV32,
    SV39,
    PagingScheme,
    PteFlag,
)
from .address import PPN

__all__ = [
    "FLAG_ORDER",
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


@dataclass(frozen=True)
class Pte:
    """A decoded page-table entry."""

    raw: int
    scheme: PagingScheme

    @property
    def flags(self) -> PteFlag:
        return PteFlag(self.raw & PTE_FLAG_MASK)

    @property
    def ppn(self) -> PPN:
        return PPN((self.raw >> PTE_PPN_SHIFT) & ((1 << self.scheme.ppn_bits) - 1))

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
    """satp split into its fields (names and positions from privlab/abi/csr.py)."""

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
    scheme = next((s for s in ALL_SCHEMES if s.xlen == xlen and s.satp_mode == mode), None)
    return SatpValue(satp, mode, fields["ASID"].extract(satp, xlen),
                     PPN(fields["PPN"].extract(satp, xlen)), scheme)
