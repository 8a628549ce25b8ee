"""Guest memory for a Session: physical, and virtual through any page table.

Virtual reads here are a debugger's: they use the Python walker (harness/mmu) with
S-mode rights plus SUM and MXR, so a notebook stopped in the kernel can still read
the user buffer a system call names. `translate()` instead reproduces exactly the
check the hart would make now.
"""

from __future__ import annotations

from ..abi.csr import Csr, Priv
from ..errors import GuestError
from ..machine import Machine
from ..mmu import (
    Access,
    PageTable,
    TranslationContext,
    Walk,
    context_from_status,
    read_page_table,
    walk,
)

__all__ = ["DEBUGGER", "MemoryAccess"]

DEBUGGER = TranslationContext(Priv.S, sum=True, mxr=True)


class MemoryAccess:
    """Memory methods of Session (it provides `machine`)."""

    machine: Machine

    def read_phys(self, paddr: int, size: int) -> bytes:
        return self.machine.memory.read(paddr, size)

    def write_phys(self, paddr: int, data: bytes) -> None:
        self.machine.write_physical(paddr, data)

    def _pa(self, va: int, satp: int | None) -> int:
        w = walk(self.machine.memory, self.machine.hart.csr(Csr.SATP) if satp is None else satp,
                 va, Access.READ, DEBUGGER, self.machine.xlen)
        if w.pa is None:
            raise GuestError(f"virtual address {va:#x} is not mapped "
                             f"({w.fault.message if w.fault else 'no translation'})")
        return int(w.pa)

    def read_virt(self, vaddr: int, size: int, satp: int | None = None) -> bytes:
        """Memory through a page table (default: the current satp), as a debugger
        reads it: user pages are readable from S-mode too."""
        out = bytearray()
        while len(out) < size:
            va = vaddr + len(out)
            chunk = min(size - len(out), 0x1000 - (va & 0xFFF))
            out += self.machine.memory.read(self._pa(va, satp), chunk)
        return bytes(out)

    def write_virt(self, vaddr: int, data: bytes, satp: int | None = None) -> None:
        done = 0
        while done < len(data):
            va = vaddr + done
            chunk = min(len(data) - done, 0x1000 - (va & 0xFFF))
            self.machine.write_physical(self._pa(va, satp), data[done:done + chunk])
            done += chunk

    def read_string(self, vaddr: int, limit: int = 4096, satp: int | None = None) -> bytes:
        out = bytearray()
        while len(out) < limit:
            chunk = self.read_virt(vaddr + len(out), min(64, limit - len(out)), satp)
            end = chunk.find(b"\0")
            if end >= 0:
                return bytes(out + chunk[:end])
            out += chunk
        return bytes(out)

    def translate(self, va: int, access: str = "r", satp: int | None = None,
                  priv: Priv | str | None = None) -> Walk:
        """The walk the hart would do now (or under `satp`, at `priv`), step by step."""
        h = self.machine.hart
        acc = Access(access)
        p = h.priv if priv is None else (priv if isinstance(priv, Priv) else Priv[priv.upper()])
        ctx = context_from_status(p, h.csr(Csr.MSTATUS), acc, self.machine.xlen)
        return walk(self.machine.memory, h.csr(Csr.SATP) if satp is None else satp, va, acc,
                    ctx, self.machine.xlen)

    def page_table(self, satp: int | None = None) -> PageTable:
        return read_page_table(self.machine.memory,
                               self.machine.hart.csr(Csr.SATP) if satp is None else satp,
                               self.machine.xlen)

