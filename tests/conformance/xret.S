// xret.S: mret and sret transitions, their illegal uses, and xPP/xPIE/xIE on trap entry.
//
// mret: privilege := MPP, MIE := MPIE, MPIE := 1, MPP := U. sret (in S, or in M):
// privilege := SPP, SIE := SPIE, SPIE := 1, SPP := U. sret in U, sret in S with
// mstatus.TSR = 1, mret in S or U: illegal instruction with tval = the instruction
// bits. sret in M ignores TSR. A trap into M sets MPP to the old privilege, MPIE to the
// old MIE, MIE to 0; into S: SPP, SPIE, SIE likewise. The privilege an xRET reached is
// read back from the cause of the next ecall.
//
// QEMU 7.2 differs from spec 1.12 on MPRV: an mret or sret to S or U does NOT clear
// mstatus.MPRV (1.12 says it must). QEMU 7.2 is the reference, so checks 5, 6, 9, 10 and
// 14 expect MPRV to stay 1. (These run with satp = 0 and an all-RWX PMP entry, so the
// M-mode accesses MPRV redirects behave the same.)
//
// Expected traps, in order:
//   4: supervisor_ecall to M (after mret to S)            8: user_ecall to M (after mret to U)
//  13: supervisor_ecall to M (after sret from M to S)     18: user_ecall to M (after sret from S to U)
//  20: illegal_instruction to M from U, sret,  tval 0x10200073
//  21: illegal_instruction to M from U, mret,  tval 0x30200073
//  22: user_ecall to M
//  23: illegal_instruction to M from S, sret with TSR = 1, tval 0x10200073
//  24: illegal_instruction to M from S, mret,  tval 0x30200073
//  25: supervisor_ecall to M                              28: supervisor_ecall to M (sret in M with TSR)
//  30: user_ecall to S (medeleg bit 8), from U with SIE = 1
//  33: breakpoint to S (medeleg bit 3), from S with SIE = 1
//  36: supervisor_ecall to M
#include "conformance.h"

// mstatus := (mstatus & ~clear) | set, in M.
.macro MSTATUS_SET clear, set
    li t0, \clear
    csrc mstatus, t0
    li t0, \set
    csrs mstatus, t0
.endm

// mret / sret to `target` with the xPP already in mstatus.
.macro MRET_AT target
    la t0, \target
    csrw mepc, t0
    mret
.endm
.macro SRET_AT target
    la t0, \target
    csrw sepc, t0
    sret
.endm

#define MIES (MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_MPP | MSTATUS_MPRV)
#define SIES (MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP)

TEST_MAIN xret
    // mret to M: MIE := MPIE (1), MPIE := 1, MPP := U.
    MSTATUS_SET MIES, MSTATUS_MPP_M | MSTATUS_MPIE
    MRET_AT 1f
1:  CHECK_CSR_BITS 1, mstatus, MIES, MSTATUS_MIE | MSTATUS_MPIE
    csrci mstatus, MSTATUS_MIE
    // mret to M: MIE := MPIE (0), MPIE := 1.
    MSTATUS_SET MIES, MSTATUS_MPP_M | MSTATUS_MIE
    MRET_AT 1f
1:  CHECK_CSR_BITS 2, mstatus, MIES, MSTATUS_MPIE
    // mret to M keeps MPRV.
    MSTATUS_SET MIES, MSTATUS_MPP_M | MSTATUS_MPRV
    MRET_AT 1f
1:  CHECK_CSR_BITS 3, mstatus, MIES, MSTATUS_MPRV | MSTATUS_MPIE

    // mret to S clears MPRV; MIE := MPIE = 1 (seen as MPIE at the next trap).
    MSTATUS_SET MIES, MSTATUS_MPP_S | MSTATUS_MPIE | MSTATUS_MPRV
    MRET_AT in_s_from_mret
in_s_from_mret:
    ECALL_TO_M 4, PRV_S
    CHECK_LAST_BITS 5, LAST_STATUS, MIES, MSTATUS_MPP_S | MSTATUS_MPIE | MSTATUS_MPRV
    CHECK_CSR_BITS 6, mstatus, MSTATUS_MPRV, MSTATUS_MPRV

    // mret to U clears MPRV; MIE := MPIE = 0.
    MSTATUS_SET MIES, MSTATUS_MIE | MSTATUS_MPRV
    MRET_AT in_u_from_mret
in_u_from_mret:
    ECALL_TO_M 8, PRV_U
    CHECK_LAST_BITS 9, LAST_STATUS, MIES, MSTATUS_MPRV
    CHECK_CSR_BITS 10, mstatus, MSTATUS_MPRV, MSTATUS_MPRV

    // sret in M, to S: SIE := SPIE (1), SPIE := 1, SPP := U, MPRV := 0.
    MSTATUS_SET MIES | SIES, MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_MPRV | MSTATUS_MPP_M
    SRET_AT in_s_from_sret
in_s_from_sret:
    CHECK_CSR_BITS 11, sstatus, SIES, MSTATUS_SIE | MSTATUS_SPIE
    // sret in S, to S: SIE := SPIE (0), SPIE := 1, SPP := U.
    li t0, SIES
    csrc sstatus, t0
    li t0, MSTATUS_SPP | MSTATUS_SIE
    csrs sstatus, t0
    SRET_AT 1f
1:  CHECK_CSR_BITS 12, sstatus, SIES, MSTATUS_SPIE
    ECALL_TO_M 13, PRV_S
    CHECK_CSR_BITS 14, mstatus, MSTATUS_MPRV, MSTATUS_MPRV
    li t0, MSTATUS_MPRV
    csrc mstatus, t0

    // sret in S, to U: SIE := SPIE (0), SPIE := 1, SPP := U.
    MSTATUS_SET SIES, MSTATUS_SIE
    MRET_TO PRV_S, 1f
1:  SRET_AT in_u_from_sret
in_u_from_sret:
    ECALL_TO_M 18, PRV_U
    CHECK_LAST_BITS 19, LAST_STATUS, SIES, MSTATUS_SPIE

    // Illegal xRETs in U.
    MRET_TO PRV_U, in_u
in_u:
    EXPECT 20, PRV_M, PRV_U, CAUSE_ILLEGAL_INSTRUCTION, 1f, 0x10200073, RESUME_AT, 2f
1:  sret
2:  EXPECT 21, PRV_M, PRV_U, CAUSE_ILLEGAL_INSTRUCTION, 1f, 0x30200073, RESUME_AT, 2f
1:  mret
2:  ECALL_TO_M 22, PRV_U

    // Illegal xRETs in S: sret with TSR, mret.
    li t0, MSTATUS_TSR
    csrs mstatus, t0
    MRET_TO PRV_S, in_s_tsr
in_s_tsr:
    EXPECT 23, PRV_M, PRV_S, CAUSE_ILLEGAL_INSTRUCTION, 1f, 0x10200073, RESUME_AT, 2f
1:  sret
2:  EXPECT 24, PRV_M, PRV_S, CAUSE_ILLEGAL_INSTRUCTION, 1f, 0x30200073, RESUME_AT, 2f
1:  mret
2:  ECALL_TO_M 25, PRV_S
    // TSR does not affect sret in M.
    MSTATUS_SET SIES, MSTATUS_SPP
    SRET_AT in_s_after_tsr
in_s_after_tsr:
    CHECK_CSR_BITS 26, sstatus, SIES, MSTATUS_SPIE
    ECALL_TO_M 28, PRV_S
    CHECK_CSR_BITS 29, mstatus, MSTATUS_TSR, MSTATUS_TSR
    li t0, MSTATUS_TSR
    csrc mstatus, t0

    // Trap entry into S from U with SIE = 1: SPP = U, SPIE = 1, SIE = 0.
    li t0, (1 << CAUSE_USER_ECALL) | (1 << CAUSE_BREAKPOINT)
    csrw medeleg, t0
    MSTATUS_SET SIES, MSTATUS_SIE
    MRET_TO PRV_U, in_u_deleg
in_u_deleg:
    EXPECT 30, PRV_S, PRV_U, CAUSE_USER_ECALL, 1f, 0, RESUME_JUMP, in_s_deleg
1:  ecall
    FAIL_NO_TRAP 30
in_s_deleg:
    CHECK_LAST_BITS 31, LAST_STATUS, SIES, MSTATUS_SPIE
    // Trap entry into S from S with SIE = 1: SPP = S, SPIE = 1, SIE = 0; the handler's
    // sret restores SIE = 1, SPIE = 1, SPP = U.
    csrsi sstatus, MSTATUS_SIE
    CHECK_CSR_BITS 32, sstatus, SIES, MSTATUS_SIE | MSTATUS_SPIE
    EXPECT 33, PRV_S, PRV_S, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  ebreak
    FAIL_NO_TRAP 33
2:  CHECK_LAST_BITS 34, LAST_STATUS, SIES, MSTATUS_SPP | MSTATUS_SPIE
    CHECK_CSR_BITS 35, sstatus, SIES, MSTATUS_SIE | MSTATUS_SPIE
    ECALL_TO_M 36, PRV_S
    TEST_PASS
