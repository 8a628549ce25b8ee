// exc_ecall.S: ecall from M, U and S, nothing delegated.
//
// Checks that ecall raises cause 11 in M, 8 in U and 9 in S, always taken in M with
// mepc = the ecall itself and mtval = 0, and that trap entry saves the privilege in
// MPP and MIE in MPIE and clears MIE; and that mret restores MIE from MPIE, sets MPIE
// and leaves MPP = U.
//
// Expected traps, in order (all to M through the direct mtvec):
//   1. machine_ecall    cause 11  from M  epc m_ecall     tval 0  (MIE was 0: MPIE = 0)
//   4. machine_ecall    cause 11  from M  epc m_ecall_ie  tval 0  (MIE was 1: MPIE = 1)
//   7. user_ecall       cause 8   from U  epc u_ecall     tval 0
//  10. supervisor_ecall cause 9   from S  epc s_ecall     tval 0
#include "conformance.h"

TEST_MAIN exc_ecall
    // ecall in M with interrupts disabled.
    EXPECT 1, PRV_M, PRV_M, CAUSE_MACHINE_ECALL, m_ecall, 0, RESUME_AT, 1f
m_ecall:
    ecall
    FAIL_NO_TRAP 1
1:  CHECK_LAST_BITS 2, LAST_STATUS, MSTATUS_MPIE | MSTATUS_MIE | MSTATUS_MPP, MSTATUS_MPP_M
    CHECK_CSR_BITS 3, mstatus, MSTATUS_MPP | MSTATUS_MIE | MSTATUS_MPIE, MSTATUS_MPIE

    // ecall in M with MIE = 1 (nothing is enabled in mie, so no interrupt can fire).
    csrsi mstatus, MSTATUS_MIE
    EXPECT 4, PRV_M, PRV_M, CAUSE_MACHINE_ECALL, m_ecall_ie, 0, RESUME_AT, 1f
m_ecall_ie:
    ecall
    FAIL_NO_TRAP 4
1:  CHECK_LAST_BITS 5, LAST_STATUS, MSTATUS_MPIE | MSTATUS_MIE, MSTATUS_MPIE
    CHECK_CSR_BITS 6, mstatus, MSTATUS_MIE | MSTATUS_MPIE, MSTATUS_MIE | MSTATUS_MPIE
    csrci mstatus, MSTATUS_MIE

    // ecall from U, resumed in M.
    MRET_TO PRV_U, in_u
in_u:
    EXPECT 7, PRV_M, PRV_U, CAUSE_USER_ECALL, u_ecall, 0, RESUME_JUMP, 1f
u_ecall:
    ecall
    FAIL_NO_TRAP 7
1:  CHECK_LAST_BITS 8, LAST_STATUS, MSTATUS_MPP | MSTATUS_MIE, 0
    CHECK_LAST 9, LAST_TVAL, 0

    // ecall from S, resumed in M.
    MRET_TO PRV_S, in_s
in_s:
    EXPECT 10, PRV_M, PRV_S, CAUSE_SUPERVISOR_ECALL, s_ecall, 0, RESUME_JUMP, 1f
s_ecall:
    ecall
    FAIL_NO_TRAP 10
1:  CHECK_LAST_BITS 11, LAST_STATUS, MSTATUS_MPP, MSTATUS_MPP_S
    TEST_PASS
