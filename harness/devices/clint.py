"""CLINT: the machine timer (mtime, mtimecmp) and software interrupt (msip) of hart 0.

The registers live in the native core (harness/native), which derives mtime from
instructions retired and raises MTIP/MSIP; this class is their MMIO window. mtime seen
through MMIO is exact to the translated block (the core counts whole blocks), which is
deterministic; the time/cycle CSRs are exact to the instruction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.abi.platform import PLATFORM
from harness.devices.base import DeviceError, unknown_register

if TYPE_CHECKING:
    from harness.machine.hart import Hart

__all__ = ["Clint"]


class Clint:
    name = "clint"

    def __init__(self, hart: Hart) -> None:
        self.base = PLATFORM.clint_base
        self.size = PLATFORM.clint_size
        self._hart = hart

    @staticmethod
    def _slice(value: int, offset: int, size: int) -> int:
        return (value >> (8 * offset)) & ((1 << (8 * size)) - 1)

    def _reg(self, offset: int, size: int) -> tuple[int, int]:
        """(register base, byte offset inside it) for an aligned access."""
        for base, width in ((PLATFORM.clint_msip, 4), (PLATFORM.clint_mtimecmp, 8),
                            (PLATFORM.clint_mtime, 8)):
            if base <= offset and offset + size <= base + width:
                return base, offset - base
        raise unknown_register(self, offset, "access")

    def read(self, offset: int, size: int) -> int:
        base, sub = self._reg(offset, size)
        s = self._hart.state
        if base == PLATFORM.clint_msip:
            value = s.msip & 1
        elif base == PLATFORM.clint_mtimecmp:
            value = s.mtimecmp
        else:
            value = self._hart.mtime()
        return self._slice(value, sub, size)

    def write(self, offset: int, size: int, value: int) -> None:
        base, sub = self._reg(offset, size)
        s = self._hart.state
        if base == PLATFORM.clint_msip:
            s.msip = value & 1 if sub == 0 else s.msip
        elif base == PLATFORM.clint_mtimecmp:
            mask = ((1 << (8 * size)) - 1) << (8 * sub)
            s.mtimecmp = (s.mtimecmp & ~mask) | ((value << (8 * sub)) & mask)
        else:
            raise DeviceError("writing mtime is not supported: privlab's time is "
                              "instructions retired")
        self._hart.update()
