"""Watchpoints: Unicorn memory hooks bounded to the watched physical bytes.

gdb gives a virtual range; it is translated through the current address space the
first time gdb inserts the watchpoint, and each page's physical range gets one hook.
gdb removes every watchpoint when the hart stops and inserts it again when it resumes,
perhaps from another address space (a kernel watchpoint while a user program is
current, a user variable while the kernel runs, where the same virtual address may be a
kernel stack): the watchpoint stays on the physical bytes it was first given. That
binding is dropped once gdb continues without the watchpoint (it was deleted), and when
the session ends. Unicorn reports data accesses by physical address, with pc at the
accessing instruction.

A hit is recorded exactly (the address, and the pc of the instruction that made the
access); the machine then stops at the start of the next translated block, because
that is the earliest point where it can stop without losing track of time (see
halt.py). The stop is after the access, at most a few instructions later: blocks end
at every branch, and at every instruction the core intercepts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from unicorn.riscv_const import UC_RISCV_REG_PC
from unicorn.unicorn_const import UC_HOOK_MEM_READ, UC_HOOK_MEM_WRITE, UC_MEM_WRITE

from harness.abi.paging import PAGE_SIZE
from harness.gdb.access import DebugMemory
from harness.machine import Machine

__all__ = ["WatchHit", "WatchKind", "Watchpoint", "Watchpoints"]

MAX_ACCESS = 8          # widest load/store: an access starting this far below may overlap
MAX_LENGTH = 1 << 16

Piece = tuple[int, int, int]     # virtual address, physical address, length: one page


class WatchKind(IntEnum):
    """The Z packet numbers."""

    WRITE = 2
    READ = 3
    ACCESS = 4

    @property
    def stop_key(self) -> str:
        return {WatchKind.WRITE: "watch", WatchKind.READ: "rwatch",
                WatchKind.ACCESS: "awatch"}[self]

    @property
    def hook_type(self) -> int:
        types: dict[WatchKind, int] = {
            WatchKind.WRITE: UC_HOOK_MEM_WRITE, WatchKind.READ: UC_HOOK_MEM_READ,
            WatchKind.ACCESS: UC_HOOK_MEM_WRITE | UC_HOOK_MEM_READ}
        return types[self]


@dataclass(frozen=True)
class WatchHit:
    kind: WatchKind
    addr: int           # virtual address gdb asked to watch that was accessed
    paddr: int
    pc: int             # the instruction that made the access
    write: bool


@dataclass
class Watchpoint:
    kind: WatchKind
    addr: int
    length: int
    handles: list[int] = field(default_factory=list)


class Watchpoints:
    """The set of inserted watchpoints. `on_hit` is called (from inside the machine's
    run) on the first hit; `hit` keeps it until `take_hit()`."""

    def __init__(self, machine: Machine, memory: DebugMemory,
                 on_hit: Callable[[WatchHit], None]) -> None:
        self._m = machine
        self._mem = memory
        self._on_hit = on_hit
        self._points: dict[tuple[WatchKind, int, int], Watchpoint] = {}
        self._bound: dict[tuple[WatchKind, int, int], list[Piece]] = {}
        self.hit: WatchHit | None = None

    def __len__(self) -> int:
        return len(self._points)

    def insert(self, kind: WatchKind, addr: int, length: int) -> str | None:
        """None when inserted; else why not (the range is not mapped to RAM in the
        current address space, the first time; gdb then reports that it could not
        insert the watchpoint)."""
        key = (kind, addr, length)
        if key in self._points:
            return None
        if not 0 < length <= MAX_LENGTH:
            return f"a watchpoint covers 1 to {MAX_LENGTH} bytes, not {length}"
        pieces = self._bound.get(key) or self._pieces(addr, length)
        if pieces is None:
            return (f"cannot watch {addr:#x}+{length}: not mapped to RAM in the current "
                    "address space")
        self._bound[key] = pieces
        wp = Watchpoint(kind, addr, length)
        for va, pa, n in pieces:
            wp.handles.append(self._hook(wp, va, pa, n))
        self._points[key] = wp
        return None

    def remove(self, kind: WatchKind, addr: int, length: int) -> bool:
        wp = self._points.pop((kind, addr, length), None)
        if wp is None:
            return False
        for h in wp.handles:
            self._m.uc.hook_del(h)
        return True

    def forget_deleted(self) -> None:
        """gdb continues: the watchpoints it did not insert again were deleted, so
        their physical bytes are free to be chosen afresh."""
        self._bound = {k: v for k, v in self._bound.items() if k in self._points}

    def clear(self) -> None:
        for kind, addr, length in list(self._points):
            self.remove(kind, addr, length)
        self._bound.clear()
        self.hit = None

    def take_hit(self) -> WatchHit | None:
        hit, self.hit = self.hit, None
        return hit

    def _pieces(self, addr: int, length: int) -> list[Piece] | None:
        out = []
        done = 0
        while done < length:
            va = addr + done
            n = min(length - done, PAGE_SIZE - (va & (PAGE_SIZE - 1)))
            pa = self._mem.translate(va)
            if pa is None or not self._m.memory.in_ram(pa, n):
                return None
            out.append((va, pa, n))
            done += n
        return out

    def _hook(self, wp: Watchpoint, va: int, pa: int, n: int) -> int:
        end = pa + n   # exclusive

        def on_access(uc: object, access: int, addr: int, size: int, value: int,
                      _ud: object) -> None:
            if addr >= end or addr + size <= pa or self.hit is not None:
                return
            first = max(addr, pa)
            pc = int(self._m.uc.reg_read(UC_RISCV_REG_PC))
            self.hit = WatchHit(wp.kind, va + (first - pa), first, pc,
                                access == UC_MEM_WRITE)
            self._on_hit(self.hit)

        begin = max(0, pa - (MAX_ACCESS - 1))
        return int(self._m.uc.hook_add(wp.kind.hook_type, on_access, None, begin, end - 1))
