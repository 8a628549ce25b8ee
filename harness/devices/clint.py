"""CLINT: the machine timer (mtime, mtimecmp) and software interrupts (msip) of the harts.

As QEMU 7.2's `virt`: hart k's msip at CLINT_MSIP + 4k, its mtimecmp at
CLINT_MTIMECMP + 8k, one mtime for all. A write to msip raises or clears MSIP on the
hart it names (an IPI when another hart writes it).

The registers live in the native core (harness/native), which derives mtime from
instructions retired and raises MTIP/MSIP; this class is their MMIO window. mtime seen
through MMIO is exact to the translated block (the core counts whole blocks), which is
deterministic; the time/cycle CSRs are exact to the instruction.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..abi.platform import PLATFORM
from .base import AccessRule, DeviceError, HartLines, unknown_register

__all__ = ["Clint"]


class Clint:
    name = "clint"
    # QEMU 7.2's ACLINT on virt: msip words take 4-byte accesses only, the timer
    # (mtimecmp, mtime) 4 or 8; past mtime nothing is mapped.
    access_rules = (AccessRule(PLATFORM.clint_msip, PLATFORM.clint_mtimecmp, 4, 4),
                    AccessRule(PLATFORM.clint_mtimecmp, PLATFORM.clint_mtime + 8, 4, 8))

    def __init__(self, hart: HartLines, harts: Sequence[HartLines] = ()) -> None:
        """`hart`: the hart running now, whose clock mtime reads (the machine sets
        `current` at every switch: all harts' clocks agree then); `harts`: all of
        them, in mhartid order (default: hart alone)."""
        self.base = PLATFORM.clint_base
        self.size = PLATFORM.clint_size
        self.current = hart
        self.harts: list[HartLines] = list(harts) or [hart]

    @staticmethod
    def _slice(value: int, offset: int, size: int) -> int:
        return (value >> (8 * offset)) & ((1 << (8 * size)) - 1)

    def _reg(self, offset: int, size: int) -> tuple[int, int, int] | None:
        """(register base, hart, byte offset inside it) for an aligned access; None
        for a hart the machine does not have, which QEMU 7.2 reads as 0 and ignores
        writes to, and for offsets past mtime, which only a page-table walk's read
        reaches (a load or store there is an access fault before it gets here)."""
        mtime = PLATFORM.clint_mtime
        if mtime <= offset < mtime + 8:
            if offset + size > mtime + 8:
                raise unknown_register(self, offset, "access")
            return mtime, 0, offset - mtime
        for base, width, end in ((PLATFORM.clint_msip, 4, PLATFORM.clint_mtimecmp),
                                 (PLATFORM.clint_mtimecmp, 8, mtime)):
            if base <= offset < end:
                k, sub = divmod(offset - base, width)
                if sub + size > width:
                    raise unknown_register(self, offset, "access")
                return (base, k, sub) if k < len(self.harts) else None
        return None

    def read(self, offset: int, size: int) -> int:
        reg = self._reg(offset, size)
        if reg is None:
            return 0
        base, k, sub = reg
        s = self.harts[k].state
        if base == PLATFORM.clint_msip:
            value = s.msip & 1
        elif base == PLATFORM.clint_mtimecmp:
            value = s.mtimecmp
        else:
            value = self.current.mtime()
        return self._slice(value, sub, size)

    def write(self, offset: int, size: int, value: int) -> None:
        reg = self._reg(offset, size)
        if reg is None:
            return
        base, k, sub = reg
        hart = self.harts[k]
        s = hart.state
        if base == PLATFORM.clint_msip:
            s.msip = value & 1 if sub == 0 else s.msip
        elif base == PLATFORM.clint_mtimecmp:
            mask = ((1 << (8 * size)) - 1) << (8 * sub)
            s.mtimecmp = (s.mtimecmp & ~mask) | ((value << (8 * sub)) & mask)
        else:
            raise DeviceError("writing mtime is not supported: privlab's time is "
                              "instructions retired")
        hart.update()
