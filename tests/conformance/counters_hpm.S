// counters_hpm.S: the hpm counters as QEMU 7.2 exposes them on virt (16 of them), and
// the WARL values of the counter-control CSRs.
//
// mhpmcounter3-18 (and their RV32 high halves) are read/write and count nothing with no
// event selected; mhpmcounter19-31 do not exist (illegal instruction, tval = the bits).
// mhpmevent3-31 all keep what is written. hpmcounter3-18 read mhpmcounterN, in M always,
// in S when mcounteren bit N is set, in U when scounteren bit N is set too (else illegal);
// hpmcounter19-31 are illegal even in M. mcounteren, scounteren and mcountinhibit keep
// every XLEN bit (QEMU 7.2; the spec makes them 32 bits wide, mcountinhibit's bit 1
// read-only zero).
//
// Expected traps, in order (illegal_instruction unless said):
//  1: csrr a0, mhpmcounter19 in M (0xb1302573)
//  2: csrr a0, hpmcounter19 in M (0xc1302573)
//  3: csrr a0, 0xb93 (mhpmcounter19h) in M, RV32 only (0xb9302573)
//  9: csrr a0, hpmcounter3 from S, mcounteren = 0 (0xc0302573)
// 21: supervisor_ecall
// 10: csrr a0, hpmcounter18 from S, mcounteren = bit 3 only (0xc1202573)
// 11: supervisor_ecall
// 13: csrr a0, hpmcounter3 from U, mcounteren = bit 3, scounteren = 0 (0xc0302573)
// 14: user_ecall
// 18: user_ecall (hpmcounter3 read from U with scounteren = bit 3 too)
#include "conformance.h"

.macro ILLEGAL check, from, bits, insn:vararg
    EXPECT \check, PRV_M, \from, CAUSE_ILLEGAL_INSTRUCTION, .Linsn\@, \bits, RESUME_AT, .Lnext\@
.Linsn\@:
    \insn
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

#define HPM3 0x5a5a1234

TEST_MAIN counters_hpm
    ILLEGAL 1, PRV_M, 0xb1302573, csrr a0, 0xb13
    ILLEGAL 2, PRV_M, 0xc1302573, csrr a0, 0xc13
#if __riscv_xlen == 32
    ILLEGAL 3, PRV_M, 0xb9302573, csrr a0, 0xb93
#endif
    // WARL values.
    li t0, -1
    csrw mcountinhibit, t0
    CHECK_CSR 4, mcountinhibit, -1        // QEMU 7.2: all XLEN bits, time (bit 1) too
    csrw mcountinhibit, zero
    csrw mcounteren, t0
    CHECK_CSR 5, mcounteren, -1          // QEMU 7.2: all XLEN bits
    csrw mcounteren, zero
    csrw scounteren, t0
    CHECK_CSR 6, scounteren, -1
    csrw scounteren, zero
    li t0, 0x1234
    csrw 0x323, t0              // mhpmevent3
    CHECK_CSR 7, 0x323, 0x1234
    csrw 0x33f, t0              // mhpmevent31
    CHECK_CSR 8, 0x33f, 0x1234
    csrw 0x323, zero
    csrw 0x33f, zero

    // mhpmcounter3 holds what is written (nothing counts it); hpmcounter3 shows it.
    li t0, HPM3
    csrw 0xb03, t0
    CHECK_CSR 12, 0xb03, HPM3
    CHECK_CSR 15, 0xc03, HPM3
    li t0, 7
    csrw 0xb12, t0
    CHECK_CSR 16, 0xc12, 7
#if __riscv_xlen == 32
    li t0, 0x77
    csrw 0xb83, t0              // mhpmcounter3h
    CHECK_CSR 17, 0xc83, 0x77
#endif

    MRET_TO PRV_S, in_s
in_s:
    ILLEGAL 9, PRV_S, 0xc0302573, csrr a0, 0xc03
    ECALL_TO_M 21, PRV_S
    li t0, 8                    // mcounteren = bit 3
    csrw mcounteren, t0
    MRET_TO PRV_S, in_s2
in_s2:
    ILLEGAL 10, PRV_S, 0xc1202573, csrr a0, 0xc12
    csrr a0, 0xc03
    li t0, HPM3
    bne a0, t0, fail_s
    ECALL_TO_M 11, PRV_S

    MRET_TO PRV_U, in_u
in_u:
    ILLEGAL 13, PRV_U, 0xc0302573, csrr a0, 0xc03
    ECALL_TO_M 14, PRV_U
    li t0, 8
    csrw scounteren, t0
    MRET_TO PRV_U, in_u2
in_u2:
    csrr a0, 0xc03
    li t0, HPM3
    bne a0, t0, fail_u
    ECALL_TO_M 18, PRV_U
    csrw mcounteren, zero
    csrw scounteren, zero
    TEST_PASS

fail_s:
    FAIL 19
fail_u:
    FAIL 20
