// irq_enable_points.S: an interrupt pending while masked is taken right after the
// instruction that unmasks it, whichever CSR that instruction writes.
//
// Spec 3.1.9: interrupts are evaluated after every write to mstatus/mie/mip/mideleg
// (and their S views) and after every xRET. Each case below makes the supervisor
// software interrupt pending while it cannot be taken (SSIP set through mip/sip), then
// unmasks it with one instruction; the trap's xepc must be the next instruction (for
// an xRET: its target). The hook clears SSIP so the handler can return.
//
// Expected traps, in order (all s_software, cause 1 | interrupt bit):
//   M-level (mideleg = 0), in M:
//   1: after csrsi mstatus, MIE        2: after csrw mstatus (whole register)
//   3: after csrs mie                  4: after csrs mip (making it pending)
//   5: after csrc mideleg (SSIP was delegated, so it could not be taken in M)
//   S-level (mideleg.SSIP = 1), in S, to S:
//   6: after csrsi sstatus, SIE        7: after csrw sstatus (whole register)
//   8: after csrs sie                  9: after csrsi sip (making it pending)
//  10: from U, at the target of the sret from S to U
//  11: user_ecall to M
#include "conformance.h"

// Expect an s_software interrupt at `level` from `from` with epc `at`.
.macro SSI check, level, from, at
    .if \level == PRV_M
    EXPECT \check, PRV_M, \from, CAUSE_IRQ_S_SOFTWARE, \at, 0, RESUME_EPC, 0, hook_m_clear_ssip
    .else
    EXPECT \check, PRV_S, \from, CAUSE_IRQ_S_SOFTWARE, \at, 0, RESUME_EPC, 0, hook_s_clear_ssip
    .endif
.endm

TEST_MAIN irq_enable_points
    li s0, MIP_SSIP
    // mstatus.MIE through csrsi.
    csrw mie, s0
    csrs mip, s0
    SSI 1, PRV_M, PRV_M, 1f
    csrsi mstatus, MSTATUS_MIE
1:  csrci mstatus, MSTATUS_MIE

    // mstatus.MIE through a whole-register write.
    csrs mip, s0
    csrr t0, mstatus
    ori t0, t0, MSTATUS_MIE
    SSI 2, PRV_M, PRV_M, 1f
    csrw mstatus, t0
1:  csrci mstatus, MSTATUS_MIE

    // mie.
    csrw mie, zero
    csrs mip, s0
    csrsi mstatus, MSTATUS_MIE
    SSI 3, PRV_M, PRV_M, 1f
    csrs mie, s0
1:
    // mip: enabled everywhere, made pending by the write.
    SSI 4, PRV_M, PRV_M, 1f
    csrs mip, s0
1:
    // mideleg: delegated SSIP is never taken in M; undelegating it makes it M-level.
    csrci mstatus, MSTATUS_MIE
    csrw mideleg, s0
    csrs mip, s0
    csrsi mstatus, MSTATUS_MIE
    nop
    SSI 5, PRV_M, PRV_M, 1f
    csrc mideleg, s0
1:  csrci mstatus, MSTATUS_MIE
    CHECK_LAST 12, LAST_COUNT, 5

    // S-level from here on.
    csrw mideleg, s0
    csrw mie, zero
    MRET_TO PRV_S, in_s
in_s:
    // sstatus.SIE through csrsi.
    csrw sie, s0
    csrs sip, s0
    SSI 6, PRV_S, PRV_S, 1f
    csrsi sstatus, SSTATUS_SIE
1:  csrci sstatus, SSTATUS_SIE
    // sstatus.SIE through a whole-register write.
    csrs sip, s0
    csrr t0, sstatus
    ori t0, t0, SSTATUS_SIE
    SSI 7, PRV_S, PRV_S, 1f
    csrw sstatus, t0
1:
    // sie.
    csrw sie, zero
    csrs sip, s0
    nop
    SSI 8, PRV_S, PRV_S, 1f
    csrs sie, s0
1:
    // sip: enabled, made pending by the write.
    SSI 9, PRV_S, PRV_S, 1f
    csrsi sip, MIP_SSIP
1:
    // sret to U: pending in S with SIE = 0, taken at the sret's target in U.
    csrci sstatus, SSTATUS_SIE
    csrs sip, s0
    nop
    SSI 10, PRV_S, PRV_U, u_target
    SRET_TO PRV_U, u_target
u_target:
    ECALL_TO_M 11, PRV_U
    csrw mie, zero
    csrw mideleg, zero
    TEST_PASS
