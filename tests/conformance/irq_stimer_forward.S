// irq_stimer_forward.S: the supervisor timer forwarded by M-mode firmware (xv6 style).
//
// The CLINT timer interrupts M only. Firmware forwards it: its machine-timer handler
// sets mip.STIP and clears mie.MTIE; the supervisor timer interrupt (delegated in
// mideleg) is then taken in S as soon as M returns. S cannot clear STIP itself, so its
// handler asks M with an ecall, whose handler clears mip.STIP. S re-arms the timer
// with an ecall too (an SBI set_timer); to keep the trap sequence independent of
// instruction timing, that handler waits until the new deadline has passed before
// returning, so each machine-timer interrupt is taken right after an mret.
//
// Expected traps, in order (epc):
//   1: m_timer to M from S (s_code: right after the mret into S); firmware forwards it
//   2: s_timer to S from S (s_code: right after that handler's mret); S handler ecalls:
//   3: supervisor_ecall to M from S (hook_s_ecall_insn): M clears STIP
//   6: supervisor_ecall to M from S (s_set_timer): "set_timer", returns with MTIP pending
//   7: m_timer to M from S (the instruction after s_set_timer); forwarded
//   8: s_timer to S from S (same epc)
//   9: supervisor_ecall to M from S (hook_s_ecall_insn)
//  11: supervisor_ecall to M (end)
#include "conformance.h"

TEST_MAIN irq_stimer_forward
    li t0, MIP_STIP
    csrw mideleg, t0
    li t0, MIP_MTIP | MIP_STIP
    csrw mie, t0
    li t0, MSTATUS_SIE
    csrs mstatus, t0
    TIMER_IN 10
    WAIT_MIP MIP_MTIP

    EXPECT 1, PRV_M, PRV_S, CAUSE_IRQ_M_TIMER, s_code, 0, RESUME_EPC, 0, hook_m_forward_timer
    EXPECT 2, PRV_S, PRV_S, CAUSE_IRQ_S_TIMER, s_code, 0, RESUME_EPC, 0, hook_s_ecall
    EXPECT 3, PRV_M, PRV_S, CAUSE_SUPERVISOR_ECALL, hook_s_ecall_insn, 0, RESUME_SKIP4, 0, hook_m_clear_stip
    MRET_TO PRV_S, s_code
s_code:
    CHECK_CSR_BITS 4, sip, MIP_STIP, 0
    CHECK_CSR_BITS 5, sstatus, SSTATUS_SIE, SSTATUS_SIE

    // set_timer through M; the next timer interrupt comes right after it returns.
    EXPECT 6, PRV_M, PRV_S, CAUSE_SUPERVISOR_ECALL, s_set_timer, 0, RESUME_SKIP4, 0, hook_m_set_timer_expired
    EXPECT 7, PRV_M, PRV_S, CAUSE_IRQ_M_TIMER, 1f, 0, RESUME_EPC, 0, hook_m_forward_timer
    EXPECT 8, PRV_S, PRV_S, CAUSE_IRQ_S_TIMER, 1f, 0, RESUME_EPC, 0, hook_s_ecall
    EXPECT 9, PRV_M, PRV_S, CAUSE_SUPERVISOR_ECALL, hook_s_ecall_insn, 0, RESUME_SKIP4, 0, hook_m_clear_stip
s_set_timer:
    ecall
1:  CHECK_CSR_BITS 10, sip, MIP_STIP, 0
    csrci sstatus, SSTATUS_SIE
    ECALL_TO_M 11, PRV_S

    // The firmware left the machine timer disabled and STIP clear.
    CHECK_CSR_BITS 12, mie, MIP_MTIP, 0
    CHECK_CSR_BITS 13, mip, MIP_STIP | MIP_MTIP, MIP_MTIP
    TIMER_OFF
    csrw mie, zero
    csrw mideleg, zero
    TEST_PASS
