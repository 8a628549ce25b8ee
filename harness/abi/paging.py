"""Paging schemes as data: Sv39 (RV64) and Sv32 (RV32), and the page-table entry.

After the RISC-V privileged specification v1.12, sections 4.3 (Sv32) and 4.4 (Sv39).
The walker (harness/mmu), the inspectors and, through the generated riscv_gen.h
(harness/abi/spec_header.py), the kernel and the native core all read these.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag

from .csr import Field
from .pagesize import PAGE_SHIFT, PAGE_SIZE

__all__ = [
    "ALL_SCHEMES",
    "FLAG_ORDER",
    "KERNEL_PTE_FIELDS",
    "LEAF_BITS",
    "PAGE_SHIFT",
    "PAGE_SIZE",
    "PTE_COW",
    "PTE_FIELDS",
    "PTE_FLAG_MASK",
    "PTE_PPN_SHIFT",
    "SCHEMES",
    "SV32",
    "SV39",
    "SV48",
    "SV57",
    "PagingScheme",
    "PteFlag",
]

PTE_PPN_SHIFT = 10  # a PTE's PPN starts above its ten flag and RSW bits


class PteFlag(IntFlag):
    """The low eight bits of every PTE (spec figures 4.18 and 4.21)."""

    V = 1 << 0
    R = 1 << 1
    W = 1 << 2
    X = 1 << 3
    U = 1 << 4
    G = 1 << 5
    A = 1 << 6
    D = 1 << 7


_FLAG_DOCS = {
    PteFlag.V: "valid",
    PteFlag.R: "readable",
    PteFlag.W: "writable",
    PteFlag.X: "executable",
    PteFlag.U: "accessible to U-mode",
    PteFlag.G: "global mapping (all address spaces)",
    PteFlag.A: "accessed",
    PteFlag.D: "dirty",
}

PTE_FIELDS: tuple[Field, ...] = (
    *(Field(str(flag.name), flag.bit_length() - 1, doc=doc) for flag, doc in _FLAG_DOCS.items()),
    Field("RSW", 8, 2, doc="reserved for software"),
)

PTE_FLAG_MASK = sum(PteFlag)  # the eight flag bits, 0xff

# What privlab's kernel keeps in RSW, the two bits the spec leaves to software (the
# hart ignores them). One definition for the kernel (riscv_gen.h's PTE_COW), the
# inspectors and the graders.
KERNEL_PTE_FIELDS: tuple[Field, ...] = (
    Field("COW", 8, doc="copy-on-write: a page fork shares read-only; the first store "
                        "copies it (kernel/cow.c, labs/cow)"),
)
PTE_COW = KERNEL_PTE_FIELDS[0].mask(64)

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
        """Sv39 requires bits 63..39 to equal bit 38 (Sv48 63..48 bit 47, Sv57 63..57
        bit 56); Sv32 uses all 32 bits."""
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
"""The scheme a kernel of each XLEN is built for (kernel/, the generated headers)."""
# RV64's deeper schemes, which the hart walks as QEMU 7.2 does (satp MODE 9 and 10):
# Sv39's entries one and two levels further up, nine more virtual bits each.
SV48 = PagingScheme("Sv48", 64, 9, 4, 9, 8, 48, 44, SV39.reserved_mask)
SV57 = PagingScheme("Sv57", 64, 10, 5, 9, 8, 57, 44, SV39.reserved_mask)
ALL_SCHEMES: tuple[PagingScheme, ...] = (SV32, SV39, SV48, SV57)
