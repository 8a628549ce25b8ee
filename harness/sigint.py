"""Ctrl-C while a guest runs inside Unicorn.

A Python signal handler only runs when the interpreter regains control, which a guest
spinning in native code may never give it. So SIGINT is blocked in the main thread
and a helper thread waits for it with sigtimedwait (ctypes releases the GIL while
Unicorn runs), then calls the given action, which asks the machine to stop."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["on_sigint"]

POLL_SECONDS = 0.02      # how often the helper notices that the block has ended: each
                         # block (each `privlab run`) waits up to this long for it to go


@contextmanager
def on_sigint(action: Callable[[], None], name: str = "privlab-sigint") -> Iterator[None]:
    """Within the block, each SIGINT calls `action` from a helper thread. Outside the
    main thread (signals go to the main thread only) this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    done = threading.Event()

    def wait() -> None:
        while not done.is_set():
            if signal.sigtimedwait({signal.SIGINT}, POLL_SECONDS) is not None:
                action()

    thread = threading.Thread(target=wait, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
