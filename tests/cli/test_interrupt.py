"""Ctrl-C: every command stops on the first SIGINT within a fraction of a
second, prints what it has so far, exits 130, and never prints a traceback; an
interrupted grade leaves the previous complete set of reports.

Real processes, real signals: `send_signal(SIGINT)` reaches only privlab (not a
process group, as a terminal's Ctrl-C does), the harder case for stopping children;
one test also presses Ctrl-C in tmux when tmux is installed."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from privlab.paths import KERNEL_DIR, REPO_ROOT

PRIVLAB = [sys.executable, "-m", "privlab"]
PROMPT = 2.0      # seconds from the signal to the exit, at most (typically 0.1)
FOREVER = ["--max-insns", "100000000000"]


def wait_until(ready: Callable[[subprocess.Popen[bytes]], bool],
               proc: subprocess.Popen[bytes]) -> None:
    """Poll until `ready(proc)`; the process must not end first, nor take two minutes."""
    deadline = time.monotonic() + 120
    while not ready(proc):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "never got ready"
        time.sleep(0.01)


def interrupt(args: list[str], ready: Callable[[subprocess.Popen[bytes]], bool],
              cwd: Path = REPO_ROOT) -> tuple[int, str, str, float]:
    """Start privlab, wait until `ready`, press Ctrl-C once: (status, stdout, stderr,
    seconds from the signal to the exit). stdout goes to a file, not a pipe nobody
    reads until the end: a command that prints as it runs would block on a full pipe
    and never get busy enough to be `ready`."""
    with tempfile.TemporaryFile() as stdout:
        proc = subprocess.Popen([*PRIVLAB, *args], cwd=cwd, stdout=stdout,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        try:
            wait_until(ready, proc)
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        stdout.seek(0)
        out = stdout.read()
    return proc.returncode, out.decode(), err.decode(), took


def importing(proc: subprocess.Popen[bytes]) -> bool:
    """The command has begun loading the machine: inside privlab's main, well within
    its first half second."""
    try:
        return "libunicorn" in Path(f"/proc/{proc.pid}/maps").read_text()
    except OSError:
        return False


def guest_running(proc: subprocess.Popen[bytes]) -> bool:
    """The guest runs: the process has been busy for a while after its imports."""
    return importing(proc) and _busy(proc.pid) > 1.5


@pytest.fixture(scope="module")
def spin() -> Path:
    """A bare-metal loop that never traps."""
    from machine.asm import build_asm

    return build_asm("1: j 1b\n")


def test_ctrl_c_while_loading_exits_130_with_one_line() -> None:
    status, out, err, took = interrupt(["trace", "--user", "hello"], importing)
    assert (status, out, err) == (130, "", "\nprivlab: interrupted\n")
    assert took < PROMPT


def assert_interrupted_quietly(code: str) -> None:
    """`python -c code trace --user hello`, where code sends itself SIGINT somewhere on
    the way into the command: status 130, one line, nothing on stdout."""
    p = subprocess.run([sys.executable, "-c", code, "trace", "--user", "hello"],
                       capture_output=True, text=True, timeout=60, check=False)
    assert (p.returncode, p.stdout, p.stderr) == (130, "", "\nprivlab: interrupted\n")


def test_ctrl_c_while_parsing_exits_130_with_one_line() -> None:
    """SIGINT as the command line is parsed (every command module is being imported):
    the earliest moment privlab's own code runs."""
    code = ("import os, signal, sys\n"
            "import privlab.cli.main\n"
            "m = sys.modules['privlab.cli.main']\n"
            "parser = m.build_parser\n"
            "def interrupted(only=None):\n"
            "    os.kill(os.getpid(), signal.SIGINT)\n"
            "    return parser(only)\n"
            "m.build_parser = interrupted\n"
            "sys.exit(m.main())\n")
    assert_interrupted_quietly(code)


def test_ctrl_c_while_the_command_line_is_imported_exits_130_with_one_line() -> None:
    """SIGINT as the console script imports the command line (harness/entry.py runs
    first), before any of main's own handling is in force."""
    code = ("import importlib.abc, os, signal, sys\n"
            "class Interrupt(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'privlab.cli.main':\n"
            "            os.kill(os.getpid(), signal.SIGINT)\n"
            "        return None\n"
            "from privlab.entry import main\n"
            "sys.meta_path.insert(0, Interrupt())\n"
            "sys.exit(main())\n")
    assert_interrupted_quietly(code)


def test_the_console_script_and_python_m_privlab_start_at_the_entry() -> None:
    import tomllib

    from privlab import entry
    from privlab.errors import ExitStatus

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["privlab"] == "privlab.entry:main"
    assert "from .entry import main" in (REPO_ROOT / "harness/__main__.py").read_text()
    assert entry.INTERRUPTED == ExitStatus.INTERRUPTED


def test_an_interrupted_trace_prints_its_rows_so_far() -> None:
    # At 1 ns an instruction compute's ticks are few, so its rows come slowly.
    status, out, err, took = interrupt(["trace", "--no-capture", "--icount-shift", "0",
                                        *FOREVER, "--user",
                                        "compute", "100000000000"], guest_running)
    assert status == 130 and took < PROMPT
    assert re.match(r"\nprivlab: interrupted at pc 0x[0-9a-f]+ \S+\+0x[0-9a-f]+( \S+:\d+)? "
                    r"in [USM]-mode after \d+ instructions\nprocesses:\n  pid 1 ", err), err
    rows = out.splitlines()
    assert rows[0].split() == ["seq", "instret", "U", "S", "M", "path", "event"]
    assert rows[1].split()[:2] == ["0", "62"]             # from the first event on
    assert any("s_timer" in row for row in rows)          # compute's time slices


@pytest.mark.parametrize("command", [["inspect", "--at", "pc:0x1234"],
                                     ["pagetable"], ["translate", "0x80000000"]])
def test_an_inspector_stops_a_guest_spinning_without_traps(command: list[str],
                                                           spin: Path) -> None:
    status, out, err, took = interrupt([*command, *FOREVER, "--bios", "none", "--kernel",
                                        str(spin)], guest_running)
    assert (status, out) == (130, "") and took < PROMPT
    at = "pc:0x1234" if command[0] == "inspect" else "syscall:*"
    assert re.fullmatch(rf"privlab: never reached {re.escape(at)}: interrupted at pc "
                        r"0x8000000c _start\+0xc \S+\.S:\d+ in M-mode after \d+ instructions\n",
                        err), err


def test_run_stops_a_spinning_guest(spin: Path) -> None:
    status, out, err, took = interrupt(["run", "--bios", "none", "--kernel", str(spin)],
                                       guest_running)
    assert (status, out) == (130, "") and took < PROMPT
    assert re.fullmatch(r"\nprivlab: interrupted at pc 0x8000000c _start\+0xc \S+\.S:\d+ "
                        r"in M-mode after \d+ instructions\n", err), err


def test_a_stopped_and_continued_run_goes_on(spin: Path) -> None:
    """Ctrl-Z then fg (SIGSTOP, SIGCONT), or a profiler attaching, is not a Ctrl-C: the
    wait for SIGINT is woken by EINTR, and CPython then hands back an empty siginfo."""
    proc = subprocess.Popen([*PRIVLAB, "run", "--max-insns", "20000000000", "--bios",
                             "none", "--kernel", str(spin)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        wait_until(guest_running, proc)
        for _ in range(3):
            proc.send_signal(signal.SIGSTOP)
            time.sleep(0.1)                # longer than the SIGINT wait's poll
            proc.send_signal(signal.SIGCONT)
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err     # ended by the Ctrl-C, not before it


def test_an_interrupted_grade_keeps_the_previous_reports(tmp_path: Path) -> None:
    """The first grade writes its set; a second one, of a changed submission, is
    interrupted while its tests run: the first set is still there, whole, with
    nothing of the second beside it, and its test process is gone."""
    from privlab.cli.main import main

    sub = tmp_path / "sub"
    shutil.copytree(KERNEL_DIR, sub / "kernel")
    out = tmp_path / "out"
    grade = ["grade", "taskinfo", "--submission", str(sub), "--out", str(out),
             "-k", "test_base_runs", "--jobs", "1"]
    assert main(grade) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == ["junit.xml", "kernel.elf", "report.txt", "results.json"]
    (sub / "kernel" / "taskinfo.c").write_text("int broken = ;\n")   # another result
    shards: list[int] = []

    def testing(proc: subprocess.Popen[bytes]) -> bool:
        shards.extend(c for c in _children(proc.pid) if "privlab.grade.plugin" in _cmdline(c))
        return bool(shards)

    status, stdout, err, took = interrupt(grade, testing)
    assert (status, stdout, err) == (130, "", "\nprivlab: interrupted\n")
    assert took < PROMPT
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [pid for pid in shards if _alive(pid)] == []


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for its (gone) parent's init to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_ctrl_c_in_a_terminal(tmp_path: Path) -> None:
    """Ctrl-C typed in a terminal (tmux): the run stops, the shell sees status 130."""
    session = f"privlab-{os.getpid()}"
    status_file = tmp_path / "status"
    marker = "100000000007"                      # compute's argument: finds the process
    command = (f"cd {REPO_ROOT} && {sys.executable} -m privlab run --user compute {marker}; "
               f"echo $? > {status_file}; sleep 60")
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "30",
                    command], check=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            pids = [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()
                    and _cmdline(int(e.name)).startswith(f"{sys.executable} -m privlab run")
                    and marker in _cmdline(int(e.name))]
            if pids and _busy(pids[0]) > 2.5:    # past its imports and boot: computing
                break
            assert time.monotonic() < deadline, _pane(session)
            time.sleep(0.05)
        sent = time.monotonic()
        subprocess.run(["tmux", "send-keys", "-t", session, "C-c"], check=True)
        while not status_file.exists() and time.monotonic() - sent < 10:
            time.sleep(0.02)
        took = time.monotonic() - sent
        time.sleep(0.2)
        pane = _pane(session)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False,
                       capture_output=True)
    assert status_file.read_text() == "130\n", pane
    assert took < PROMPT
    assert re.search(r"privlab: interrupted at pc 0x[0-9a-f]+ .*in [USM]-mode after \d+ "
                     r"instructions", pane), pane
    assert "Traceback" not in pane


def _busy(pid: int) -> float:
    """CPU seconds the process has used."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pane(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-J", "-t", session], capture_output=True,
                          text=True, check=False).stdout


def test_the_ctrl_c_helper_ends_with_its_block_not_a_poll_later() -> None:
    """on_sigint's helper thread waits for SIGINT with a timeout; the end of the block
    wakes it at once (sigint.WAKE), so a run does not wait out a poll as it ends. With
    a poll of an hour the block still ends, and a SIGINT after it is the main thread's
    KeyboardInterrupt again. (The child starts with Python's own SIGINT handler, as
    from a terminal: a Python started by a process that ignores SIGINT keeps ignoring
    it, and then no KeyboardInterrupt could come.)"""
    code = ("import os, signal, sys, threading, time\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "import privlab.sigint as s\n"
            "s.POLL_SECONDS = 3600\n"
            "with s.on_sigint(lambda: None):\n"
            "    pass\n"
            "assert threading.active_count() == 1, threading.enumerate()\n"
            "try:\n"
            "    os.kill(os.getpid(), signal.SIGINT)\n"
            "    time.sleep(5)\n"
            "except KeyboardInterrupt:\n"
            "    sys.exit(7)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=30, check=False)
    assert (p.returncode, p.stderr) == (7, "")
