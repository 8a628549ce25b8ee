// irq_plic_s.S: the UART's transmitter-empty interrupt through PLIC context 1 to S
// (SEIP), delegated by mideleg, with the threshold masking it first.
//
// Source PLATFORM_UART0_IRQ (10) has priority 1 and is enabled in context 1 (hart 0,
// S) only, with threshold 1: IER.ETBEI makes it pending (pending bit 10) but neither
// SEIP nor MEIP rises, and S takes no interrupt with sstatus.SIE set. S lowers the
// threshold to 0 with SIE clear; SEIP rises (mip.SEIP reads the PLIC's line) and the
// interrupt is taken in S right after the write that sets sstatus.SIE; the handler
// claims (10) from context 1, reads IIR (0xc2) and completes. A byte sent makes THRE
// pending again; S-level interrupts are taken in U whatever SIE is, so the next one
// comes right after the sret to U. Back in M: mip.SEIP reads as the OR of the bit M
// software writes and the PLIC's context-1 line (QEMU 7.2 as the spec has it):
// clearing the software bit does not hide the line, and the line falling does not
// clear the software bit; a csrs/csrc of STIP while the line is high does not copy
// the line into the software bit (only the bits written change).
//
// Expected traps, in order:
//  11: s_external from S to S, epc = after `csrsi sstatus, SIE`
//  15: s_external from U to S, epc = the sret target
//  16: user_ecall to M
#include "conformance.h"

TEST_MAIN irq_plic_s
    MMIO_SB UART_IIR_FCR_ADDR, 0x07
    li t0, MIP_SEIP
    csrw mideleg, t0
    csrw mie, t0
    STVEC_DIRECT
    MMIO_SW PLIC_PRIORITY_ADDR(PLATFORM_UART0_IRQ), 1
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_S), 1
    MMIO_SW PLIC_ENABLE_ADDR(PLIC_CONTEXT_S), (1 << PLATFORM_UART0_IRQ)
    MMIO_LW t0, PLIC_ENABLE_ADDR(PLIC_CONTEXT_S)
    CHECK_REG 1, t0, (1 << PLATFORM_UART0_IRQ)
    MMIO_LW t0, PLIC_ENABLE_ADDR(PLIC_CONTEXT_M)
    CHECK_REG 2, t0, 0
    MMIO_SB UART_IER_ADDR, UART_IER_ETBEI
    MMIO_LBU t0, UART_IER_ADDR
    CHECK_REG 3, t0, UART_IER_ETBEI
    MMIO_LW t0, PLIC_PENDING_ADDR
    CHECK_REG 4, t0, (1 << PLATFORM_UART0_IRQ)
    CHECK_CSR_BITS 5, mip, MIP_SEIP | MIP_MEIP, 0
    MRET_TO PRV_S, s_code

s_code:
    // Masked by the threshold: no interrupt even with SIE set.
    csrsi sstatus, SSTATUS_SIE
    nop
    csrci sstatus, SSTATUS_SIE
    CHECK_CSR_BITS 6, sip, MIP_SEIP, 0
    MMIO_LW t0, PLIC_CLAIM_ADDR(PLIC_CONTEXT_S)
    CHECK_REG 7, t0, 0
    CHECK_LAST 8, LAST_COUNT, 0
    // Threshold 0: SEIP rises, taken once SIE is set.
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_S), 0
    MMIO_LW t0, PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_S)
    CHECK_REG 9, t0, 0
1:  csrr t0, sip
    andi t0, t0, MIP_SEIP
    beqz t0, 1b
    CHECK_CSR_BITS 10, sie, MIP_SEIP, MIP_SEIP
    EXPECT 11, PRV_S, PRV_S, CAUSE_IRQ_S_EXTERNAL, 1f, 0, RESUME_EPC, 0, hook_plic_s
    csrsi sstatus, SSTATUS_SIE
1:  csrci sstatus, SSTATUS_SIE
    CHECK_MEM_BITS 12, plic_claimed, -1, PLATFORM_UART0_IRQ
    CHECK_MEM_BITS 13, uart_iir_seen, 0xff, 0xc2
    CHECK_CSR_BITS 14, sip, MIP_SEIP, 0

    // Pending again after a byte is sent; taken in U right after the sret.
    MMIO_SB UART_RBR_THR_ADDR, '.'
1:  csrr t0, sip
    andi t0, t0, MIP_SEIP
    beqz t0, 1b
    li t0, SSTATUS_SPIE
    csrc sstatus, t0
    EXPECT 15, PRV_S, PRV_U, CAUSE_IRQ_S_EXTERNAL, u_code, 0, RESUME_EPC, 0, hook_plic_s
    SRET_TO PRV_U, u_code

u_code:
    ECALL_TO_M 16, PRV_U
    CHECK_MEM_BITS 17, plic_claimed, -1, PLATFORM_UART0_IRQ
    CHECK_CSR_BITS 18, mip, MIP_SEIP | MIP_MEIP, 0
    // mip.SEIP is the OR of the bit M software writes and the PLIC's context 1 line.
    csrw mie, zero
    li t0, MIP_SEIP
    csrs mip, t0
    CHECK_CSR_BITS 19, mip, MIP_SEIP, MIP_SEIP
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_S), 1    // the line stays low
    CHECK_CSR_BITS 20, mip, MIP_SEIP, MIP_SEIP
    li t0, MIP_SEIP
    csrc mip, t0
    CHECK_CSR_BITS 21, mip, MIP_SEIP, 0
    MMIO_SB UART_RBR_THR_ADDR, '.'                    // THRE pending again
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_S), 0    // the line rises
    CHECK_CSR_BITS 22, mip, MIP_SEIP, MIP_SEIP
    li t0, MIP_SEIP
    csrc mip, t0                                      // the line keeps it set
    CHECK_CSR_BITS 23, mip, MIP_SEIP, MIP_SEIP
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_S), 1    // the line falls
    CHECK_CSR_BITS 24, mip, MIP_SEIP, 0
    // A csrs/csrc of another bit while the line is high leaves SEIP's software bit
    // alone: SEIP falls with the line (it stayed set for good when the whole value
    // read, line included, was written back).
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_S), 0    // the line rises
    li t0, MIP_STIP
    csrs mip, t0
    csrc mip, t0
    CHECK_CSR_BITS 25, mip, MIP_SEIP | MIP_STIP, MIP_SEIP
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_S), 1    // the line falls
    CHECK_CSR_BITS 26, mip, MIP_SEIP, 0
    MMIO_SB UART_IER_ADDR, 0
    csrw mideleg, zero
    TEST_PASS
