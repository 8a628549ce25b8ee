"""Ctrl-C in gdb stops a running guest; a debugging session leaves the guest's trace
exactly as a plain run makes it (time does not advance while stopped)."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Callable

from gdb.helpers import GDB_TIMEOUT, Served, boot, gdb_argv
from harness.build.images import Images
from harness.machine import Stop

Gdb = Callable[..., str]
Serve = Callable[..., Served]
LONG = ["1000000000"]                      # compute: minutes of work
TIMER = ("quiet", "timer_hz=10000")        # a time slice every 100,000 instructions
RUNNING = 5_000_000                        # past boot: the program is computing
WAIT = 20.0


def wait_until_running(s: Served) -> None:
    deadline = time.monotonic() + WAIT
    while s.machine.hart.state.instret < RUNNING:
        assert time.monotonic() < deadline, "the guest never got going"
        time.sleep(0.05)


def test_ctrl_c_in_gdb_interrupts_a_running_guest(served: Serve, images: Images) -> None:
    s = served("compute", LONG, flags=TIMER)
    proc = subprocess.Popen(gdb_argv(images, s.port, ["continue", "p $priv", "p/x $pc",
                                                      "kill"], user="compute"),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_until_running(s)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=GDB_TIMEOUT)
    finally:
        proc.kill()
    assert "Program received signal SIGINT" in out, out
    assert "killed" in out, out
    result = s.finish()
    assert result.stop is Stop.USER and result.instret > RUNNING


def test_debugging_session_leaves_the_trace_of_a_plain_run(
        served: Serve, gdb: Gdb, images: Images) -> None:
    args = ["200000", "2"]
    plain = boot(images, "compute", args, TIMER)
    assert plain.run().stop is Stop.HALT
    expected = [e.to_json() for e in plain.events]
    assert any(e.get("interrupt") for e in expected)   # time matters in this run
    s = served("compute", args, flags=TIMER)
    out = gdb(s.port, ["break compute.c:11", "continue", "continue 40", "p $pc", "stepi 60",
                       "info registers", "p $sstatus", "p $mip", "p $time", "monitor csr",
                       "monitor traps", "x/8xw $sp", "info breakpoints", "delete",
                       "break syscall.c:syscall", "continue 3", "stepi 25", "delete",
                       "continue"], user="compute")
    assert "exited normally" in out, out
    assert re.search(r"breakpoint already hit 4[0-9] times", out), out
    assert re.search(r"Breakpoint 2, syscall", out), out
    s.finish()
    assert [e.to_json() for e in s.machine.events] == expected
    assert s.machine.console.text() == plain.console.text()
