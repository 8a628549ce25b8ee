"""Zba/Zbb/Zbc/Zbs instructions, which Unicorn decodes as illegal and the core does
(harness/native/bitmanip.c): each retires exactly once, as an instruction Unicorn runs
does, so instret and the clock are the same as with plain instructions in their place;
a single step does one of them; they take no trap and leave no event; and they work
where the instruction is fetched through the page tables. Every instruction's values
against QEMU 7.2 are the conformance program's (tests/conformance/bitmanip.S)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from machine.asm import SV39_MACROS, build_asm
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.until import AtAddress

A = 0x00F0

# Three bit-manipulation instructions between two reads of minstret; or three addi in
# their place. a0..a2 keep the results, s3 the instret difference.
TIMED = """
    .option arch, +zbb, +zba
    li s1, {a}
    csrr s2, minstret
measured:
    {first}
    {second}
    {third}
    csrr s3, minstret
    sub s3, s3, s2
    PASS
"""
BITMANIP = ("clz a0, s1", "cpop a1, s1", "sh3add a2, s1, s1")
PLAIN = ("addi a0, zero, 56", "addi a1, zero, 4", "addi a2, zero, 0x70")


def timed(arch: str, insns: tuple[str, str, str]) -> Path:
    first, second, third = insns
    return build_asm(TIMED.format(a=A, first=first, second=second, third=third), arch)


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_each_retires_once_and_time_is_as_with_plain_instructions(
        bare: Callable[[Path], Machine], arch: str) -> None:
    xlen = 64 if arch == "rv64" else 32
    results = []
    for insns in (BITMANIP, PLAIN):
        m = bare(timed(arch, insns))
        r = m.run(max_insns=10_000)
        assert r.stop is Stop.HALT and r.status == 0, r
        h = m.hart
        results.append((h.x(10), h.x(11), h.x(12), h.x(19), h.state.instret, h.csr(0xB00)))
        assert len(m.events) == 0   # no trap: not even the illegal instruction Unicorn raised
    emulated, plain = results
    clz = xlen - A.bit_length()
    assert emulated[:3] == (clz, 4, A * 9)
    assert emulated[3] == 4            # csrr, then the three: each counted once
    assert emulated[3:] == plain[3:]   # instret and mcycle at the end, exactly


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_a_step_does_one(bare: Callable[[Path], Machine], arch: str) -> None:
    elf = timed(arch, BITMANIP)
    at = load_elf(elf).symbol("measured")
    assert at is not None
    m = bare(elf)
    r = m.run(max_insns=10_000, until=[AtAddress(at)])
    assert r.stop is Stop.BREAKPOINT and r.pc == at
    before = m.hart.state.instret
    m.step()
    assert m.hart.pc == at + 4
    assert m.hart.x(10) == (64 if arch == "rv64" else 32) - A.bit_length()
    assert m.hart.x(11) == 0               # cpop not run yet
    assert m.hart.state.instret == before + 1
    m.step()
    assert m.hart.pc == at + 8 and m.hart.x(11) == 4


# S runs `clz` and `rev8` at VA 0xC0000000, a page mapped there from elsewhere: the
# core reads the instruction through the page tables. ecall ends the run with the
# results checked in M.
PAGED = SV39_MACROS + r"""
    .option arch, +zbb
    OPEN_PMP
    TWO_SPACES code
    li s1, 0x0102030405060708
    ENTER_S_SV39 root_a, 0xC0000000
trap:
    csrr t0, mcause
    li t1, 9
    bne t0, t1, 1f
    li t1, 7
    bne a0, t1, 1f
    li t1, 0x0807060504030201
    bne a1, t1, 1f
    PASS
1:  FAIL 1

    .data
    .balign 4096
code:
    clz a0, s1
    rev8 a1, s1
    ecall
    .balign 4096
    .fill 1024, 4, 0
    TWO_SPACES_TABLES
"""


def test_one_fetched_through_the_page_tables(bare: Callable[[Path], Machine]) -> None:
    m = bare(build_asm(PAGED, "rv64"))
    r = m.run(max_insns=100_000)
    assert r.stop is Stop.HALT and r.status == 0, r
