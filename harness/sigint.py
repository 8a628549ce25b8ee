"""Ctrl-C: every command stops on the first one, within a fraction of a second, exit 130.

Two mechanisms, one for each kind of work:

- While a guest runs inside Unicorn (`on_sigint`): a Python signal handler only runs
  when the interpreter regains control, which a guest spinning in native code may
  never give it. So SIGINT is blocked in the main thread and a helper thread waits for
  it with sigtimedwait (ctypes releases the GIL while Unicorn runs), then calls the
  given action, which asks the machine to stop; the command then shows what it has
  (a trace its rows so far) and exits 130.
- Everywhere else (`interrupts_exit`, around a whole command): SIGINT raises
  KeyboardInterrupt as usual, so `finally` blocks run (the terminal is restored,
  child processes are stopped), and the command line turns it into exit 130 without
  a traceback. Should the unwinding block (a thread pool waiting for a compiler that
  did not get the signal), a timer ends the process GRACE_SECONDS later with status
  130 anyway, after the registered `cleanups` (which stop child processes) and never
  in the middle of a `commit` (a set of renames that must happen together, such as
  the grader's reports).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
else:
    # signal's C half: the same functions and numbers, without the enums the signal
    # module builds from them at import (0.35 ms of every start)
    import _signal as signal

__all__ = ["GRACE_SECONDS", "INTERRUPTED", "cleanup", "commit", "held", "in_command",
           "interrupts_exit", "on_sigint", "run_cleanups"]

POLL_SECONDS = 1.0       # the helper's longest wait: the end of the block wakes it at
                         # once (WAKE), so this bounds only a lost wake-up
WAKE = signal.SIGUSR2    # sent to the helper thread alone as the block ends: without it
                         # every `privlab run` waited up to a poll for the helper to go
GRACE_SECONDS = 0.4      # after Ctrl-C, how long the unwinding may take before the exit
COMMIT_WAIT_SECONDS = 10  # the forced exit waits this long at most for a commit to end
INTERRUPTED = 130        # 128 + SIGINT

_commit_lock = threading.RLock()
_in_command = threading.Event()      # interrupts_exit is in force
_cleanups: list[Callable[[], None]] = []
_cleanups_lock = threading.Lock()
_holding = 0                         # depth of `held` blocks (main thread only)
_held_interrupt = False              # a SIGINT came during them


@contextmanager
def on_sigint(action: Callable[[], None], name: str = "privlab-sigint") -> Iterator[None]:
    """Within the block, each SIGINT calls `action` from a helper thread. Outside the
    main thread (signals go to the main thread only) this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # Blocked here before the helper starts, so that it inherits the mask: SIGINT and
    # WAKE then reach only its sigtimedwait.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, WAKE})
    done = threading.Event()

    def wait() -> None:
        while not done.is_set():
            # CPython's sigtimedwait, woken by EINTR (a SIGSTOP and SIGCONT, Ctrl-Z
            # then fg, a profiler attaching) after its timeout has passed, returns a
            # siginfo it never filled in instead of None: only a real SIGINT counts.
            info = signal.sigtimedwait({signal.SIGINT, WAKE}, POLL_SECONDS)
            if info is not None and info.si_signo == signal.SIGINT:
                action()

    thread = threading.Thread(target=wait, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        if thread.ident is not None:
            with contextlib.suppress(ProcessLookupError):   # it has ended already
                signal.pthread_kill(thread.ident, WAKE)
        thread.join()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, WAKE})


@contextmanager
def cleanup(action: Callable[[], None]) -> Iterator[None]:
    """Within the block, a forced exit after Ctrl-C calls `action` first (to stop a
    child process the block started, say)."""
    with _cleanups_lock:
        _cleanups.append(action)
    try:
        yield
    finally:
        with _cleanups_lock:
            _cleanups.remove(action)


@contextmanager
def commit() -> Iterator[None]:
    """A block a forced exit after Ctrl-C waits for (keep it short: renames), and
    during which the main thread takes no SIGINT (it arrives after the block)."""
    main = threading.current_thread() is threading.main_thread()
    with _commit_lock:
        if main:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            if main:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def held() -> Iterator[None]:
    """Within the block (main thread, under `interrupts_exit`), a Ctrl-C raises no
    KeyboardInterrupt: it comes as the block ends. For steps that must not be cut
    in two, such as starting a child process and registering the `cleanup` that
    stops it (interrupted between the two, the child would run on unseen). The
    forced exit is armed at once all the same. Signals are not blocked, since a
    child started here would inherit the blocked mask."""
    global _holding, _held_interrupt
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        if _holding == 0 and _held_interrupt:   # the interrupt wins over an error
            _held_interrupt = False
            raise KeyboardInterrupt


def in_command() -> bool:
    """Whether a command line's `interrupts_exit` is in force: its cleanups will run
    when it is interrupted (a child process started now can be left to them)."""
    return _in_command.is_set()


def run_cleanups() -> None:
    """Call every registered cleanup (newest first); their errors are ignored."""
    with _cleanups_lock:
        actions = list(_cleanups)
    for action in reversed(actions):
        with contextlib.suppress(Exception):
            action()


def _force_exit(say: Callable[[], None]) -> None:
    run_cleanups()
    _commit_lock.acquire(timeout=COMMIT_WAIT_SECONDS)   # held until the exit
    with contextlib.suppress(Exception):
        say()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(INTERRUPTED)


@contextmanager
def interrupts_exit(say: Callable[[], None], *, restore: bool = True) -> Iterator[None]:
    """For the command line's main: the first SIGINT raises KeyboardInterrupt (the
    caller turns it into exit 130) and arms a timer that ends the process
    GRACE_SECONDS later should it not have exited by then (calling `say` to print
    why); later ones are ignored (that timer is coming). On the way out, restores the
    previous handler; without `restore` (the process is about to exit) installs one
    that exits 130 at once instead. Only in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    armed: list[threading.Timer] = []

    def handler(signum: int, frame: object) -> None:
        global _held_interrupt
        if armed:
            return
        timer = threading.Timer(GRACE_SECONDS, _force_exit, (say,))
        timer.daemon = True
        timer.start()
        armed.append(timer)
        if _holding:
            _held_interrupt = True
            return
        raise KeyboardInterrupt

    def at_exit(signum: int, frame: object) -> None:
        _force_exit(say)

    previous = signal.signal(signal.SIGINT, handler)
    _in_command.set()
    try:
        yield
    finally:
        _in_command.clear()
        # An armed timer stays armed: the interpreter's own exit may still wait for
        # threads (a pool's compilers), and the exit must come within the grace period.
        signal.signal(signal.SIGINT, previous if restore else at_exit)
