// irq_clint.S: machine timer (CLINT mtimecmp) and machine software (CLINT msip) interrupts.
//
// MTIP is set while mtime >= mtimecmp and clears when mtimecmp is moved past mtime;
// MSIP follows bit 0 of the CLINT msip register. Neither can be written through mip.
// A pending interrupt waits while it is masked (mie bit clear, or mstatus.MIE = 0 in
// M) and is taken right after the CSR write that unmasks it: mepc = the next
// instruction. When MSI and MTI are pending together, MSI is taken first (spec order
// MEI, MSI, MTI, SEI, SSI, STI), then MTI at the same epc. M-level interrupts are
// taken in U whatever MIE is. Time never depends on instruction counts here: each
// program waits for the pending bit with interrupts masked.
//
// Expected traps, in order (to M):
//   4: m_timer from M, epc = after `csrsi mstatus, MIE`
//   6: m_timer from M, epc = after `csrs mie, MTIE`
//   9: m_software from M, epc = after `csrw mie, MSIE`
//  12: m_software from M, epc = after `csrw mie, MSIE|MTIE` (both pending)
//  13: m_timer from M, same epc
//  14: m_timer from U, epc = the mret target (taken right after the mret)
//  15: user_ecall
#include "conformance.h"

TEST_MAIN irq_clint
    // mtimecmp reads back what was written.
    TIMER_OFF
    li t0, CLINT_MTIMECMP_ADDR
    lw t1, 0(t0)
    CHECK_REG 1, t1, -1
    CHECK_CSR_BITS 2, mip, MIP_MTIP, 0

    // Pending while masked.
    TIMER_IN 10
    WAIT_MIP MIP_MTIP
    li t0, MIP_MTIP
    csrw mie, t0
    nop
    CHECK_LAST 3, LAST_COUNT, 0
    // Taken right after MIE is set; the hook moves mtimecmp away, which clears MTIP.
    EXPECT 4, PRV_M, PRV_M, CAUSE_IRQ_M_TIMER, 1f, 0, RESUME_EPC, 0, hook_clear_mtimer
    csrsi mstatus, MSTATUS_MIE
1:  CHECK_CSR_BITS 5, mip, MIP_MTIP, 0

    // With MIE = 1, taken right after the mie write.
    csrw mie, zero
    TIMER_IN 10
    WAIT_MIP MIP_MTIP
    li t0, MIP_MTIP
    EXPECT 6, PRV_M, PRV_M, CAUSE_IRQ_M_TIMER, 1f, 0, RESUME_EPC, 0, hook_clear_mtimer
    csrs mie, t0
1:  csrci mstatus, MSTATUS_MIE
    // MTIP is not writable through mip.
    li t0, MIP_MTIP | MIP_MSIP
    csrs mip, t0
    CHECK_CSR_BITS 7, mip, MIP_MTIP | MIP_MSIP, 0

    // Software interrupt through the CLINT.
    csrw mie, zero
    li t0, CLINT_MSIP_ADDR
    li t1, 1
    sw t1, 0(t0)
    WAIT_MIP MIP_MSIP
    lw t1, 0(t0)
    CHECK_REG 8, t1, 1
    csrsi mstatus, MSTATUS_MIE
    li t0, MIP_MSIP
    EXPECT 9, PRV_M, PRV_M, CAUSE_IRQ_M_SOFTWARE, 1f, 0, RESUME_EPC, 0, hook_clear_msip
    csrw mie, t0
1:  CHECK_CSR_BITS 10, mip, MIP_MSIP, 0
    li t0, CLINT_MSIP_ADDR
    lw t1, 0(t0)
    CHECK_REG 11, t1, 0

    // Both pending, both enabled by one write: MSI first, then MTI.
    csrci mstatus, MSTATUS_MIE
    csrw mie, zero
    csrsi mstatus, MSTATUS_MIE
    li t0, CLINT_MSIP_ADDR
    li t1, 1
    sw t1, 0(t0)
    TIMER_IN 10
    WAIT_MIP MIP_MTIP
    WAIT_MIP MIP_MSIP
    li t0, MIP_MSIP | MIP_MTIP
    EXPECT 12, PRV_M, PRV_M, CAUSE_IRQ_M_SOFTWARE, 1f, 0, RESUME_EPC, 0, hook_clear_msip
    EXPECT 13, PRV_M, PRV_M, CAUSE_IRQ_M_TIMER, 1f, 0, RESUME_EPC, 0, hook_clear_mtimer
    csrw mie, t0
1:  csrci mstatus, MSTATUS_MIE

    // M-level interrupts are taken in U with MIE = 0: right after the mret.
    TIMER_IN 10
    WAIT_MIP MIP_MTIP
    li t0, MSTATUS_MPIE
    csrc mstatus, t0
    EXPECT 14, PRV_M, PRV_U, CAUSE_IRQ_M_TIMER, u_target, 0, RESUME_EPC, 0, hook_clear_mtimer
    MRET_TO PRV_U, u_target
u_target:
    ECALL_TO_M 15, PRV_U
    CHECK_LAST_BITS 16, LAST_STATUS, MSTATUS_MIE | MSTATUS_MPIE, 0
    csrw mie, zero
    TEST_PASS
