"""sstatus and mstatus accesses complete inside Unicorn's CSR helpers
(harness/native/csrfast.c), with QEMU 7.2's view of the registers, the same interrupt
points run or stepped, and the illegal-instruction exception where the level forbids
the access."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from machine.asm import build_asm
from privlab.abi.csr import Csr, Exc, Priv
from privlab.machine import Machine, Stop, load_elf
from privlab.native.library import load_library
from privlab.trace import TrapEvent

Bare = Callable[..., Machine]
UXL_SXL_64 = 0xA << 32          # UXL = SXL = 2 (64-bit), as QEMU 7.2 shows them
SSTATUS_SUM = 1 << 18
MSTATUS_MPP_S = 1 << 11


def fast_accesses(direct: bool = False) -> int:
    return int(load_library().csrfast_count(direct))


def enter_s(body: str) -> str:
    """M opens PMP and mrets to S (no paging) at `supervisor`, which runs body."""
    return f"""
    OPEN_PMP
    ENTER 1, supervisor
supervisor:
{body}
    ecall                       // to M: the default trap powers off with mcause (9)
"""


def test_s_mode_reads_and_writes_see_qemus_sstatus_without_a_code_hook(bare: Bare) -> None:
    m = bare(build_asm(enter_s("""
    csrr a1, sstatus
    li t0, 1 << 18              // SUM
    csrs sstatus, t0
    csrr a2, sstatus
    csrc sstatus, t0
    csrr a3, sstatus
    """)))
    before = fast_accesses()
    result = m.run(max_insns=10_000)
    assert result.stop is Stop.HALT and result.exit_status == int(Exc.SUPERVISOR_ECALL)
    a1, a2, a3 = m.hart.x(11), m.hart.x(12), m.hart.x(13)
    assert a1 & (3 << 32) == 2 << 32            # UXL: Unicorn's own sstatus has none
    assert a2 == a1 | SSTATUS_SUM and a3 == a1
    # every one of them done in the helper, with the csrc and csrs of mstatus in M
    assert fast_accesses() - before == 7
    assert m.hart.csr(Csr.SSTATUS) == a1          # the host reads what the guest read


def test_interrupt_enable_toggles_go_straight_to_unicorns_mstatus_word(bare: Bare) -> None:
    """The spinlock pattern (xv6's push_off/pop_off): SIE and SPP writes and every read
    are done on Unicorn's mstatus word itself; SUM (which flushes the TLB in Unicorn's
    write_mstatus) and the M-mode MPP writes go through its register API. Either way
    the guest reads QEMU 7.2's sstatus, and SD follows FS as write_mstatus makes it."""
    m = bare(build_asm("""
    li t0, 0x6000               // FS = dirty: SD set (through the API, FS is not direct)
    csrs mstatus, t0
""" + enter_s("""
    csrr a1, sstatus
    csrsi sstatus, 2            // SIE on, nothing pending
    csrr a2, sstatus
    csrci sstatus, 2            // SIE off
    li t0, 1 << 8
    csrs sstatus, t0            // SPP
    csrr a3, sstatus
    li t0, 1 << 18
    csrs sstatus, t0            // SUM: through the API
    csrr a4, sstatus
    """)))
    before, before_direct = fast_accesses(), fast_accesses(direct=True)
    result = m.run(max_insns=10_000)
    assert result.stop is Stop.HALT and result.exit_status == int(Exc.SUPERVISOR_ECALL)
    a1, a2, a3, a4 = (m.hart.x(r) for r in (11, 12, 13, 14))
    sd = 1 << 63
    assert a1 & sd and a1 & 0x6000 == 0x6000 and a1 & (3 << 32) == 2 << 32
    assert a2 == a1 | 2
    assert a3 == a1 | 1 << 8
    assert a4 == a3 | SSTATUS_SUM
    assert m.hart.csr(Csr.SSTATUS) == a4
    # csrs FS, csrc/csrs MPP (M), then eight in S: all done in the helper. Three reached
    # the register API: FS, MPP = S, SUM (the csrc of MPP changed nothing: direct)
    assert fast_accesses() - before == 11
    assert fast_accesses(direct=True) - before_direct == 8


def test_m_mode_mstatus_read_shows_uxl_sxl_and_the_mpp_written(bare: Bare) -> None:
    m = bare(build_asm("""
    li t0, 0x1800
    csrc mstatus, t0
    li t0, 0x0800               // MPP = S
    csrs mstatus, t0
    csrr a1, mstatus
    PASS
    """))
    before = fast_accesses()
    assert m.run(max_insns=1_000).stop is Stop.HALT
    assert m.hart.x(11) & (0xF << 32 | 0x1800) == UXL_SXL_64 | MSTATUS_MPP_S
    assert fast_accesses() - before == 3


def test_sstatus_from_u_is_an_illegal_instruction(bare: Bare) -> None:
    m = bare(build_asm("""
    OPEN_PMP
    ENTER 0, user
user:
    csrr a1, sstatus
    PASS
    """))
    result = m.run(max_insns=1_000)
    assert result.stop is Stop.HALT and result.exit_status == int(Exc.ILLEGAL_INSTRUCTION)
    trap = next(e for e in m.events if isinstance(e, TrapEvent))
    assert (trap.priv_from, trap.priv_to, trap.code) == \
        (Priv.U, Priv.M, int(Exc.ILLEGAL_INSTRUCTION))
    assert trap.tval == 0x100025F3               # the instruction: csrr a1, sstatus


# SSIP pending and delegated while SIE = 0 in S; csrsi sstatus, SIE unmasks it. The
# interrupt must be taken right after that instruction, at the same instret, in a run
# and step by step (a step enters the next block's hook before it counts itself).
UNMASK = """
    OPEN_PMP
    li t0, 1 << 1
    csrw mideleg, t0            // SSIP to S
    csrw mie, t0
    csrs mip, t0                // pending, masked: S runs with SIE = 0
    la t0, strap
    csrw stvec, t0
    ENTER 1, supervisor
supervisor:
    addi a0, a0, 1
    csrsi sstatus, 2            // SIE: taken before the next instruction
after:
    addi a0, a0, 1
    addi a0, a0, 1
    j 1f
1:  FAIL 1
    .align 2
strap:
    PASS
"""


# Instructions retired when the interrupt is taken, through the csrsi: the prologue's
# la + csrw (3), OPEN_PMP (4), li + csrw + csrw + csrs (4), la + csrw (3, stvec),
# la + csrw (3, mepc), li + csrc (3: li is two), li + csrs (3), mret, addi, csrsi.
INSTRET_AT_TRAP = 26


@pytest.mark.parametrize("stepped", [False, True], ids=["run", "stepped"])
def test_unmasking_sie_takes_the_interrupt_at_the_next_instruction(bare: Bare,
                                                                   stepped: bool) -> None:
    elf = build_asm(UNMASK)
    m = bare(elf)
    if stepped:
        for _ in range(1_000):
            result = m.step()
            if result.stop is not Stop.STEP:
                break
    else:
        result = m.run(max_insns=1_000)
    assert result.stop is Stop.HALT
    trap = next(e for e in m.events if isinstance(e, TrapEvent) and e.interrupt)
    assert (trap.code, trap.priv_from, trap.priv_to) == (1, Priv.S, Priv.S)
    assert trap.epc == load_elf(elf).symbol("after")
    assert m.hart.x(10) == 1                    # only the addi before it ran
    assert trap.instret == INSTRET_AT_TRAP
