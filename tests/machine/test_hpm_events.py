"""The programmable counters' exact counts on privlab (harness/native/hpm.c).

mhpmevent 2 makes a counter count instructions as minstret does (a write takes effect
after the writing instruction retires), mhpmevent 1 cycles as mcycle does (guest ns:
2^shift per instruction); mcountinhibit bit N stops counter N and clearing it lets it
go on; event 0 stops it where it is; two counters may count one event; RV32's halves
carry. QEMU 7.2 differs in each of these (docs/machine.md, "Performance counters"),
and without -icount its counts follow the host clock, so these are not a differential
conformance program: tests/conformance/hpm_events.S is, for what QEMU and the spec
agree on. Each program powers off with the number of the first check that failed. A
snapshot puts a counting counter back at its count (hpm.c keeps it as an offset).
"""

from __future__ import annotations

import pytest

from machine.asm import build_asm
from privlab.abi.csr import Csr
from privlab.machine import Stop
from privlab.machine.snapshot import PageStore, restore_machine, take_snapshot

ARCHES = ["rv64", "rv32"]

COUNTS_INSTRUCTIONS_FROM_THE_WRITE = """
    li t0, 2
    csrw 0x323, t0              // mhpmevent3 = instructions
    li t1, 1000
    csrw 0xb03, t1              // mhpmcounter3 = 1000, after this csrw retires
    csrr a0, 0xb03              // 1000
    bne a0, t1, 1f
    nop
    nop
    csrr a1, 0xb03              // 1000 + csrr, bne, nop, nop
    addi a1, a1, -1004
    bnez a1, 2f
    csrr a2, 0xc03              // hpmcounter3 is the same counter: 1000 + 7
    addi a2, a2, -1007
    bnez a2, 3f
    PASS
1:  FAIL 1
2:  FAIL 2
3:  FAIL 3
"""

TWO_COUNTERS_ONE_EVENT = """
    li t0, 2
    csrw 0x323, t0              // counters 3 and 4 both count instructions
    csrw 0x324, t0
    csrw 0xb03, zero
    csrw 0xb04, zero
    csrr a0, 0xb03              // csrw 0xb04 since 3 was written: 1
    csrr a1, 0xb04              // csrr a0 since 4 was written: 1
    li t1, 1
    bne a0, t1, 1f
    bne a1, t1, 2f
    PASS
1:  FAIL 1
2:  FAIL 2
"""

INHIBIT_STOPS_AND_RESUMES = """
    li t0, 2
    csrw 0x323, t0
    csrw 0xb03, zero
    li t0, 8                    // mcountinhibit bit 3 (this li counts: 1)
    csrw mcountinhibit, t0      // stops counter 3 before this csrw retires
    csrr a0, 0xb03              // 1
    nop
    csrr a1, 0xb03              // still 1
    li t1, 1
    bne a0, t1, 1f
    bne a1, t1, 2f
    csrw mcountinhibit, zero    // goes on from 1, this csrw counting
    csrr a2, 0xb03              // 2
    li t1, 2
    bne a2, t1, 3f
    PASS
1:  FAIL 1
2:  FAIL 2
3:  FAIL 3
"""

EVENT_ZERO_STOPS_WHERE_IT_IS = """
    li t0, 2
    csrw 0x323, t0
    csrw 0xb03, zero
    nop
    csrw 0x323, zero            // nop counted, this csrw not: counter 3 stops at 1
    csrr a0, 0xb03
    nop
    csrr a1, 0xb03
    li t1, 1
    bne a0, t1, 1f
    bne a1, t1, 2f
    li t0, 0x12345              // no such event: it stays stopped
    csrw 0x323, t0
    nop
    csrr a2, 0xb03
    bne a2, t1, 3f
    PASS
1:  FAIL 1
2:  FAIL 2
3:  FAIL 3
"""

CYCLES_COUNT_AS_MCYCLE = """
    li t0, 1
    csrw 0x325, t0              // mhpmevent5 = cycles
    csrw mcycle, zero
    csrw 0xb05, zero
    nop
    csrr a0, mcycle             // csrw, csrw, nop since mcycle was written
    csrr a1, 0xb05              // csrw, nop, csrr since counter 5 was written
    bne a0, a1, 1f
    li t1, 3 << SHIFT
    bne a1, t1, 2f
    PASS
1:  FAIL 1
2:  FAIL 2
"""

RV32_HALVES_CARRY = """
    li t0, 2
    csrw 0x323, t0
    csrw 0xb83, zero            // mhpmcounter3h = 0
    li t0, -1
    csrw 0xb03, t0              // the next instruction reads what was written ...
    csrr a0, 0xb03
    csrr a1, 0xb83              // ... and its retirement carries into the high half
    bne a0, t0, 1f
    li t1, 1
    bne a1, t1, 2f
    PASS
1:  FAIL 1
2:  FAIL 2
"""


def _passes(bare, source: str, arch: str, **board: object) -> None:
    m = bare(build_asm(source, arch), **board)
    r = m.run(max_insns=10_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()


@pytest.mark.parametrize("arch", ARCHES)
def test_instructions_event_counts_from_the_value_written_after_the_write(bare,
                                                                          arch: str) -> None:
    _passes(bare, COUNTS_INSTRUCTIONS_FROM_THE_WRITE, arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_two_counters_selecting_one_event_both_count(bare, arch: str) -> None:
    _passes(bare, TWO_COUNTERS_ONE_EVENT, arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_mcountinhibit_bit_stops_the_counter_and_clearing_it_resumes(bare, arch: str) -> None:
    _passes(bare, INHIBIT_STOPS_AND_RESUMES, arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_event_zero_or_an_unknown_event_stops_the_counter_where_it_is(bare,
                                                                      arch: str) -> None:
    _passes(bare, EVENT_ZERO_STOPS_WHERE_IT_IS, arch)


@pytest.mark.parametrize("shift", [0, 3])
@pytest.mark.parametrize("arch", ARCHES)
def test_cycles_event_counts_guest_ns_as_mcycle(bare, arch: str, shift: int) -> None:
    _passes(bare, f"#define SHIFT {shift}\n{CYCLES_COUNT_AS_MCYCLE}", arch, icount_shift=shift)


def test_rv32_counter_low_half_carries_into_the_high_half(bare) -> None:
    _passes(bare, RV32_HALVES_CARRY, "rv32")


COUNTING_LOOP = """
    li t0, 2
    csrw 0x323, t0              // counter 3 counts instructions
    csrw 0xb03, zero
1:  j 1b
"""


def test_a_snapshot_restores_a_counting_counter_to_its_count_then(bare) -> None:
    m = bare(build_asm(COUNTING_LOOP, "rv64"))
    m.run(max_insns=1_000)
    store = PageStore(m)
    then = m.hart.csr(Csr.MHPMCOUNTER3)
    snap = take_snapshot(m, store)
    m.run(max_insns=500)
    assert m.hart.csr(Csr.MHPMCOUNTER3) == then + 500
    restore_machine(m, store, snap)
    assert m.hart.csr(Csr.MHPMCOUNTER3) == then
    m.run(max_insns=100)
    assert m.hart.csr(Csr.MHPMCOUNTER3) == then + 100
