"""A test process never outlives the grader that started it (loaded by `privlab grade`
with `-p privlab.course.lifeline`).

The grader starts its test process in a session of its own (so the watchdog can kill it
and its xdist workers as one group) and names itself in PRIVLAB_GRADER_PID. Should the
grader die without stopping it (a Dask worker killed mid-grading, an OOM kill), the
test process would be adopted by init and run on, writing results into a staging slot
that another grading may already hold. A daemon thread here notices the grader is gone
(this process's parent changed) and kills the whole group.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

__all__ = ["GRADER_PID", "POLL_SECONDS"]

GRADER_PID = "PRIVLAB_GRADER_PID"
POLL_SECONDS = 0.5


def _watch(grader: int) -> None:
    while os.getppid() == grader:
        time.sleep(POLL_SECONDS)
    os.killpg(os.getpgrp(), signal.SIGKILL)


def pytest_configure(config: pytest.Config) -> None:
    grader = os.environ.get(GRADER_PID, "")
    if not grader.isdigit() or hasattr(config, "workerinput"):
        return   # not under privlab grade; or an xdist worker (its controller watches)
    if os.getppid() != int(grader):
        _watch(int(grader))  # already gone
    threading.Thread(target=_watch, args=(int(grader),), name="privlab-lifeline",
                     daemon=True).start()
