"""The native core: trap entry, interrupts, deterministic time and events, in C.

See README.md (and hart.h) for the map of the C files; `build.load_library()` compiles and loads it.

The names load on first use (PEP 562): the command line loads the core while it imports
the rest (native/preload.py), before the layouts shared with the C (abi/native_layout.py)
are needed.
"""

from __future__ import annotations

from ..lazyload import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..abi.native_layout import EventKind, EventRecord, SharedState, StopReason
    from .library import library_path, load_library

__all__ = ["EventKind", "EventRecord", "SharedState", "StopReason", "library_path",
           "load_library"]

__getattr__ = lazy_exports(__name__, globals(), {
    **dict.fromkeys(("EventKind", "EventRecord", "SharedState", "StopReason"),
                    ".abi.native_layout"),
    **dict.fromkeys(("library_path", "load_library"), "library"),
})
