// exc_breakpoint.S: ebreak and c.ebreak (cause 3) from M, S and U.
//
// QEMU 7.2 reports tval = 0 for both encodings (the spec allows 0 or the pc); epc is
// the breakpoint instruction itself, 4-byte or 2-byte. Nothing is delegated, so every trap is taken in M.
//
// Expected traps (taken in M, tval 0):
//   1: breakpoint from M, epc m_ebreak (4-byte ebreak, 0x00100073)
//   2: breakpoint from M, epc m_cebreak (c.ebreak, 0x9002)
//   3: breakpoint from S, epc s_ebreak;   4: breakpoint from S, epc s_cebreak
//   5: supervisor_ecall back to M
//   6: breakpoint from U, epc u_ebreak;   7: breakpoint from U, epc u_cebreak
//   8: user_ecall back to M
#include "conformance.h"

// A breakpoint from privilege `from` at label `at`; execution resumes after it.
.macro BREAK check, from, at, insn
    EXPECT \check, PRV_M, \from, CAUSE_BREAKPOINT, \at, 0, RESUME_AT, .Lnext\@
\at:
    \insn
.Lnext\@:
.endm

// The 4-byte form, which the assembler would otherwise compress.
.macro EBREAK32
    .option push
    .option norvc
    ebreak
    .option pop
.endm

TEST_MAIN exc_breakpoint
    BREAK 1, PRV_M, m_ebreak, EBREAK32
    BREAK 2, PRV_M, m_cebreak, c.ebreak
    CHECK_LAST_BITS 9, LAST_STATUS, MSTATUS_MPP, MSTATUS_MPP_M

    MRET_TO PRV_S, in_s
in_s:
    BREAK 3, PRV_S, s_ebreak, EBREAK32
    BREAK 4, PRV_S, s_cebreak, c.ebreak
    ECALL_TO_M 5, PRV_S

    MRET_TO PRV_U, in_u
in_u:
    BREAK 6, PRV_U, u_ebreak, EBREAK32
    BREAK 7, PRV_U, u_cebreak, c.ebreak
    ECALL_TO_M 8, PRV_U

    // The encodings really are the 4-byte and the 2-byte ones.
    la t0, m_ebreak
    lhu t1, 0(t0)
    lhu t2, 2(t0)
    slli t2, t2, 16
    or t1, t1, t2
    CHECK_REG 10, t1, 0x00100073
    la t0, m_cebreak
    lhu t1, 0(t0)
    CHECK_REG 11, t1, 0x9002
    TEST_PASS
