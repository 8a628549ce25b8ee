"""The nesting of trap flow events, computed by the native core (harness/trace/shape.c).

For a run of raw event records: which trap each xRET returns from, the outermost trap
of its nesting (the root), the privilege path after it (U>S>M) and the address space
that owns it, one stack of open traps per hart. harness/trace/flow.py keeps these per
event for a whole run (`Flow.rows`), or takes them a chunk at a time as it streams
(harness/trace/stream.py).
"""

from __future__ import annotations

import ctypes
import weakref
from array import array
from dataclasses import dataclass

from ..abi.csr import Priv
from ..machine.events import RECORD
from .library import load_trace_library

__all__ = ["NONE", "Shaped", "Shaper"]

NONE = -1               # no trap (an xRET's opener, a root): as shape.c's NONE
_PRIVS = {int(p): p for p in Priv}


@dataclass(slots=True)
class Shaped:
    """The nesting after each of a chunk's events, the first being event #first;
    per event: `returns` (the trap an xRET returns from, NONE for none), `roots`
    (NONE: none), `paths` (ids into Shaper.paths), `owners` (satp; 0: none) and
    `depths` (the traps open on its hart after it)."""

    first: int
    returns: array[int]
    roots: array[int]
    paths: array[int]
    owners: array[int]
    depths: array[int]


class Shaper:
    def __init__(self, initial: Priv) -> None:
        """Every hart starts at privilege `initial`, no trap open."""
        self._lib = load_trace_library()
        handle = self._lib.shaper_new(int(initial))
        if not handle:
            raise MemoryError("no memory for a trap flow's nesting")
        self._s = handle
        self.paths: list[tuple[Priv, ...]] = []   # by id, outermost privilege first
        weakref.finalize(self, self._lib.shaper_free, handle)

    def shape(self, raw: bytes, first: int) -> Shaped:
        """Shape the events `raw` holds (whole records), the first being #first, in
        order after the ones shaped before."""
        n = len(raw) // RECORD.size
        zeros = bytes(8 * n)
        out = Shaped(first, array("q", zeros), array("q", zeros), array("I", zeros[:4 * n]),
                     array("Q", zeros), array("I", zeros[:4 * n]))
        if n and self._lib.shaper_run(
                self._s, raw, n, first, out.returns.buffer_info()[0],
                out.roots.buffer_info()[0], out.paths.buffer_info()[0],
                out.owners.buffer_info()[0], out.depths.buffer_info()[0]):
            raise MemoryError("no memory for a trap flow's nesting")
        self._learn_paths()
        return out

    @property
    def depth(self) -> int:
        """Traps open on the hart of the last event shaped (0: none)."""
        return int(self._lib.shaper_depth(self._s))

    def _learn_paths(self) -> None:
        known = len(self.paths)
        total = self._lib.shaper_paths(self._s)
        parent, priv = ctypes.c_int32(), ctypes.c_uint8()
        for i in range(known, total):
            self._lib.shaper_path(self._s, i, ctypes.byref(parent), ctypes.byref(priv))
            base = self.paths[parent.value] if parent.value != NONE else ()
            self.paths.append((*base, _PRIVS[priv.value]))
