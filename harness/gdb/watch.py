"""Watchpoints: the native core's debugger watch slots, on the watched physical bytes.

gdb gives a virtual range; it is translated through the current address space the
first time gdb inserts the watchpoint, and each page's physical range takes one of the
core's watch slots (harness/native/trigger.c). gdb removes every watchpoint when the
hart stops and inserts it again when it resumes, perhaps from another address space (a
kernel watchpoint while a user program is current, a user variable while the kernel
runs, where the same virtual address may be a kernel stack): the watchpoint stays on the
physical bytes it was first given. That binding is dropped once gdb continues without
the watchpoint (it was deleted), and when the session ends.

The core checks every load and store to a watched page as it checks PMP, and a hit
stops the run *before* the access, with pc at the accessing instruction, which has not
run: what gdb's RISC-V target expects of a hardware watchpoint (it then removes the
watchpoints, steps that one instruction and compares the values itself). A page-table
walk's reads are not accesses and never hit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import IntEnum

from ..abi.native_layout import HOST_WATCHES
from ..abi.paging import PAGE_SIZE
from ..machine import DataAccess, Machine
from .access import DebugMemory

__all__ = ["WatchHit", "WatchKind", "Watchpoint", "Watchpoints"]

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
    def loads(self) -> bool:
        return self is not WatchKind.WRITE

    @property
    def stores(self) -> bool:
        return self is not WatchKind.READ


@dataclass(frozen=True)
class WatchHit:
    """An access a watchpoint caught, before the instruction that makes it runs."""
    kind: WatchKind
    addr: int           # virtual address gdb asked to watch that was accessed
    paddr: int
    pc: int             # the instruction that makes the access (it has not run yet)
    write: bool


@dataclass
class Watchpoint:
    """A watchpoint gdb inserted, split into pieces that each fit one of the core's slots."""
    kind: WatchKind
    addr: int
    length: int
    pieces: list[Piece]
    slots: list[int] = field(default_factory=list)


class Watchpoints:
    """The set of inserted watchpoints, each piece in one of the core's watch slots."""

    def __init__(self, machine: Machine, memory: DebugMemory) -> None:
        self._m = machine
        self._mem = memory
        self._points: dict[tuple[WatchKind, int, int], Watchpoint] = {}
        self._bound: dict[tuple[WatchKind, int, int], list[Piece]] = {}
        self._free = list(range(HOST_WATCHES))
        self._suspended = False

    def __len__(self) -> int:
        return len(self._points)

    def insert(self, kind: WatchKind, addr: int, length: int) -> str | None:
        """None when inserted; else why not (the range is not mapped to RAM in the
        current address space, the first time, or the core's slots are all taken; gdb
        then reports that it could not insert the watchpoint)."""
        key = (kind, addr, length)
        if key in self._points:
            return None
        if not 0 < length <= MAX_LENGTH:
            return f"a watchpoint covers 1 to {MAX_LENGTH} bytes, not {length}"
        pieces = self._bound.get(key) or self._pieces(addr, length)
        if pieces is None:
            return (f"cannot watch {addr:#x}+{length}: not mapped to RAM in the current "
                    "address space")
        if len(pieces) > len(self._free):
            return (f"cannot watch {addr:#x}+{length}: it needs {len(pieces)} of the "
                    f"{HOST_WATCHES} watched pages and {len(self._free)} are left")
        self._bound[key] = pieces
        wp = Watchpoint(kind, addr, length, pieces)
        wp.slots = [self._free.pop(0) for _ in pieces]
        if not self._suspended:
            self._arm(wp, True)
        self._points[key] = wp
        return None

    def remove(self, kind: WatchKind, addr: int, length: int) -> bool:
        wp = self._points.pop((kind, addr, length), None)
        if wp is None:
            return False
        self._arm(wp, False)
        self._free = sorted(self._free + wp.slots)
        return True

    def forget_deleted(self) -> None:
        """gdb continues: the watchpoints it did not insert again were deleted, so
        their physical bytes are free to be chosen afresh."""
        self._bound = {k: v for k, v in self._bound.items() if k in self._points}

    def clear(self) -> None:
        for kind, addr, length in list(self._points):
            self.remove(kind, addr, length)
        self._bound.clear()

    @contextmanager
    def suspended(self) -> Iterator[None]:
        """The core does not watch while the body runs (re-execution for reverse
        debugging, where accesses are history, not hits)."""
        self._suspended = True
        for wp in self._points.values():
            self._arm(wp, False)
        try:
            yield
        finally:
            self._suspended = False
            for wp in self._points.values():
                self._arm(wp, True)

    def hit(self, access: DataAccess, pc: int) -> WatchHit | None:
        """The watchpoint the core stopped for, at instruction `pc`."""
        for wp in self._points.values():
            if not (wp.kind.stores if access.write else wp.kind.loads):
                continue
            for va, pa, n in wp.pieces:
                if pa <= access.paddr < pa + n:
                    return WatchHit(wp.kind, va + (access.paddr - pa), access.paddr, pc,
                                    access.write)
        return None

    def _arm(self, wp: Watchpoint, on: bool) -> None:
        for slot, (_va, pa, n) in zip(wp.slots, wp.pieces, strict=True):
            for hart in self._m.harts:     # physical ranges: every hart's accesses
                hart.set_watch(slot, pa, n, read=on and wp.kind.loads,
                               write=on and wp.kind.stores)

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
