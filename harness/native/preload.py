"""The native core loaded on a thread of its own while the command line is imported.

Loading the core loads libunicorn with it: 24 MB and 75,000 relocations, which the
dynamic loader resolves all at once (ctypes opens a library with RTLD_NOW, and binding
lazily is not safe here: plt.c points some of libunicorn's PLT slots at the core, and a
binding made later on another thread could write over one). That is 4-6 ms of a
40-45 ms bare run, during which Python did nothing else. A command that will boot a
machine starts it here instead, as soon as the core's path is known (before argparse,
the command line and the layouts shared with the C are imported: checking the stamp
needs none of them), and goes on importing the rest (about 15 ms) on the main thread:
the loader needs no GIL, and the host has a second core for it. `load_library` then
opens the same path, which the loader finds already loaded.

Only a core that is built and stamped is preloaded: one that must be built first is
built where it always was, with its progress shown. Whatever goes wrong here is left
for `load_library` to meet again and report: the thread only ever saves time.
"""

from __future__ import annotations

import _thread
import ctypes
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
else:
    import _signal as signal  # as harness/sigint.py does, and why

__all__ = ["preload_core", "preloaded_core"]

_loading: _thread.LockType | None = None    # held while the thread loads
_path: Path | None = None


def preload_core() -> None:
    """Start loading the core on a thread of its own, if it is built (at most once
    a process)."""
    global _loading, _path
    if _loading is not None:
        return
    from .clib import stamped_library
    from .library import HART_LIBRARY

    try:
        path = stamped_library(HART_LIBRARY)
        dlopen = ctypes.CDLL(None).dlopen
    except Exception:   # a cache it cannot make, no dlopen by name: load_library says
        return          # what is wrong, in the command's own words
    if path is None:
        return
    dlopen.restype, dlopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
    # A run imports these extension modules after this point; each is itself a
    # dlopen, which would wait for the core's to end. Loaded first, they do not.
    import mmap  # noqa: F401
    import select  # noqa: F401
    import struct  # noqa: F401

    lock = _thread.allocate_lock()
    lock.acquire()

    def load() -> None:
        try:
            # Signals are the main thread's (harness/sigint.py waits for SIGINT on a
            # thread whose mask it sets): none is delivered here.
            signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
            dlopen(os.fsencode(path), os.RTLD_NOW)   # a foreign call: the GIL is let go
        finally:
            lock.release()

    _loading, _path = lock, path
    # A child forked while the loader is at work must not inherit its lock held:
    # glibc's fork sees to that, and this does for a C library whose fork does not.
    os.register_at_fork(before=_wait)
    _thread.start_new_thread(load, ())


def _wait() -> None:
    if _loading is not None:
        with _loading:
            pass


def preloaded_core() -> Path | None:
    """The path preload_core loaded, once it has (None if it did not start)."""
    _wait()
    return _path
