"""Code coherence between harts: each engine drops its translations of code that
other harts (or the host) rewrote, at the start of its turn.

Unicorn notices rewritten code only through its own engine's stores, so with several
engines over one RAM a hart could run stale translations of code another hart
rewrote. QEMU invalidates translations globally on any store, and xv6 relies on it
(it runs a freshly loaded program on another hart without `fence.i`). After every
turn the host kernel says which RAM pages were written among those the other harts
have run code on (harness/native/codesync.c, dirty.c); each of them collects its
share, and before its next turn the core drops that hart's blocks on those of them it
has run code on (`hart_code_written`, harness/native/guard.c), keeping the rest.
Where the kernel cannot tell, every turn counts as having written every page, and
each hart drops all its translations: as exact, but slower."""

from __future__ import annotations

import ctypes

from ..native.library import load_library

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .hart import Hart

PAGE = 4096


class CodeSync:
    """The pages written since each hart's last turn (kept in harness/native/codesync.c,
    where turns the core runs by itself (turns.c) update them too)."""

    def __init__(self, harts: list[Hart], host_address: int, ram_base: int,
                 ram_size: int) -> None:
        self._lib = load_library()
        self._harts = harts
        self.npages = ram_size // PAGE
        handles = (ctypes.c_void_p * len(harts))(*(h._h.value for h in harts))
        self._tracker = self._lib.ram_tracker_new(ctypes.c_void_p(host_address), ram_size)
        self.handle = ctypes.c_void_p(self._lib.codesync_new(
            self._tracker, handles, len(harts), ram_base, ram_size))
        if not self.handle:
            raise MemoryError("no memory for the code-coherence record")

    @property
    def tracked(self) -> bool:
        """Does the host kernel tell which pages were written?"""
        return bool(self._tracker)

    @property
    def flushes(self) -> list[int]:
        """Turns that began by dropping all of the hart's translations, per hart."""
        return [int(self._lib.codesync_flushes(self.handle, k)) for k in range(len(self._harts))]

    @property
    def drops(self) -> list[int]:
        """Turns that began by dropping the hart's blocks on the pages written, per
        hart."""
        return [int(self._lib.codesync_drops(self.handle, k)) for k in range(len(self._harts))]

    def run_begins(self) -> None:
        """Before a run of several harts: what the host wrote since the last one (a
        program loaded, a debugger's store) is news to every hart."""
        self._lib.codesync_run_begins(self.handle)

    def turn_ended(self, k: int) -> None:
        """Hart k's turn is over: what it (or the host meanwhile) wrote on pages the
        others have code on is news to them."""
        self._lib.codesync_turn_ended(self.handle, k)

    def turn_begins(self, k: int) -> None:
        """Before hart k runs: drop its translations of code rewritten since its turn."""
        self._lib.codesync_turn_begins(self.handle, k)

    def pending(self) -> list[set[int] | None]:
        """Each hart's pages to hear about (None: every page), for a snapshot."""
        out = (ctypes.c_uint32 * self.npages)()
        got = [int(self._lib.codesync_pending(self.handle, k, out, self.npages))
               for k in range(len(self._harts))]
        return [None if n < 0 else set(out[:n]) if n else set() for n in got]

    def set_pending(self, pending: list[set[int] | None]) -> None:
        for k, pages in enumerate(pending):
            if pages is None:
                self._lib.codesync_set_pending(self.handle, k, None, -1)
            else:
                arr = (ctypes.c_uint32 * max(1, len(pages)))(*sorted(pages))
                self._lib.codesync_set_pending(self.handle, k, arr, len(pages))

    def close(self) -> None:
        if self.handle:
            self._lib.codesync_free(self.handle)
            self.handle = ctypes.c_void_p()
        if self._tracker:
            self._lib.ram_tracker_free(self._tracker)
            self._tracker = None
