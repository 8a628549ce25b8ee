"""mcountinhibit as the privileged spec (3.1.13) defines it: a set CY or IR bit stops
mcycle or minstret; clearing it lets the counter go on from where it stopped. (QEMU 7.2
keeps counting while inhibited, so this is not a differential conformance program.)
Writes while inhibited set the stopped value. minstret's carry into minstreth on RV32
(riscv-tests' instret_overflow, which QEMU 7.2 fails) follows the spec too."""

from __future__ import annotations

import pytest

from machine.asm import build_asm
from privlab.machine import Stop

ARCHES = ["rv64", "rv32"]

INHIBIT = """
    li t0, 5                    // CY | IR
    csrw mcountinhibit, t0
    csrr a0, minstret
    csrr a2, mcycle
    nop
    nop
    nop
    csrr a1, minstret
    csrr a3, mcycle
    bne a0, a1, 1f              // minstret stopped
    bne a2, a3, 2f              // mcycle stopped
    li t1, 1000
    csrw minstret, t1           // a write while stopped is the stopped value
    csrr a1, minstret
    bne a1, t1, 3f
    csrw mcountinhibit, zero    // (this write retires with IR clear: it counts)
    csrr a4, minstret
    addi a4, a4, -1001
    bnez a4, 4f                 // went on from 1000: only the csrw counted
    csrr a2, mcycle
    nop
    csrr a3, mcycle
    beq a2, a3, 5f              // mcycle runs again
    PASS
1:  FAIL 1
2:  FAIL 2
3:  FAIL 3
4:  FAIL 4
5:  FAIL 5
"""


@pytest.mark.parametrize("arch", ARCHES)
def test_mcountinhibit_stops_and_resumes_mcycle_and_minstret(bare, arch: str) -> None:
    m = bare(build_asm(INHIBIT, arch))
    r = m.run(max_insns=10_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()


OVERFLOW = """
    csrw minstreth, zero
    li t0, -1
    csrw minstret, t0           // the next instruction reads what was written ...
    csrr a0, minstret
    csrr a1, minstreth          // ... and its retirement carries into minstreth
    bne a0, t0, 1f
    li t1, 1
    bne a1, t1, 2f
    PASS
1:  FAIL 1
2:  FAIL 2
"""


def test_rv32_minstret_write_then_retire_carries_into_minstreth(bare) -> None:
    m = bare(build_asm(OVERFLOW, "rv32"))
    r = m.run(max_insns=10_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()
