"""Code coherence between harts: each engine drops its translations of code that
other harts (or the host) rewrote, at the start of its turn.

Unicorn notices rewritten code only through its own engine's stores, so with several
engines over one RAM a hart could run stale translations of code another hart
rewrote. QEMU invalidates translations globally on any store, and xv6 relies on it
(it runs a freshly loaded program on another hart without `fence.i`). After every
turn the host kernel says which RAM pages were written among those the other harts
have run code on (harness/native/codesync.c, dirty.c); each of them collects its
share, and before its next turn the core drops that hart's translations if one of
them is a page it has run code on (`hart_code_written`, harness/native/guard.c).
Where the kernel cannot tell, every turn counts as having written every page, which
is as exact but slower."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

from ..native.library import load_library

if TYPE_CHECKING:
    from .hart import Hart

PAGE = 4096


class CodeSync:
    """The pages written since each hart's last turn."""

    def __init__(self, harts: list[Hart], host_address: int, ram_base: int,
                 ram_size: int) -> None:
        self._lib = load_library()
        self._harts = harts
        self.npages = ram_size // PAGE
        self._idx = (ctypes.c_uint32 * self.npages)()
        self._handles = (ctypes.c_void_p * len(harts))(*(h._h.value for h in harts))
        self._base = ram_base
        self._tracker = self._lib.ram_tracker_new(ctypes.c_void_p(host_address), ram_size)
        # hart -> pages written since its last turn (None: unknown, so any)
        self._pending: list[set[int] | None] = [set() for _ in harts]
        self.flushes = [0] * len(harts)     # turns that began with a flush, per hart

    @property
    def tracked(self) -> bool:
        """Does the host kernel tell which pages were written?"""
        return bool(self._tracker)

    def run_begins(self) -> None:
        """Before a run of several harts: what the host wrote since the last one (a
        program loaded, a debugger's store) is news to every hart. This looks at all
        of RAM, once a run, and so also clears the marks of pages written while no
        hart had code on them."""
        n = self._lib.ram_tracker_scan(self._tracker, self._idx, self.npages) \
            if self._tracker else -1
        if n == 0:
            return
        written = None if n < 0 else self._idx[:n]
        for j, pending in enumerate(self._pending):
            if written is None or pending is None:
                self._pending[j] = None
            else:
                pending.update(written)

    def turn_ended(self, k: int) -> None:
        """Hart k's turn is over: what it (or the host meanwhile) wrote on pages the
        others have code on is news to them (harness/native/codesync.c)."""
        written: list[int] | None = None
        if self._tracker:
            n = self._lib.codesync_scan(self._tracker, self._handles, len(self._harts), k,
                                        self._base, self.npages * PAGE, self._idx,
                                        self.npages)
            if n == 0:
                return
            if n > 0:
                written = self._idx[:n]
        for j, pending in enumerate(self._pending):
            if j == k:
                continue
            if written is None or pending is None:
                self._pending[j] = None
            else:
                pending.update(written)

    def turn_begins(self, k: int) -> None:
        """Before hart k runs: drop its translations of code rewritten since its turn."""
        pending = self._pending[k]
        if pending is not None and not pending:
            return
        if pending is None:
            flushed = self._lib.hart_code_written(self._harts[k]._h, None, -1)
        else:
            pages = (ctypes.c_uint32 * len(pending))(*pending)
            flushed = self._lib.hart_code_written(self._harts[k]._h, pages, len(pending))
        if flushed:
            self.flushes[k] += 1
        self._pending[k] = set()

    def close(self) -> None:
        if self._tracker:
            self._lib.ram_tracker_free(self._tracker)
            self._tracker = None
