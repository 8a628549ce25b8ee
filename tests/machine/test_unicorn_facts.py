"""The Unicorn 2.1.4 behaviours the native core is built around (UNICORN-RISCV.md),
reproduced on bare Unicorn with no core attached. If an upgrade changes one, the test
names the workaround in harness/native to revisit."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from unicorn import Uc, UcError
from unicorn.riscv_const import (
    UC_RISCV_REG_MSTATUS,
    UC_RISCV_REG_PC,
    UC_RISCV_REG_PRIV,
)
from unicorn.unicorn_const import (
    UC_ARCH_RISCV,
    UC_ERR_INSN_INVALID,
    UC_ERR_READ_UNMAPPED,
    UC_HOOK_INSN_INVALID,
    UC_HOOK_INTR,
    UC_MODE_RISCV64,
)

from harness.machine import load_elf
from machine.asm import build_asm

RAM = 0x80000000


def bare_unicorn(body: str) -> tuple[Uc, dict[str, int]]:
    image = load_elf(build_asm(body))
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.mem_map(RAM, 1 << 20)
    for seg in image.segments:
        uc.mem_write(seg.paddr, seg.data)
    return uc, image.symbols


def run_catching(uc: Uc, hooks: dict[int, Callable[..., object]]) -> int:
    for kind, fn in hooks.items():
        uc.hook_add(kind, fn)
    try:
        uc.emu_start(RAM, RAM + 0x1000, count=200)
    except UcError as e:
        return int(e.errno)
    return 0


def test_exception_hook_sees_pc_of_faulting_instruction_plus_4_even_compressed() -> None:
    # Fact 2: epc = pc - 4 (trap.c relies on it). c.unimp-like: 16-bit zero word.
    uc, sym = bare_unicorn("""
    .globl at
    at:
        .hword 0
        .hword 0
    """)
    seen: list[tuple[int, int]] = []

    def intr(uc: Uc, intno: int, _ud: object) -> None:
        seen.append((intno, uc.reg_read(UC_RISCV_REG_PC)))
        uc.emu_stop()

    run_catching(uc, {UC_HOOK_INTR: intr})
    assert seen == [(2, sym["at"] + 4)]


def test_every_ecall_is_reported_as_code_8_whatever_the_privilege() -> None:
    # Fact 1: on_intr adds the privilege to get 8/9/11.
    uc, _sym = bare_unicorn("""
    .globl at
    at:
        ecall
    """)
    seen: list[int] = []
    run_catching(uc, {UC_HOOK_INTR: lambda uc, n, _: (seen.append(n), uc.emu_stop())})
    assert uc.reg_read(UC_RISCV_REG_PRIV) == 3
    assert seen == [8]


def test_ebreak_goes_to_the_invalid_instruction_hook_with_pc_at_the_ebreak() -> None:
    # Fact 4. Declining (False) stops emulation; accepting (True) without moving PC
    # runs the ebreak again. hooks.c on_invalid accepts and moves PC by delivering the
    # breakpoint trap, so execution continues in the trap vector.
    uc, sym = bare_unicorn("""
    .globl at
    at:
        ebreak
    """)
    pcs: list[int] = []

    def decline(uc: Uc, _ud: object) -> bool:
        pcs.append(uc.reg_read(UC_RISCV_REG_PC))
        return False

    assert run_catching(uc, {UC_HOOK_INSN_INVALID: decline}) == UC_ERR_INSN_INVALID
    assert pcs == [sym["at"]]
    uc, sym = bare_unicorn("ebreak")
    calls: list[int] = []
    run_catching(uc, {UC_HOOK_INSN_INVALID: lambda uc, _: (calls.append(1), True)[1]})
    assert len(calls) > 1


def test_unmapped_load_is_a_host_error_with_pc_at_the_instruction() -> None:
    # Fact 5: machine.py turns it into an access fault at that pc.
    uc, sym = bare_unicorn("""
        li t0, 0x40000000
    .globl at
    at:
        lw t1, 0(t0)
    """)
    assert run_catching(uc, {}) == UC_ERR_READ_UNMAPPED
    assert uc.reg_read(UC_RISCV_REG_PC) == sym["at"]


@pytest.mark.parametrize(("bit", "kept"), [(20, True), (21, False), (22, False),
                                           (29, True), (30, True)])
def test_unicorn_keeps_tw_and_tsr_at_bits_29_and_30(bit: int, kept: bool) -> None:
    # csrops.c keeps TW/TSR itself (mstatus_extra) because of this.
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.reg_write(UC_RISCV_REG_MSTATUS, 1 << bit)
    assert bool(uc.reg_read(UC_RISCV_REG_MSTATUS) & (1 << bit)) is kept


def test_rdtime_is_illegal_even_in_m_mode() -> None:
    # Fact 8: the core emulates time from instructions retired.
    uc, _ = bare_unicorn("rdtime t0")
    seen: list[int] = []
    run_catching(uc, {UC_HOOK_INTR: lambda uc, n, _: (seen.append(n), uc.emu_stop())})
    assert seen == [2]


def test_s_mode_counter_read_traps_while_unicorns_mcounteren_is_zero() -> None:
    # The core keeps Unicorn's mcounteren at 0 (the guest's value is its own copy), so
    # every counter read below M reaches the core, which applies the guest's value.
    uc, _ = bare_unicorn("""
        rdcycle t0
        rdcycle t1
    """)
    uc.reg_write(UC_RISCV_REG_PRIV, 1)
    seen: list[int] = []
    run_catching(uc, {UC_HOOK_INTR: lambda uc, n, _: (seen.append(n), uc.emu_stop())})
    assert seen == [2]


def test_fp_csrs_cannot_be_read_through_the_register_api() -> None:
    """uc_reg_read of FCSR returns host bytes, not the CSR (so harness/native/regs.c
    maps no FP CSR and the API calls them unavailable)."""
    from unicorn.riscv_const import UC_RISCV_REG_FCSR

    from harness.abi.csr import Csr
    from harness.machine import Machine
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    assert uc.reg_read(UC_RISCV_REG_FCSR) > 0xFF          # fcsr has 8 bits
    m = Machine(64)
    try:
        for csr in (Csr.FFLAGS, Csr.FRM, Csr.FCSR):
            with pytest.raises(KeyError, match="is not available"):
                m.hart.csr(csr)
    finally:
        m.close()
