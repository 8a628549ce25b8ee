"""The native core: trap entry, interrupts, deterministic time and events, in C.

See README.md (and hart.h) for the map of the C files; `build.load_library()` compiles and loads it.
"""

from ..abi.native_layout import EventKind, EventRecord, SharedState, StopReason
from .library import library_path, load_library

__all__ = ["EventKind", "EventRecord", "SharedState", "StopReason", "library_path",
           "load_library"]
