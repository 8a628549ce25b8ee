// irq_plic_m.S: the UART's transmitter-empty interrupt through the PLIC to M (MEIP).
//
// Reset values first: the UART's IER 0, IIR 0x01 (no interrupt, FIFOs off; 0xc1 once
// FCR enables them), LCR 0, MCR 0x08 (OUT2), LSR 0x60 (THR and transmitter empty),
// MSR 0xb0, SCR 0; the PLIC's priorities, enables and thresholds 0. Priorities and
// thresholds keep their value modulo 8 (QEMU 7.2: 3 priority bits, WARL).
// Then source PLATFORM_UART0_IRQ (10), priority 3, is enabled in context 0 (hart 0,
// M) with threshold 2; setting IER.ETBEI makes THRE pending in the UART (THR is
// empty), the UART's line pends source 10 and the PLIC raises MEIP. The interrupt is
// taken right after the write that sets mstatus.MIE; the handler claims (10), reads
// IIR (0xc2: THRE, which acknowledges it) and completes. A threshold equal to the
// priority masks it: a byte sent makes it pending again (pending bit 10 set) but MEIP
// stays clear and a claim returns 0; lowering the threshold to 2 raises MEIP again.
//
// Expected traps, in order (to M):
//  21: m_external from M, epc = after `csrsi mstatus, MIE`
//  30: m_external from M, epc = after `csrsi mstatus, MIE`
#include "conformance.h"

TEST_MAIN irq_plic_m
    // UART reset values.
    MMIO_LBU t0, UART_IER_ADDR
    CHECK_REG 1, t0, 0
    MMIO_LBU t0, UART_IIR_FCR_ADDR
    CHECK_REG 2, t0, 0x01
    MMIO_LBU t0, UART_LCR_ADDR
    CHECK_REG 3, t0, 0
    MMIO_LBU t0, UART_MCR_ADDR
    CHECK_REG 4, t0, 0x08
    MMIO_LBU t0, UART_LSR_ADDR
    CHECK_REG 5, t0, 0x60
    MMIO_LBU t0, UART_MSR_ADDR
    CHECK_REG 6, t0, 0xb0
    MMIO_LBU t0, UART_SCR_ADDR
    CHECK_REG 7, t0, 0
    MMIO_SB UART_SCR_ADDR, 0x5a
    MMIO_LBU t0, UART_SCR_ADDR
    CHECK_REG 8, t0, 0x5a
    // FIFOs on (and both reset): IIR bits 7:6 say so.
    MMIO_SB UART_IIR_FCR_ADDR, 0x07
    MMIO_LBU t0, UART_IIR_FCR_ADDR
    CHECK_REG 9, t0, 0xc1

    // PLIC reset values, and WARL priorities and thresholds.
    MMIO_LW t0, PLIC_PRIORITY_ADDR(PLATFORM_UART0_IRQ)
    CHECK_REG 10, t0, 0
    MMIO_LW t0, PLIC_ENABLE_ADDR(PLIC_CONTEXT_M)
    CHECK_REG 11, t0, 0
    MMIO_LW t0, PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_M)
    CHECK_REG 12, t0, 0
    MMIO_LW t0, PLIC_PENDING_ADDR
    CHECK_REG 13, t0, 0
    MMIO_SW PLIC_PRIORITY_ADDR(PLATFORM_UART0_IRQ), 9
    MMIO_LW t0, PLIC_PRIORITY_ADDR(PLATFORM_UART0_IRQ)
    CHECK_REG 14, t0, 1
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_M), 0xf
    MMIO_LW t0, PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_M)
    CHECK_REG 15, t0, 7

    // Source 10 at priority 3, enabled in context 0, threshold 2.
    MMIO_SW PLIC_PRIORITY_ADDR(PLATFORM_UART0_IRQ), 3
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_M), 2
    MMIO_SW PLIC_ENABLE_ADDR(PLIC_CONTEXT_M), (1 << PLATFORM_UART0_IRQ)
    MMIO_LW t0, PLIC_ENABLE_ADDR(PLIC_CONTEXT_M)
    CHECK_REG 16, t0, (1 << PLATFORM_UART0_IRQ)
    li t0, MIP_MEIP
    csrw mie, t0
    CHECK_CSR_BITS 17, mip, MIP_MEIP, 0

    // ETBEI with THR empty: THRE pending, source 10 pending, MEIP.
    MMIO_SB UART_IER_ADDR, UART_IER_ETBEI
    MMIO_LW t0, PLIC_PENDING_ADDR
    CHECK_REG 18, t0, (1 << PLATFORM_UART0_IRQ)
    WAIT_MIP MIP_MEIP
    // Not enabled in context 1: its claim is 0 and leaves source 10 pending.
    MMIO_LW t0, PLIC_CLAIM_ADDR(PLIC_CONTEXT_S)
    CHECK_REG 19, t0, 0
    CHECK_CSR_BITS 20, mip, MIP_MEIP, MIP_MEIP
    EXPECT 21, PRV_M, PRV_M, CAUSE_IRQ_M_EXTERNAL, 1f, 0, RESUME_EPC, 0, hook_plic_m
    csrsi mstatus, MSTATUS_MIE
1:  csrci mstatus, MSTATUS_MIE
    CHECK_MEM_BITS 22, plic_claimed, -1, PLATFORM_UART0_IRQ
    CHECK_MEM_BITS 23, uart_iir_seen, 0xff, 0xc2
    CHECK_CSR_BITS 24, mip, MIP_MEIP, 0
    MMIO_LW t0, PLIC_PENDING_ADDR
    CHECK_REG 25, t0, 0
    MMIO_LBU t0, UART_IIR_FCR_ADDR
    CHECK_REG 26, t0, 0xc1

    // Threshold 3 = the priority: a byte sent pends source 10 again, but no MEIP.
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_M), 3
    MMIO_SB UART_RBR_THR_ADDR, '.'
    MMIO_LW t0, PLIC_PENDING_ADDR
    CHECK_REG 27, t0, (1 << PLATFORM_UART0_IRQ)
    CHECK_CSR_BITS 28, mip, MIP_MEIP, 0
    MMIO_LW t0, PLIC_CLAIM_ADDR(PLIC_CONTEXT_M)
    CHECK_REG 29, t0, 0
    // Threshold 2: taken.
    MMIO_SW PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_M), 2
    WAIT_MIP MIP_MEIP
    EXPECT 30, PRV_M, PRV_M, CAUSE_IRQ_M_EXTERNAL, 1f, 0, RESUME_EPC, 0, hook_plic_m
    csrsi mstatus, MSTATUS_MIE
1:  csrci mstatus, MSTATUS_MIE
    CHECK_MEM_BITS 31, plic_claimed, -1, PLATFORM_UART0_IRQ
    CHECK_MEM_BITS 32, uart_iir_seen, 0xff, 0xc2

    MMIO_SB UART_IER_ADDR, 0
    csrw mie, zero
    TEST_PASS
