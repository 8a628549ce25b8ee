// wfi.S: wait for interrupt.
//
// wfi resumes when an interrupt is pending and enabled in mie, whether or not it can be
// taken: with mstatus.MIE = 0 execution simply continues after the wfi (no trap), and
// the same holds for a pending S-level interrupt in M. When the interrupt can be taken,
// it is taken with epc = the instruction after the wfi. wfi is illegal in U, and in S
// when mstatus.TW = 1 (QEMU 7.2 traps at once; tval = 0x10500073).
//
// The two waits that end in a trap (checks 3 and 5) arm the timer 20 ms ahead before
// the wfi, so the interrupt comes while the hart is waiting, a few instructions later.
// These are the only timing-dependent points of the suite: on an emulator whose time
// follows the instruction count, the wfi must advance time to the next deadline.
//
// Expected traps, in order:
//   3: m_timer to M from M, epc = after the wfi (MIE = 1)
//   5: m_timer to M from S, epc = after the wfi
//  10: supervisor_ecall to M
//   6: illegal_instruction to M from S, wfi with TW = 1, tval 0x10500073
//   7: supervisor_ecall to M
//   8: illegal_instruction to M from U, wfi, tval 0x10500073
//   9: user_ecall to M
#define WFI_TIMEOUT 200000  // 20 ms at 10 MHz
#include "conformance.h"

TEST_MAIN wfi
    // MIE = 0, MTIE = 1: wfi returns once MTIP is pending, no trap.
    li t0, MIP_MTIP
    csrw mie, t0
    TIMER_IN 10
    wfi
    CHECK_CSR_BITS 1, mip, MIP_MTIP, MIP_MTIP
    CHECK_LAST 2, LAST_COUNT, 0

    // MIE = 1: the interrupt is taken, epc = after the wfi.
    TIMER_IN WFI_TIMEOUT
    csrsi mstatus, MSTATUS_MIE
    EXPECT 3, PRV_M, PRV_M, CAUSE_IRQ_M_TIMER, 1f, 0, RESUME_EPC, 0, hook_clear_mtimer
    wfi
1:  csrci mstatus, MSTATUS_MIE

    // A delegated S interrupt pending in M wakes wfi but is not taken.
    li t0, MIP_SSIP
    csrw mideleg, t0
    csrw mie, t0
    csrs mip, t0
    csrsi mstatus, MSTATUS_MIE
    wfi
    csrci mstatus, MSTATUS_MIE
    CHECK_LAST 4, LAST_COUNT, 1
    csrc mip, t0
    csrw mideleg, zero

    // In S (TW = 0), an M-level interrupt: taken in M, epc = after the wfi.
    li t0, MIP_MTIP
    csrw mie, t0
    TIMER_IN WFI_TIMEOUT
    MRET_TO PRV_S, in_s
in_s:
    EXPECT 5, PRV_M, PRV_S, CAUSE_IRQ_M_TIMER, 1f, 0, RESUME_EPC, 0, hook_clear_mtimer
    wfi
1:
    ECALL_TO_M 10, PRV_S
    csrw mie, zero

    // In S with TW = 1: illegal.
    li t0, MSTATUS_TW
    csrs mstatus, t0
    MRET_TO PRV_S, 1f
1:  EXPECT 6, PRV_M, PRV_S, CAUSE_ILLEGAL_INSTRUCTION, 1f, 0x10500073, RESUME_AT, 2f
1:  wfi
2:  ECALL_TO_M 7, PRV_S
    li t0, MSTATUS_TW
    csrc mstatus, t0

    // In U: illegal.
    MRET_TO PRV_U, 1f
1:  EXPECT 8, PRV_M, PRV_U, CAUSE_ILLEGAL_INSTRUCTION, 1f, 0x10500073, RESUME_AT, 2f
1:  wfi
2:  ECALL_TO_M 9, PRV_U
    TEST_PASS
