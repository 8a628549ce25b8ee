// deleg_exceptions.S: where exceptions are taken, per medeleg and the current privilege.
//
// A synchronous exception raised in U or S is taken in S when its medeleg bit is set,
// in M when it is clear; raised in M it is always taken in M, delegated or not. The
// exceptions raised here, each from U, S and M: fetch access fault (1, jump to
// UNMAPPED_ADDR), illegal instruction (2, the all-zero halfword: tval 0), breakpoint
// (3), misaligned LR (4, tval = address), load access fault (5) and store access
// fault (7) on UNMAPPED_ADDR, and the ecalls (8, 9, 11). Page faults (12, 13, 15) are
// delegated in vm_page_faults.S. Cause 0 cannot happen with the C extension and QEMU
// 7.2 never raises cause 6 (see exc_misaligned.S).
//
// medeleg in QEMU 7.2: writing all ones reads back 0x00f0bfff. Bits 10 and 20-23 are
// the hypervisor's (QEMU 7.2 turns H on by default; privlab has no H, so they are not
// checked), and bit 11 (ecall from M) is writable, although the spec makes it
// read-only zero. Check 1 checks the spec's delegable bits and QEMU's bit 11.
//
// Expected traps, in order (check: cause level from):
//   U with medeleg = {1,2,3,4,5,7,8}: 10..15: causes 1,2,3,4,5,7 to S from U;
//       16: user_ecall to S from U (continue in S);  17: supervisor_ecall to M from S
//   S with the same medeleg: 20..25: causes 1,2,3,4,5,7 to S from S; 26: supervisor_ecall to M
//   S with medeleg = {9}: 27: supervisor_ecall to S from S; 28: breakpoint to M from S
//   M with medeleg = all ones: 30..35: causes 1,2,3,4,5,7 to M from M; 36: machine_ecall to M
//   U with medeleg = 0: 40..45: causes 1,2,3,4,5,7 to M from U; 46: user_ecall to M
//   S with medeleg = 0: 50..55: causes 1,2,3,4,5,7 to M from S; 56: supervisor_ecall to M
#include "conformance.h"

#define DELEGATED ((1 << CAUSE_FAULT_FETCH) | (1 << CAUSE_ILLEGAL_INSTRUCTION) | \
                   (1 << CAUSE_BREAKPOINT) | (1 << CAUSE_MISALIGNED_LOAD) | \
                   (1 << CAUSE_FAULT_LOAD) | (1 << CAUSE_FAULT_STORE))
#define SPEC_DELEGABLE 0xb3ff   // causes 0-9, 12, 13, 15

// Causes 1, 2, 3, 4, 5, 7 from `from`, each expected at `level`, checks base..base+5.
// Needs s0 = UNMAPPED_ADDR, s1 = buf + 1 (misaligned).
.macro SIX_EXCEPTIONS base, level, from
    EXPECT \base, \level, \from, CAUSE_FAULT_FETCH, UNMAPPED_ADDR, UNMAPPED_ADDR, RESUME_AT, .Lback\@
    jalr s0
    FAIL_NO_TRAP \base
.Lback\@:
    EXPECT_FAULT (\base + 1), \level, \from, CAUSE_ILLEGAL_INSTRUCTION, 0, .half 0
    EXPECT_FAULT (\base + 2), \level, \from, CAUSE_BREAKPOINT, 0, ebreak
    EXPECT_FAULT (\base + 3), \level, \from, CAUSE_MISALIGNED_LOAD, buf + 1, lr.w a0, (s1)
    EXPECT_FAULT (\base + 4), \level, \from, CAUSE_FAULT_LOAD, UNMAPPED_ADDR + 8, lw a0, 8(s0)
    EXPECT_FAULT (\base + 5), \level, \from, CAUSE_FAULT_STORE, UNMAPPED_ADDR + 4, sw a0, 4(s0)
.endm

TEST_MAIN deleg_exceptions
    li t0, -1
    csrw medeleg, t0
    CHECK_CSR_BITS 1, medeleg, SPEC_DELEGABLE | (1 << CAUSE_MACHINE_ECALL), SPEC_DELEGABLE | (1 << CAUSE_MACHINE_ECALL)
    csrw medeleg, zero
    CHECK_CSR 2, medeleg, 0

    li s0, UNMAPPED_ADDR
    la s1, buf + 1

    // Delegated, raised in U: taken in S.
    li t0, DELEGATED | (1 << CAUSE_USER_ECALL)
    csrw medeleg, t0
    MRET_TO PRV_U, u_delegated
u_delegated:
    SIX_EXCEPTIONS 10, PRV_S, PRV_U
    EXPECT 16, PRV_S, PRV_U, CAUSE_USER_ECALL, 1f, 0, RESUME_JUMP, s_delegated
1:  ecall
    FAIL_NO_TRAP 16
s_delegated:
    ECALL_TO_M 17, PRV_S

    // Delegated, raised in S: taken in S.
    MRET_TO PRV_S, 1f
1:  SIX_EXCEPTIONS 20, PRV_S, PRV_S
    ECALL_TO_M 26, PRV_S

    // ecall from S delegated: taken in S. Back to M through a breakpoint (not delegated).
    li t0, (1 << CAUSE_SUPERVISOR_ECALL)
    csrw medeleg, t0
    MRET_TO PRV_S, 1f
1:  EXPECT_FAULT 27, PRV_S, PRV_S, CAUSE_SUPERVISOR_ECALL, 0, ecall
    EXPECT 28, PRV_M, PRV_S, CAUSE_BREAKPOINT, 1f, 0, RESUME_JUMP, 2f
1:  ebreak
    FAIL_NO_TRAP 28
2:

    // Everything delegated, raised in M: still taken in M.
    li t0, -1
    csrw medeleg, t0
    SIX_EXCEPTIONS 30, PRV_M, PRV_M
    EXPECT_FAULT 36, PRV_M, PRV_M, CAUSE_MACHINE_ECALL, 0, ecall

    // Nothing delegated: taken in M from U and from S.
    csrw medeleg, zero
    MRET_TO PRV_U, 1f
1:  SIX_EXCEPTIONS 40, PRV_M, PRV_U
    ECALL_TO_M 46, PRV_U
    MRET_TO PRV_S, 1f
1:  SIX_EXCEPTIONS 50, PRV_M, PRV_S
    ECALL_TO_M 56, PRV_S
    TEST_PASS

    .data
    .balign 16
buf:
    .space 16
