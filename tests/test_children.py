"""harness/children.py: a child privlab starts never outlives it. `kill` leaves the
child dead and reaped (an interrupted grade exits right after it); `supervised`
kills it however its block is left, even when Ctrl-C comes while it starts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from privlab import sigint
from privlab.children import kill, supervised
from privlab.sigint import interrupts_exit

# A leader with a child of its own: one kill of the group stops both.
FAMILY = ("import subprocess, sys, time\n"
          "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
          "print('up', flush=True)\n"
          "time.sleep(600)\n")
SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def test_kill_reaps_the_leader_and_kills_its_group() -> None:
    proc = subprocess.Popen([sys.executable, "-c", FAMILY], stdout=subprocess.PIPE,
                            start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    assert len(children) == 1
    kill(proc, group=True)
    assert proc.returncode == -signal.SIGKILL        # reaped, not merely signalled
    assert not Path(f"/proc/{proc.pid}").exists()
    _gone(int(children[0]))
    proc.stdout.close()


def test_kill_of_a_child_already_gone_is_quiet() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    proc.wait()
    kill(proc, group=True)
    kill(proc, group=False)
    assert proc.returncode == 0


def test_supervised_kills_the_child_when_its_block_fails() -> None:
    with pytest.raises(ValueError), supervised(lambda: subprocess.Popen(SLEEPER),
                                               group=False) as proc:
        raise ValueError
    assert proc.returncode == -signal.SIGKILL


def test_ctrl_c_while_the_child_starts_is_raised_once_its_kill_is_in_place(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The SIGINT lands after the fork, before `start` has returned the child (where
    Popen would raise KeyboardInterrupt and the child, unknown to anyone, run on):
    the KeyboardInterrupt comes when the child is supervised, and kills it."""
    monkeypatch.setattr(sigint, "_force_exit", lambda say: None)   # not this pytest
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        started.append(subprocess.Popen(SLEEPER, start_new_session=True))
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)                   # the handler runs here, inside `start`
        return started[0]

    reached = False
    with pytest.raises(KeyboardInterrupt), interrupts_exit(lambda: None), \
            supervised(start, group=True):
        reached = True
    assert not reached
    assert started[0].returncode == -signal.SIGKILL


def _gone(pid: int) -> None:
    """The process has died (init reaps it, perhaps not at once)."""
    deadline = time.monotonic() + 5
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        assert time.monotonic() < deadline, state
        time.sleep(0.01)
