"""Child processes that never outlive what started them: a compiler, the grader's
sealed build, its test process and their xdist workers.

`supervised` starts one and keeps it from running on after the block, however the
block is left: an error, Ctrl-C's KeyboardInterrupt, or Ctrl-C's forced exit
(harness/sigint.py), which runs the registered cleanups and nothing else. A Ctrl-C
while the child starts is held until its cleanup is in place: without that, the
KeyboardInterrupt could come between the fork and the cleanup's registration, and
the child would run on, adopted by init, unseen.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from typing import TypeVar

from .sigint import cleanup, held

__all__ = ["REAP_SECONDS", "kill", "supervised"]

# How long a kill waits for the child to be gone. SIGKILL is queued at once, but the
# process dies when it is next scheduled and has torn down its address space (a
# Unicorn guest's memory included): on a loaded machine, a few hundred ms. Waiting
# for it means that nothing privlab started still runs when privlab exits.
REAP_SECONDS = 1.0

AnyStr = TypeVar("AnyStr", str, bytes)


def kill(proc: subprocess.Popen[AnyStr], *, group: bool, wait: float = REAP_SECONDS) -> None:
    """SIGKILL `proc` (with `group`, its whole process group: it was started with
    start_new_session, and its own children go too), then reap it within `wait`
    seconds. The group is killed even when `proc` has exited already (xdist workers
    whose controller died)."""
    with suppress(ProcessLookupError, PermissionError):
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        elif proc.returncode is None:
            proc.kill()
    with suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=wait)


@contextmanager
def supervised(start: Callable[[], subprocess.Popen[AnyStr]], *,
               group: bool) -> Iterator[subprocess.Popen[AnyStr]]:
    """The child `start()` returns, killed (see `kill`) if it still runs when the
    block is left, and by a forced exit while the block runs. With `group`, its
    group is killed on the way out in any case: what the child started and left
    behind goes too."""
    started: list[subprocess.Popen[AnyStr]] = []

    def stop() -> None:
        if started and (group or started[0].poll() is None):
            kill(started[0], group=group)

    with ExitStack() as stack:
        stack.enter_context(cleanup(stop))   # for a forced exit: unregistered last
        stack.callback(stop)                 # however the block is left
        with held():                         # a Ctrl-C here is raised as this ends
            started.append(start())
        yield started[0]
