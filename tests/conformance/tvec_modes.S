// tvec_modes.S: direct and vectored mtvec/stvec.
//
// MODE = 0 (direct): every trap enters at BASE. MODE = 1 (vectored): an interrupt with
// code n enters at BASE + 4n, an exception at BASE. The runtime checks the entry point
// of every trap of every program (its vector slot); this program makes each kind of
// trap go through each mode. QEMU 7.2 ignores a write of MODE 2 or 3 to mtvec or stvec
// entirely (the register keeps its old value), checks 1 and 2.
//
// Interrupts are made pending with interrupts masked (SSIP/STIP by writing mip, MSIP
// through the CLINT, MTIP by waiting for the CLINT timer), then taken right after the
// CSR write that enables them.
//
// Expected traps, in order (from M unless said; each epc is the instruction after the
// enabling write):
//   3: breakpoint to M, mtvec vectored: slot 0        4: s_software to M, slot 1
//   5: m_software to M, slot 3                        6: s_timer to M, slot 5
//   7: m_timer to M, slot 7
//   8: s_software to M, mtvec direct                  9: breakpoint to M, direct
//  10: s_software to S from S, stvec vectored: slot 1
//  12: breakpoint to S from S, stvec vectored: slot 0
//  13: s_software to S from S, stvec direct          14: supervisor_ecall to M
//  11: s_timer to S from S, stvec vectored: slot 5 (epc = the mret target)
//  16: supervisor_ecall to M
#include "conformance.h"

TEST_MAIN tvec_modes
    // MODE 2 and 3 are reserved: QEMU 7.2 drops the whole write.
    la t0, mtrap_vectors + 2
    csrw mtvec, t0
    CHECK_CSR_ADDR 1, mtvec, mtrap_direct
    la t0, strap_vectors + 3
    csrw stvec, t0
    CHECK_CSR_ADDR 2, stvec, strap_direct

    MTVEC_VECTORED
    CHECK_CSR_ADDR 15, mtvec, mtrap_vectors + 1
    EXPECT 3, PRV_M, PRV_M, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  ebreak
2:
    csrsi mstatus, MSTATUS_MIE

    // Supervisor software interrupt, not delegated: M-level, slot 1.
    li t0, MIP_SSIP
    csrs mip, t0
    EXPECT 4, PRV_M, PRV_M, CAUSE_IRQ_S_SOFTWARE, 1f, 0, RESUME_EPC, 0, hook_m_clear_ssip
    csrw mie, t0
1:
    // Machine software interrupt, slot 3.
    csrci mstatus, MSTATUS_MIE
    li t0, MIP_MSIP
    csrw mie, t0
    li t0, CLINT_MSIP_ADDR
    li t1, 1
    sw t1, 0(t0)
    WAIT_MIP MIP_MSIP
    EXPECT 5, PRV_M, PRV_M, CAUSE_IRQ_M_SOFTWARE, 1f, 0, RESUME_EPC, 0, hook_clear_msip
    csrsi mstatus, MSTATUS_MIE
1:
    // Supervisor timer interrupt (STIP written by M), not delegated, slot 5.
    csrci mstatus, MSTATUS_MIE
    li t0, MIP_STIP
    csrw mie, t0
    csrs mip, t0
    EXPECT 6, PRV_M, PRV_M, CAUSE_IRQ_S_TIMER, 1f, 0, RESUME_EPC, 0, hook_m_clear_stip
    csrsi mstatus, MSTATUS_MIE
1:
    // Machine timer interrupt, slot 7.
    csrci mstatus, MSTATUS_MIE
    TIMER_IN 10
    WAIT_MIP MIP_MTIP
    li t0, MIP_MTIP
    csrw mie, t0
    EXPECT 7, PRV_M, PRV_M, CAUSE_IRQ_M_TIMER, 1f, 0, RESUME_EPC, 0, hook_clear_mtimer
    csrsi mstatus, MSTATUS_MIE
1:
    // Back to direct: interrupts and exceptions enter at BASE.
    csrci mstatus, MSTATUS_MIE
    MTVEC_DIRECT
    li t0, MIP_SSIP
    csrw mie, t0
    csrs mip, t0
    EXPECT 8, PRV_M, PRV_M, CAUSE_IRQ_S_SOFTWARE, 1f, 0, RESUME_EPC, 0, hook_m_clear_ssip
    csrsi mstatus, MSTATUS_MIE
1:  csrci mstatus, MSTATUS_MIE
    EXPECT 9, PRV_M, PRV_M, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  ebreak
2:
    // stvec vectored, with SSIP, STIP and breakpoints delegated; run in S.
    li t0, MIP_SSIP | MIP_STIP
    csrw mideleg, t0
    csrw mie, t0
    li t0, 1 << CAUSE_BREAKPOINT
    csrw medeleg, t0
    STVEC_VECTORED
    MRET_TO PRV_S, in_s
in_s:
    csrsi sip, MIP_SSIP
    EXPECT 10, PRV_S, PRV_S, CAUSE_IRQ_S_SOFTWARE, 1f, 0, RESUME_EPC, 0, hook_s_clear_ssip
    csrsi sstatus, SSTATUS_SIE
1:  csrci sstatus, SSTATUS_SIE
    EXPECT 12, PRV_S, PRV_S, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  ebreak
2:
    // stvec direct.
    la t0, strap_direct
    csrw stvec, t0
    csrsi sip, MIP_SSIP
    EXPECT 13, PRV_S, PRV_S, CAUSE_IRQ_S_SOFTWARE, 1f, 0, RESUME_EPC, 0, hook_s_clear_ssip
    csrsi sstatus, SSTATUS_SIE
1:  csrci sstatus, SSTATUS_SIE
    ECALL_TO_M 14, PRV_S

    // The S timer through stvec vectored: STIP set by M, taken in S right after the mret.
    STVEC_VECTORED
    li t0, MIP_STIP
    csrs mip, t0
    li t0, MSTATUS_SIE
    csrs mstatus, t0
    EXPECT 11, PRV_S, PRV_S, CAUSE_IRQ_S_TIMER, s_timer_target, 0, RESUME_JUMP, s_timer_done
    MRET_TO PRV_S, s_timer_target
s_timer_target:
    FAIL_NO_TRAP 11
s_timer_done:
    // Still in S with SIE = 0 (trap entry) and STIP pending; back to M to clear it.
    ECALL_TO_M 16, PRV_S
    li t0, MIP_STIP
    csrc mip, t0
    csrw mie, zero
    csrw mideleg, zero
    csrw medeleg, zero
    TEST_PASS
