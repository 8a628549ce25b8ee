// deleg_interrupts.S: where interrupts are taken, per mideleg, the privilege and xIE.
//
// An interrupt whose mideleg bit is set is an S-level interrupt: taken in U always, in
// S only when sstatus.SIE = 1, never in M. One whose bit is clear is M-level: taken in
// U and S always, in M only when mstatus.MIE = 1. Both need their enable bit in mie
// (sie). Machine interrupts cannot be delegated. The interrupt used is the supervisor
// software interrupt, made pending by M writing mip.SSIP, so each one is taken at a
// known point: right after the mret or CSR write that makes it takeable.
//
// mideleg in QEMU 7.2: writing all ones reads back 0x3666 (SSIP, STIP, SEIP, the H
// extension's VS bits 2, 6, 10, 12 and LCOFI 13); check 1 looks at the M and S bits only.
//
// Expected traps, in order:
//   3: s_software to S from U, epc = u_target (right after the mret)
//   4: user_ecall to M
//   5: s_software to S from S, epc = s_after_sie (right after csrs sstatus.SIE)
//   6: supervisor_ecall to M
//   8: s_software to M from S (not delegated), epc = s_target2 (right after the mret)
//   9: supervisor_ecall to M
//  10: s_software to M from M, epc = m_after_mie (right after csrs mstatus.MIE)
//  12: m_software to M from S with mideleg = all ones, epc = s_target3
//  13: supervisor_ecall to M
#include "conformance.h"

TEST_MAIN deleg_interrupts
    li t0, -1
    csrw mideleg, t0
    CHECK_CSR_BITS 1, mideleg, 0xaaa, MIP_SSIP | MIP_STIP | MIP_SEIP
    csrw mideleg, zero

    // Delegated SSIP, pending and enabled in sie, while in M with MIE = 1: not taken.
    li t0, MIP_SSIP
    csrw mideleg, t0
    csrw mie, t0
    csrs mip, t0
    csrsi mstatus, MSTATUS_MIE
    nop
    nop
    csrci mstatus, MSTATUS_MIE
    CHECK_LAST 2, LAST_COUNT, 0

    // Taken in U right after the mret, although SIE = 0.
    EXPECT 3, PRV_S, PRV_U, CAUSE_IRQ_S_SOFTWARE, u_target, 0, RESUME_EPC, 0, hook_s_clear_ssip
    MRET_TO PRV_U, u_target
u_target:
    ECALL_TO_M 4, PRV_U

    // In S: not taken while SIE = 0, taken right after the write that sets it.
    li t0, MIP_SSIP
    csrs mip, t0
    MRET_TO PRV_S, 1f
1:  nop
    EXPECT 5, PRV_S, PRV_S, CAUSE_IRQ_S_SOFTWARE, s_after_sie, 0, RESUME_EPC, 0, hook_s_clear_ssip
    csrsi sstatus, SSTATUS_SIE
s_after_sie:
    csrci sstatus, SSTATUS_SIE
    ECALL_TO_M 6, PRV_S

    // Not delegated: M-level, taken in S whatever MIE and SIE are.
    csrw mideleg, zero
    CHECK_CSR_BITS 7, mstatus, MSTATUS_MIE | MSTATUS_SIE, 0
    li t0, MIP_SSIP
    csrs mip, t0
    EXPECT 8, PRV_M, PRV_S, CAUSE_IRQ_S_SOFTWARE, s_target2, 0, RESUME_EPC, 0, hook_m_clear_ssip
    MRET_TO PRV_S, s_target2
s_target2:
    ECALL_TO_M 9, PRV_S

    // Not delegated, in M: taken right after the write that sets MIE.
    li t0, MIP_SSIP
    csrs mip, t0
    nop
    EXPECT 10, PRV_M, PRV_M, CAUSE_IRQ_S_SOFTWARE, m_after_mie, 0, RESUME_EPC, 0, hook_m_clear_ssip
    csrsi mstatus, MSTATUS_MIE
m_after_mie:
    csrci mstatus, MSTATUS_MIE
    CHECK_CSR_BITS 11, mip, MIP_SSIP, 0

    // Machine interrupts are never delegated: MSIP with mideleg = all ones goes to M.
    li t0, -1
    csrw mideleg, t0
    li t0, MIP_MSIP
    csrw mie, t0
    li t0, CLINT_MSIP_ADDR
    li t1, 1
    sw t1, 0(t0)
    WAIT_MIP MIP_MSIP
    EXPECT 12, PRV_M, PRV_S, CAUSE_IRQ_M_SOFTWARE, s_target3, 0, RESUME_EPC, 0, hook_clear_msip
    MRET_TO PRV_S, s_target3
s_target3:
    ECALL_TO_M 13, PRV_S
    csrw mie, zero
    csrw mideleg, zero
    TEST_PASS
