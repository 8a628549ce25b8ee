"""`privlab step` in a real terminal, as a person would use it: tmux runs it at a fixed
size, send-keys types, capture-pane reads the screen."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from privlab.paths import REPO_ROOT

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


def _tmux(*args: str) -> str:
    assert TMUX is not None
    return subprocess.run([TMUX, *args], capture_output=True, text=True, check=False,
                          timeout=30).stdout


@pytest.fixture
def terminal() -> Iterator[tuple[Callable[[str], None], Callable[[str, float], str],
                                 Callable[[], bool]]]:
    name = f"privlab-step-{uuid.uuid4().hex[:8]}"
    cmd = (f"cd {shlex.quote(str(REPO_ROOT))} && env -u COLUMNS -u LINES "
           f"{shlex.quote(sys.executable)} -m privlab step --user hello")
    _tmux("-f", "/dev/null", "new-session", "-d", "-s", name, "-x", "180", "-y", "56", cmd)
    _tmux("set-option", "-t", name, "window-size", "manual")
    _tmux("resize-window", "-t", name, "-x", "180", "-y", "56")

    def keys(k: str) -> None:
        _tmux("send-keys", "-t", name, k)

    def screen_with(text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = _tmux("capture-pane", "-p", "-t", name)
            if text in shown:
                return shown
            time.sleep(0.3)
        raise AssertionError(f"{text!r} never appeared; the screen:\n{shown}")

    def alive() -> bool:
        assert TMUX is not None
        return subprocess.run([TMUX, "has-session", "-t", name], capture_output=True,
                              check=False, timeout=30).returncode == 0

    yield keys, screen_with, alive
    if alive():
        _tmux("kill-session", "-t", name)


def test_step_forward_and_back_in_tmux(
        terminal: tuple[Callable[[str], None], Callable[[str, float], str],
                        Callable[[], bool]]) -> None:
    keys, screen_with, name_alive = terminal
    first = screen_with("at the first instruction", 90)
    assert "M-mode  pc 0x80000000" in first and "trap timeline" in first
    keys("y")                                     # the first system call: write
    at_call = screen_with("ran to the next system call", 60)
    assert "user_ecall" in at_call and "scause*" in at_call
    assert "S-mode (was M-mode)" in at_call        # since the start, in M
    keys("b")                                     # one back: the ecall, in U
    back = screen_with("stepped back one instruction", 60)
    assert "U-mode  pc 0x" in back and "ecall" in back
    keys("?")
    helped = screen_with("privlab step: keys", 30)
    assert "step back one instruction" in helped
    keys("Escape")                                # alone: ESC q would be Alt+q
    time.sleep(2.0)
    keys("q")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and name_alive():
        time.sleep(0.3)
    assert not name_alive(), "q did not quit"
