// counters.S: rdcycle, rdtime, rdinstret (and the RV32 high halves) and their gating.
//
// M can always read cycle, time and instret. S can read a counter only when its bit
// (CY 0, TM 1, IR 2) is set in mcounteren; U only when it is set in both mcounteren and
// scounteren. Otherwise the read is an illegal instruction with tval = its bits:
// rdcycle a0 = 0xc0002573, rdtime a0 = 0xc0102573, rdinstret a0 = 0xc0202573 (RV32:
// rdcycleh/rdtimeh/rdinstreth a0 = 0xc8002573/0xc8102573/0xc8202573). QEMU 7.2 follows
// the spec here. time counts at the CLINT's 10 MHz and agrees with mtime; all three
// increase. (Values are never compared with instruction counts: under QEMU cycle and
// instret follow the host clock, under privlab the instruction count.)
//
// Expected traps, in order (illegal_instruction unless said, tval as above):
//  10-12: rdcycle, rdtime, rdinstret from S with mcounteren = 0 (RV32: 13-15 the high halves)
//  16: supervisor_ecall to M
//  17: rdcycle from S with mcounteren = TM;  18: rdinstret from S, same
//  19: supervisor_ecall to M
//  31: supervisor_ecall to M (after reading all three in S with mcounteren = 7)
//  20-22: rdcycle, rdtime, rdinstret from U with mcounteren = 7, scounteren = 0
//  23: user_ecall to M
//  24-26: the same from U with mcounteren = 0, scounteren = 7
//  27: user_ecall to M
//  28: rdcycle from U with both = TM;  29: rdinstret from U, same
//  30: user_ecall to M
//  32: user_ecall to M (after reading all of them in U with both = 7)
#include "conformance.h"

.macro ILLEGAL check, from, bits, insn:vararg
    EXPECT \check, PRV_M, \from, CAUSE_ILLEGAL_INSTRUCTION, .Linsn\@, \bits, RESUME_AT, .Lnext\@
.Linsn\@:
    \insn
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

// Read a 64-bit counter into hi:lo (RV32) or lo (RV64).
.macro READ64 lo, hi, csr, csrh
#if __riscv_xlen == 32
.Lretry\@:
    csrr \hi, \csrh
    csrr \lo, \csr
    csrr t6, \csrh
    bne \hi, t6, .Lretry\@
#else
    csrr \lo, \csr
    li \hi, 0
#endif
.endm

// Fail `check` unless s3:s2 > s1:s0 (unsigned, 64-bit).
.macro CHECK_GREATER check
    bltu s1, s3, .Lok\@
    bne s1, s3, .Lbad\@
    bltu s0, s2, .Lok\@
.Lbad\@:
    mv a1, s2
    mv a2, s0
    FAIL \check
.Lok\@:
.endm

TEST_MAIN counters
    // time moves forward, in step with the CLINT's mtime.
    READ64 s0, s1, time, timeh
1:  READ64 s2, s3, time, timeh
    bne s2, s0, 2f
    bne s3, s1, 2f
    j 1b
2:  CHECK_GREATER 1
    li t0, CLINT_MTIME_ADDR
    LREG s0, 0(t0)              // mtime (RV32: its low word), then time: not smaller
    csrr s2, time
    sub t1, s2, s0
    bgez t1, 3f
    mv a1, s2
    mv a2, s0
    FAIL 2
3:
    // cycle and instret increase over a loop.
    READ64 s0, s1, cycle, cycleh
    READ64 s4, s5, instret, instreth
    li t0, 100
4:  addi t0, t0, -1
    bnez t0, 4b
    READ64 s2, s3, cycle, cycleh
    CHECK_GREATER 3
    mv s0, s4
    mv s1, s5
    READ64 s2, s3, instret, instreth
    CHECK_GREATER 4

    // S: gated by mcounteren.
    csrw mcounteren, zero
    csrw scounteren, zero
    MRET_TO PRV_S, 1f
1:  ILLEGAL 10, PRV_S, 0xc0002573, rdcycle a0
    ILLEGAL 11, PRV_S, 0xc0102573, rdtime a0
    ILLEGAL 12, PRV_S, 0xc0202573, rdinstret a0
#if __riscv_xlen == 32
    ILLEGAL 13, PRV_S, 0xc8002573, rdcycleh a0
    ILLEGAL 14, PRV_S, 0xc8102573, rdtimeh a0
    ILLEGAL 15, PRV_S, 0xc8202573, rdinstreth a0
#endif
    ECALL_TO_M 16, PRV_S

    li t0, COUNTEREN_TM
    csrw mcounteren, t0
    CHECK_CSR 5, mcounteren, COUNTEREN_TM
    MRET_TO PRV_S, 1f
1:  ILLEGAL 17, PRV_S, 0xc0002573, rdcycle a0
    rdtime a0
#if __riscv_xlen == 32
    rdtimeh a0
#endif
    ILLEGAL 18, PRV_S, 0xc0202573, rdinstret a0
    ECALL_TO_M 19, PRV_S

    li t0, COUNTEREN_CY | COUNTEREN_TM | COUNTEREN_IR
    csrw mcounteren, t0
    MRET_TO PRV_S, 1f
1:  rdcycle a0
    rdtime a0
    rdinstret a0
    // S can set scounteren.
    li t0, COUNTEREN_CY | COUNTEREN_TM | COUNTEREN_IR
    csrw scounteren, t0
    CHECK_CSR 6, scounteren, COUNTEREN_CY | COUNTEREN_TM | COUNTEREN_IR
    csrw scounteren, zero
    ECALL_TO_M 31, PRV_S

    // U: needs the bit in both.
    MRET_TO PRV_U, 1f
1:  ILLEGAL 20, PRV_U, 0xc0002573, rdcycle a0
    ILLEGAL 21, PRV_U, 0xc0102573, rdtime a0
    ILLEGAL 22, PRV_U, 0xc0202573, rdinstret a0
    ECALL_TO_M 23, PRV_U

    csrw mcounteren, zero
    li t0, COUNTEREN_CY | COUNTEREN_TM | COUNTEREN_IR
    csrw scounteren, t0
    MRET_TO PRV_U, 1f
1:  ILLEGAL 24, PRV_U, 0xc0002573, rdcycle a0
    ILLEGAL 25, PRV_U, 0xc0102573, rdtime a0
    ILLEGAL 26, PRV_U, 0xc0202573, rdinstret a0
    ECALL_TO_M 27, PRV_U

    li t0, COUNTEREN_TM
    csrw mcounteren, t0
    csrw scounteren, t0
    MRET_TO PRV_U, 1f
1:  ILLEGAL 28, PRV_U, 0xc0002573, rdcycle a0
    rdtime a0
    ILLEGAL 29, PRV_U, 0xc0202573, rdinstret a0
    ECALL_TO_M 30, PRV_U

    li t0, COUNTEREN_CY | COUNTEREN_TM | COUNTEREN_IR
    csrw mcounteren, t0
    csrw scounteren, t0
    MRET_TO PRV_U, 1f
1:  rdcycle a0
    rdtime a0
    rdinstret a0
#if __riscv_xlen == 32
    rdcycleh a0
    rdtimeh a0
    rdinstreth a0
#endif
    ECALL_TO_M 32, PRV_U
    csrw mcounteren, zero
    csrw scounteren, zero
    TEST_PASS
