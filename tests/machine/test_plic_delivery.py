"""External interrupts end to end: the UART's received-data interrupt, with console
input scripted from the start, through the PLIC into the hart (machine.py's wiring)."""

from __future__ import annotations

import pytest

from machine.asm import build_asm
from privlab.abi.csr import Irq, Priv
from privlab.devices import ScriptedInput
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare
from privlab.trace import TrapEvent

RX_TO_M = """
#define CLAIM_M (PLATFORM_PLIC_BASE + PLIC_CONTEXT + PLIC_CONTEXT_M * PLIC_CONTEXT_STRIDE \\
                 + PLIC_CLAIM)
    UART_IRQ_TO_M
    li t0, PLATFORM_UART0_BASE
    li t1, 0x01                 // IER.ERBFI
    sb t1, 1(t0)
    li t0, 1 << 11              // MEIE
    csrw mie, t0
.globl unmask
unmask:
    csrsi mstatus, 8
.globl after_unmask
after_unmask:
    FAIL 1
    .align 2
trap:
    li t0, CLAIM_M
    lw a0, 0(t0)                // the source: 10
    li t1, PLATFORM_UART0_BASE
    lbu a1, 2(t1)               // IIR: received data (0x04)
    lbu a2, 0(t1)               // the byte
    lbu a3, 2(t1)               // IIR: none (0x01)
    sw a0, 0(t0)                // complete
    csrr a4, mip
    PASS
"""


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_received_data_interrupt_is_taken_in_m_and_claimed(arch: str) -> None:
    image = load_elf(build_asm(RX_TO_M, arch))
    m = Machine(image.xlen, uart_input=ScriptedInput(b"k"))
    try:
        boot_bare(m, image)
        r = m.run(max_insns=10_000)
        assert (r.stop, r.exit_status) == (Stop.HALT, 0)
        traps = [e for e in m.events if isinstance(e, TrapEvent)]
        assert [(t.interrupt, t.code, t.epc, t.priv_from) for t in traps] == [
            (True, Irq.M_EXTERNAL, m.symbols["after_unmask"], Priv.M)]
        hart = m.hart
        assert [hart.x(n) for n in (10, 11, 12, 13)] == [10, 0x04, ord("k"), 0x01]
        assert hart.x(14) & (1 << Irq.M_EXTERNAL) == 0
    finally:
        m.close()
