"""get_time and task_info's time read one clock (kernel/clock.c): a process that was
running before two get_time readings t1 < t2 gets a task_info time (ms since it was
first scheduled) of at least t2 - t1, whatever the phase of t1 within its millisecond
and however coarse the guest clock (`--icount-shift`). `lab_taskinfo clock` forks
fresh processes that read t1 at once, spin past 1..3 millisecond boundaries and call
task_info (userland/lab_taskinfo.c)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from privlab.api import Session
from privlab.machine import Stop

ROUNDS = 6
PASSED = f"clock: {ROUNDS} rounds, time >= t2 - t1 in each\nPASS tok\n"


@pytest.mark.parametrize(("arch", "shift"), [("rv64", 0), ("rv64", 4), ("rv64", 10),
                                             ("rv32", 0)])
def test_task_info_time_covers_every_interval_get_time_saw(arch: str, shift: int) -> None:
    s = Session.boot("lab_taskinfo", ["clock", "tok", str(ROUNDS)], arch=arch,
                     icount_shift=shift)
    try:
        r = s.run(max_insns=400_000_000)
        assert s.console == PASSED
        assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    finally:
        s.close()


def test_privlab_run_with_icount_shift_4_keeps_one_clock() -> None:
    proc = subprocess.run([sys.executable, "-m", "privlab", "run", "--icount-shift", "4",
                           "--user", "lab_taskinfo", "clock", "tok", str(ROUNDS)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          check=False)
    assert (proc.returncode, proc.stdout) == (0, PASSED), proc.stderr
