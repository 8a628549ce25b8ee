"""`privlab run` and `privlab qemu` end their process as soon as their output is out and
the exit handlers have run, without the interpreter's teardown (harness/cli/main.py
leave_at_once): the commands a Makefile runs once per test pay no teardown per test."""

from __future__ import annotations

import atexit
import importlib
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from machine.asm import build_asm

from privlab.cli.main import COMMANDS, leave_at_once, parse

cli_main = importlib.import_module("privlab.cli.main")   # privlab.cli.main is also a function

# Says "leave" on the UART, then powers off through the finisher with status 7.
SAY_AND_FAIL = """
    li t0, 0x10000000
    la t1, text
1:  lbu t2, 0(t1)
    beqz t2, 2f
    sb t2, 0(t0)
    addi t1, t1, 1
    j 1b
2:  FAIL 7
text: .asciz "leave\\n"
"""


class _Left(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


def test_only_run_and_qemu_leave_at_once() -> None:
    kernel = str(build_asm("PASS"))
    leaving = {"run": ["run", "--bios", "none", "--kernel", kernel],
               "qemu": ["qemu", "-machine", "virt", "-bios", "none", "-kernel", kernel]}
    others = {"trace": ["trace", "--bios", "none", "--kernel", kernel],
              "inspect": ["inspect", "--bios", "none", "--kernel", kernel],
              "build": ["build"], "lab": ["lab", "list"], "disk": ["disk", "x.img"]}
    assert set(leaving) | set(others) <= set(COMMANDS)
    for words in leaving.values():
        assert parse(words).leave_at_once is True
    for words in others.values():
        assert getattr(parse(words), "leave_at_once", False) is False


def test_a_run_leaves_with_its_status_after_the_exit_handlers(
        monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    kernel = build_asm(SAY_AND_FAIL)
    no_input = (tmp_path / "no-input").open("w+")   # as `make` gives it: not a terminal
    order: list[str] = []

    def exit_now(status: int) -> None:
        order.append("exit")
        raise _Left(status)

    monkeypatch.setattr(sys, "argv", ["privlab", "run", "--bios", "none", "--kernel",
                                      str(kernel)])
    monkeypatch.setattr(sys, "stdin", no_input)
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: order.append("atexit"))
    monkeypatch.setattr(cli_main.os, "_exit", exit_now)
    with no_input, pytest.raises(_Left) as left:
        cli_main.main()
    assert left.value.status == 7
    assert order == ["atexit", "exit"]
    assert capfd.readouterr().out == "leave\n"


def test_a_command_that_does_not_ask_returns_its_status(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["privlab", "lab", "list"])
    monkeypatch.setattr(cli_main.os, "_exit", lambda status: pytest.fail("left at once"))
    assert cli_main.main() == 0


def test_a_thread_still_running_keeps_the_usual_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The interpreter's exit waits for a non-daemon thread; leaving at once would cut
    it short, so leave_at_once returns and lets that exit happen."""
    monkeypatch.setattr(cli_main.os, "_exit", lambda status: pytest.fail("left at once"))
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: pytest.fail("ran the handlers"))
    release = threading.Event()
    worker = threading.Thread(target=release.wait, name="still-writing")
    worker.start()
    try:
        leave_at_once(0)
    finally:
        release.set()
        worker.join()


def test_the_process_skips_the_teardown_but_not_the_handlers_or_the_output() -> None:
    """As a Makefile runs it, output to a pipe: the console's text, then what an atexit
    handler writes; an object left for the teardown is never finalized."""
    kernel = build_asm(SAY_AND_FAIL)
    code = ("import atexit, os, sys\n"
            "class Teardown:\n"
            "    def __del__(self):\n"
            "        os.write(1, b'teardown\\n')\n"
            "kept = Teardown()\n"
            "atexit.register(lambda: os.write(1, b'atexit\\n'))\n"
            "from privlab.cli.main import main\n"
            f"sys.argv = ['privlab', 'run', '--bios', 'none', '--kernel', {str(kernel)!r}]\n"
            "sys.exit(main())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 7, done.stderr
    assert done.stdout == "leave\natexit\n"
