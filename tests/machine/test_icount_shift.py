"""The coarser deterministic clock, `--icount-shift N`: each instruction retired is 2^N
ns of guest time, as QEMU's `-icount shift=N`. Instruction counts do not change; the
time, cycle and timer deadlines scale (tests/machine/test_trap_delivery.py checks the
counters and the timer at several shifts), and QEMU 7.2 measures the same time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from machine.asm import build_asm
from privlab import qemu
from privlab.build import ARCHES
from privlab.errors import BadInput
from privlab.machine import Machine, Stop

ITERATIONS = 50_150   # two instructions each: about 100,300 instructions timed

# mtime before and after a counted loop; powers off with code = elapsed ticks / 100.
TIMED_LOOP = f"""
    li t0, PLATFORM_CLINT_BASE + CLINT_MTIME
    lw t1, 0(t0)
    li t2, {ITERATIONS}
1:  addi t2, t2, -1
    bnez t2, 1b
    lw t3, 0(t0)
    sub t3, t3, t1
    li t4, 100
    divu t3, t3, t4
    slli t3, t3, 16
    li t6, PLATFORM_FINISHER_BASE
    li t5, FINISHER_FAIL
    or t5, t5, t3
    sw t5, 0(t6)
99: j 99b
"""


def timed_loop_code(shift: int) -> int:
    """What TIMED_LOOP exits with at 2^shift ns per instruction."""
    return (2 * ITERATIONS << shift) // 100 // 100


@pytest.mark.parametrize("shift", [0, 2, 4, 5])
def test_a_timed_loop_measures_2_to_the_shift_ns_per_instruction(bare, shift: int) -> None:
    m = bare(build_asm(TIMED_LOOP), icount_shift=shift)
    r = m.run(max_insns=1_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, timed_loop_code(shift))


@pytest.mark.skipif(qemu.qemu_binary(ARCHES["rv64"]) is None, reason="QEMU 7.2 not installed")
@pytest.mark.parametrize("shift", [0, 2, 4, 5])
def test_qemu_with_the_same_shift_measures_the_same_time(shift: int) -> None:
    reference = qemu.run_qemu(build_asm(TIMED_LOOP), ARCHES["rv64"], timeout_s=30,
                              icount=True, icount_shift=shift)
    # QEMU's process exits with the finisher's code, which the host cuts to 8 bits.
    assert reference.exit_status == timed_loop_code(shift) & 0xFF, reference.stderr


@pytest.mark.parametrize("shift", [-1, 11])
def test_a_shift_outside_qemus_range_is_refused(shift: int) -> None:
    with pytest.raises(BadInput, match="icount shift must be 0 to 10"):
        Machine(64, icount_shift=shift)


def test_privlab_run_refuses_a_bad_shift_in_one_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "privlab", "run", "--icount-shift", "11",
                           "--user", "hello"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].endswith(
        "argument --icount-shift: must be 0 to 10: '11'")
    assert "Traceback" not in proc.stderr


def test_the_default_pace_is_32_ns_an_instruction_everywhere_a_run_starts() -> None:
    """One constant (harness/pace.py) behind the machine, the command line, the grader
    and the QEMU reference: shift 5, QEMU's -icount shift=5."""
    from privlab.api import Session
    from privlab.cli.main import parse
    from privlab.grade.under_test import KernelUnderTest
    from privlab.pace import DEFAULT_ICOUNT_SHIFT

    assert DEFAULT_ICOUNT_SHIFT == 5
    assert Machine(64).icount_shift == 5
    assert parse(["run", "--user", "hello"]).icount_shift == 5
    assert KernelUnderTest.__dataclass_fields__["icount_shift"].default == 5
    assert Session.boot.__kwdefaults__["icount_shift"] == 5
    cmd = qemu.qemu_command(build_asm(TIMED_LOOP), ARCHES["rv64"], Path("log"),
                            icount=True)
    assert cmd[cmd.index("-icount") + 1] == "shift=5"
