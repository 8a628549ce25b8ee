"""Trap delivery, xRET and interrupt behaviour of the hart, on small inline programs.

Each test states one behaviour with exact values: cause, epc, tval, privilege before
and after, mstatus bits. The conformance suite (tests/conformance) covers the same
ground exhaustively and against QEMU; these pin the event record and the machine API.
"""

from __future__ import annotations

import pytest

from machine.asm import build_asm
from privlab.abi.csr import Csr, Priv
from privlab.machine import Stop
from privlab.trace import TrapEvent, XretEvent

ARCHES = ["rv64", "rv32"]

TO_U_WITH_DELEGATED_ECALL = """
    OPEN_PMP
    la t0, s_trap
    csrw stvec, t0
    li t0, 1 << 8              // delegate ecall from U
    csrw medeleg, t0
    ENTER 0, user
user:
    li a7, 64
    li a0, 1
.globl user_ecall
user_ecall:
    ecall
.globl after_ecall
after_ecall:
    PASS
    .align 2
.globl s_trap
s_trap:
    csrr t0, sepc
    addi t0, t0, 4
    csrw sepc, t0
.globl s_sret
s_sret:
    sret
"""


@pytest.mark.parametrize("arch", ARCHES)
def test_u_ecall_delegated_to_s_sets_sepc_scause_and_spp(bare, arch: str) -> None:
    m = bare(build_asm(TO_U_WITH_DELEGATED_ECALL, arch))
    r = m.run(max_insns=10_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    ecall_addr = m.symbols["user_ecall"]
    trap = next(e for e in m.events.traps() if e.priv_from == Priv.U)
    ret = next(e for e in m.events if isinstance(e, XretEvent) and e.priv_to == Priv.U
               and e.seq > trap.seq)
    assert isinstance(trap, TrapEvent) and isinstance(ret, XretEvent)
    assert (trap.interrupt, trap.code, trap.cause) == (False, 8, 8)
    assert (trap.epc, trap.tval) == (ecall_addr, 0)
    assert (trap.priv_from, trap.priv_to) == (Priv.U, Priv.S)
    assert trap.args[7] == 64 and trap.args[0] == 1          # a7 and a0 at the ecall
    assert trap.status_after & (1 << 8) == 0                 # SPP = U
    assert (ret.insn, ret.priv_from, ret.priv_to, ret.pc) == ("sret", Priv.S, Priv.U,
                                                             ecall_addr + 4)
    assert (ret.at, trap.vector) == (m.symbols["s_sret"], m.symbols["s_trap"])


@pytest.mark.parametrize("arch", ARCHES)
def test_trap_from_m_is_never_delegated_and_sets_mpp_m(bare, arch: str) -> None:
    m = bare(build_asm("""
        li t0, -1
        csrw medeleg, t0            // delegate everything delegable
        ecall                       // from M: still taken in M
        FAIL 1
        .align 2
    trap:
        csrr t0, mstatus
        srli t0, t0, 11
        andi t0, t0, 3
        li t1, 3
        bne t0, t1, 1f              // MPP must be M
        PASS
    1:  FAIL 2
    """, arch))
    r = m.run(max_insns=10_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    (trap,) = m.events.traps()
    assert (trap.code, trap.priv_from, trap.priv_to) == (11, Priv.M, Priv.M)


@pytest.mark.parametrize("arch", ARCHES)
def test_illegal_instruction_tval_is_the_instruction_bits(bare, arch: str) -> None:
    m = bare(build_asm("""
    bad:
        .word 0xffffffff
        FAIL 1
    """, arch))
    r = m.run(max_insns=1000)
    assert r.exit_status == 2                                # default trap: exit = mcause
    (trap,) = m.events.traps()
    assert (trap.code, trap.tval) == (2, 0xFFFFFFFF)
    assert trap.epc == m.hart.csr(Csr.MEPC)


@pytest.mark.parametrize("arch", ARCHES)
def test_load_from_unmapped_physical_memory_is_an_access_fault_with_tval(bare, arch: str) -> None:
    m = bare(build_asm("""
        li t1, 0x88000010           // past the end of 128 MiB of RAM
        lw t0, -8(t1)
        FAIL 1
    """, arch))
    r = m.run(max_insns=1000)
    assert r.exit_status == 5                                # load access fault
    (trap,) = m.events.traps()
    assert (trap.code, trap.tval) == (5, 0x88000008)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("addr", [0x0000_0100, 0x4000_0000, 0x8800_0000])
def test_store_outside_ram_and_devices_is_a_store_access_fault(bare, arch: str,
                                                               addr: int) -> None:
    # Below the ROM, in the gap below RAM, and just past 128 MiB of RAM: the core's
    # unmapped-memory hooks cover both sides of RAM, and only those.
    m = bare(build_asm(f"""
        li t1, {addr:#x}
        sw t0, 0(t1)
        FAIL 1
    """, arch))
    r = m.run(max_insns=1000)
    assert r.exit_status == 7                                # store access fault
    (trap,) = m.events.traps()
    assert (trap.code, trap.tval) == (7, addr)


def test_the_unmapped_memory_hooks_leave_ram_out(bare) -> None:
    # docs/unicorn.md#a-memory-hook-over-ram-slows-every-store
    m = bare(build_asm("PASS"))
    base, end = m.memory.ram_base, m.memory.ram_base + m.memory.ram_size
    assert m.hart.unmapped_hook_ranges() == [(0, base - 1), (end, (1 << 64) - 1)]


@pytest.mark.parametrize("arch", ARCHES)
def test_interrupt_pending_while_masked_is_taken_right_after_the_enabling_write(
        bare, arch: str) -> None:
    m = bare(build_asm("""
        li t0, 1 << 1
        csrs mip, t0                // SSIP pending; not delegated, so for M
        csrs mie, t0                // enabled in mie, but mstatus.MIE = 0
        nop
    .globl enable
    enable:
        csrsi mstatus, 8            // MIE = 1: the interrupt is taken right after this
    .globl after
    after:
        FAIL 1
        .align 2
    trap:
        PASS
    """, arch))
    r = m.run(max_insns=1000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    (trap,) = m.events.traps()
    top = 1 << (64 if arch == "rv64" else 32) - 1
    assert (trap.interrupt, trap.code, trap.cause) == (True, 1, top | 1)
    assert trap.epc == m.symbols["after"]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("shift", [0, 4, 7])
def test_machine_timer_interrupt_fires_when_mtime_reaches_mtimecmp(bare, arch: str,
                                                                  shift: int) -> None:
    # --icount-shift N: 2^N ns per instruction (tests/machine/test_icount_shift.py).
    m = bare(build_asm("""
        li t0, PLATFORM_CLINT_BASE + CLINT_MTIME
        lw t1, 0(t0)
        addi t1, t1, 50             // 50 ticks = 5000 instructions from now
        li t0, PLATFORM_CLINT_BASE + CLINT_MTIMECMP
        sw t1, 0(t0)
        sw zero, 4(t0)
        li t0, 1 << 7
        csrw mie, t0
        csrsi mstatus, 8
    1:  j 1b
        .align 2
    trap:
        PASS
    """, arch), icount_shift=shift)
    r = m.run(max_insns=100_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    (trap,) = m.events.traps()
    assert (trap.interrupt, trap.code) == (True, 7)
    # The comparator fires at a block boundary once 50 ticks (5,000 ns) have passed:
    # the first instruction whose time reaches it, rounded up.
    due = -(-5000 >> shift)
    assert due <= trap.instret <= due + 100


@pytest.mark.parametrize("arch", ARCHES)
def test_wfi_fast_forwards_guest_time_to_the_timer(bare, arch: str) -> None:
    m = bare(build_asm("""
        li t0, PLATFORM_CLINT_BASE + CLINT_MTIMECMP
        li t1, 1000000              // 0.1 s of guest time
        sw t1, 0(t0)
        sw zero, 4(t0)
        li t0, 1 << 7
        csrw mie, t0                // MTIE, but mstatus.MIE = 0: wfi returns, no trap
        wfi
        rdtime t0
        li t1, 1000000
        bltu t0, t1, 1f
        PASS
    1:  FAIL 1
    """, arch))
    r = m.run(max_insns=10_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    assert r.instret < 100                                   # no spinning: time skipped
    assert m.hart.mtime() >= 1_000_000


@pytest.mark.parametrize("arch", ARCHES)
def test_wfi_with_no_interrupt_source_is_diagnosed(bare, arch: str) -> None:
    m = bare(build_asm("""
        csrw mie, zero
        wfi
        FAIL 1
    """, arch))
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.ERROR
    assert r.message.startswith("wfi with no interrupt source at pc ")


@pytest.mark.parametrize("arch", ARCHES)
def test_trap_storm_is_stopped_with_cause_epc_and_tval(bare, arch: str) -> None:
    m = bare(build_asm("""
        li t1, 0x88000000
        lw t0, 0(t1)                // load access fault, handler returns to it again
        .align 2
    trap:
        mret
    """, arch))
    r = m.run(max_insns=10_000_000)
    assert r.stop is Stop.ERROR
    assert "trap storm: fault_load (cause 0x5)" in r.message
    assert "tval 0x88000000" in r.message
    assert len(m.events.traps()) == 1001


@pytest.mark.parametrize("arch", ARCHES)
def test_a_fault_whose_handler_never_xrets_is_a_trap_storm(bare, arch: str) -> None:
    """The vector is a plain `ret` (an unfinished lab's stvec): each fault jumps back
    into the code that faults, instructions retire in between, and no xRET ever comes:
    the same store access fault, same epc and tval, 1,001 times, is a storm."""
    m = bare(build_asm("""
        la t0, trap
        csrw mtvec, t0
        li t1, 0x88000000
    again:
        la ra, again
        sw zero, 0(t1)          // store access fault; the vector returns to `again`
        FAIL 1
        .align 2
    trap:
        ret
    """, arch))
    r = m.run(max_insns=10_000_000)
    assert r.stop is Stop.ERROR
    assert "trap storm: fault_store (cause 0x7)" in r.message
    assert "tval 0x88000000" in r.message
    assert len(m.events.traps()) == 1001
    assert not [e for e in m.events if isinstance(e, XretEvent)]


@pytest.mark.parametrize("arch", ARCHES)
def test_budget_stops_at_exactly_that_many_instructions_at_a_block_boundary(
        bare, arch: str) -> None:
    m = bare(build_asm("""
    1:  addi t0, t0, 1
        j 1b
    """, arch))
    r = m.run(max_insns=1001)
    assert r.stop is Stop.BUDGET
    assert r.instret == 1002 or r.instret == 1001           # the block in flight finishes
    assert r.status == 124


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("shift", [0, 3, 6])
def test_counters_read_deterministic_instret_and_time(bare, arch: str, shift: int) -> None:
    m = bare(build_asm("""
        rdinstret a0
        nop
        nop
        rdinstret a1               // three instructions later
        rdcycle a2
        rdtime a3
        ebreak
        .align 2
    trap:
        PASS
    """, arch), icount_shift=shift)
    r = m.run(max_insns=1000)
    assert r.exit_status == 0
    a0, a1, a2, a3 = (m.hart.x(n) for n in (10, 11, 12, 13))
    assert a1 - a0 == 3                                      # instructions, at any shift
    assert a2 == (a1 + 1) << shift                           # cycle = guest ns
    assert a3 == a2 // 100 or a3 == (a2 + (1 << shift)) // 100   # 10 MHz: 100 ns a tick


@pytest.mark.parametrize("arch", ARCHES)
def test_htif_tohost_one_passes_and_odd_values_fail_with_the_code(bare, arch: str) -> None:
    ok = bare(build_asm("""
        la t0, tohost
        li t1, 1
        sw t1, 0(t0)
    1:  j 1b
        .data
        .align 3
        .globl tohost
    tohost: .dword 0
    """, arch))
    assert (ok.run(max_insns=1000).exit_status, ok.console.text()) == (0, "")
    bad = bare(build_asm("""
        la t0, tohost
        li t1, (21 << 1) | 1
        sw t1, 0(t0)
    1:  j 1b
        .data
        .align 3
        .globl tohost
    tohost: .dword 0
    """, arch))
    r = bad.run(max_insns=1000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 21)


def test_uart_transmit_goes_to_the_console(bare) -> None:
    m = bare(build_asm("""
        li t0, PLATFORM_UART0_BASE
        li t1, 'o'
        sb t1, 0(t0)
        li t1, 'k'
        sb t1, 0(t0)
        PASS
    """))
    assert m.run(max_insns=1000).exit_status == 0
    assert m.console.text() == "ok"


def test_msip_of_a_hart_the_machine_lacks_reads_zero(bare) -> None:
    """As QEMU 7.2's ACLINT (exc_device_access.S checks it against QEMU):
    hart 4's msip word on a one-hart machine reads 0, where privlab used to end the run
    with "unimplemented clint register"."""
    m = bare(build_asm("""
        li t0, PLATFORM_CLINT_BASE + 0x10
        li t1, 7
        lw t1, 0(t0)
        PASS
    """))
    r = m.run(max_insns=1000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    assert m.hart.x(6) == 0
