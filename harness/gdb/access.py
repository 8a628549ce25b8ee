"""Guest memory as the debugger sees it.

Virtual mode (the default): addresses go through the current satp at the current
privilege, as a load by the hart would; where the hart itself may not read (a user
page while the kernel runs with sstatus.SUM=0, an execute-only page) the debugger
still may, like a hardware debugger: the page tables are walked with the permission
checks of an S-mode access with SUM and MXR set. Physical mode (``monitor memory
physical``): addresses are physical, RAM only. Device registers are never read or
written by the debugger: reading the UART would consume the guest's input.
"""

from __future__ import annotations

from enum import Enum

from ..abi.csr import Csr, Priv
from ..abi.paging import PAGE_SIZE
from ..errors import GuestError
from ..machine import Machine
from ..mmu import Access, TranslationContext, walk

__all__ = ["DebugMemory", "MemoryMode"]

DEBUG_CONTEXT = TranslationContext(Priv.S, sum=True, mxr=True)


class MemoryMode(Enum):
    VIRTUAL = "virtual"
    PHYSICAL = "physical"


class DebugMemory:
    def __init__(self, machine: Machine) -> None:
        self._m = machine
        self.mode = MemoryMode.VIRTUAL

    def translate(self, addr: int) -> int | None:
        """The physical address the debugger uses for `addr`, or None if unmapped."""
        if self.mode is MemoryMode.PHYSICAL:
            return addr
        m = self._m
        pa = m.memory.translate(addr, "r")
        if pa is not None:
            return pa
        if m.hart.priv == Priv.M:
            return None
        w = walk(m.memory, m.hart.csr(Csr.SATP), addr, Access.READ, DEBUG_CONTEXT, m.xlen)
        return int(w.pa) if w.pa is not None else None

    def _chunks(self, addr: int, size: int) -> list[tuple[int, int, int]]:
        """(physical address, offset, length) per page; GuestError if any is unmapped."""
        out = []
        done = 0
        while done < size:
            va = addr + done
            n = min(size - done, PAGE_SIZE - (va & (PAGE_SIZE - 1)))
            pa = self.translate(va)
            if pa is None or not self._m.memory.in_ram(pa, n):
                raise GuestError(f"cannot access memory at {va:#x}")
            out.append((pa, done, n))
            done += n
        return out

    def read(self, addr: int, size: int) -> bytes:
        return b"".join(self._m.memory.read(pa, n) for pa, _, n in self._chunks(addr, size))

    def read_prefix(self, addr: int, size: int) -> bytes:
        """As many of the bytes as are readable from `addr` on, page by page (gdb
        accepts a short read); GuestError if not even the first byte is."""
        out = b""
        while len(out) < size:
            va = addr + len(out)
            n = min(size - len(out), PAGE_SIZE - (va & (PAGE_SIZE - 1)))
            try:
                out += self.read(va, n)
            except GuestError:
                if not out:
                    raise
                break
        return out

    def write(self, addr: int, data: bytes) -> None:
        for pa, off, n in self._chunks(addr, len(data)):
            self._m.write_physical(pa, data[off:off + n])
