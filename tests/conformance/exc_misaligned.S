// exc_misaligned.S: what is and is not an address-misaligned exception in QEMU 7.2.
//
// Plain loads and stores at any alignment do not trap in QEMU 7.2: the access happens
// (the spec allows this). LR and AMOs must be naturally aligned. QEMU 7.2 raises
// LOAD address misaligned (cause 4) for a misaligned LR and ALSO for a misaligned AMO,
// where the spec says store/AMO address misaligned (cause 6); tval = the address.
// A misaligned SC never traps in QEMU 7.2: it fails (rd = 1) without touching memory.
// QEMU evidently compares the address with the reservation first, and a misaligned
// address can hold no reservation (its LR trapped). The same holds for an SC
// to unmapped memory. Instruction-address-misaligned (cause 0) cannot happen with the
// C extension: jalr clears bit 0 and branch offsets are even.
//
// Expected traps (taken in M, nothing delegated):
//   9: misaligned_load from M  lr.w at buf+1            tval buf+1
//  10: misaligned_load from M  amoadd.w at buf+2        tval buf+2   (spec: cause 6)
//  11: misaligned_load from M  amoswap.w at buf+6       tval buf+6   (spec: cause 6)
//  12: misaligned_load from M  lr.d at buf+4 (RV64)     tval buf+4
//  13: misaligned_load from M  amoor.d at buf+4 (RV64)  tval buf+4   (spec: cause 6)
//  16: misaligned_load from U  amoadd.w at buf+1        tval buf+1   (spec: cause 6)
//  17: user_ecall back to M
#include "conformance.h"

.macro MISALIGNED check, from, cause, addr, insn:vararg
    EXPECT \check, PRV_M, \from, \cause, .Linsn\@, \addr, RESUME_AT, .Lnext\@
.Linsn\@:
    \insn
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

TEST_MAIN exc_misaligned
    // Misaligned plain stores and loads work and do not trap.
    la s0, buf
    li t0, 0x44332211
    sw t0, 1(s0)
    lw t1, 1(s0)
    CHECK_REG 1, t1, 0x44332211
    lbu t1, 2(s0)
    CHECK_REG 2, t1, 0x22
    li t0, 0x7788
    sh t0, 7(s0)
    lhu t1, 7(s0)
    CHECK_REG 3, t1, 0x7788
    lh t1, 3(s0)                // bytes 0x33, 0x44 at buf+3, buf+4
    CHECK_REG 4, t1, 0x4433
    li t0, -1
    SREG t0, 11(s0)
    LREG t1, 11(s0)
    CHECK_REG 5, t1, -1
    CHECK_LAST 6, LAST_COUNT, 0

    // LR and AMOs.
    addi a2, s0, 1
    MISALIGNED 9, PRV_M, CAUSE_MISALIGNED_LOAD, buf + 1, lr.w a0, (a2)
    addi a2, s0, 2
    MISALIGNED 10, PRV_M, CAUSE_MISALIGNED_LOAD, buf + 2, amoadd.w a0, a1, (a2)
    addi a2, s0, 6
    MISALIGNED 11, PRV_M, CAUSE_MISALIGNED_LOAD, buf + 6, amoswap.w a0, a1, (a2)
#if __riscv_xlen == 64
    addi a2, s0, 4
    MISALIGNED 12, PRV_M, CAUSE_MISALIGNED_LOAD, buf + 4, lr.d a0, (a2)
    MISALIGNED 13, PRV_M, CAUSE_MISALIGNED_LOAD, buf + 4, amoor.d a0, a1, (a2)
#endif

    // SC: no reservation at a misaligned or unmapped address, so no access, no trap.
    addi a2, s0, 1
    li a0, 5
    sc.w a0, a1, (a2)
    CHECK_REG 14, a0, 1
    li a2, UNMAPPED_ADDR
    li a0, 5
    sc.w a0, a1, (a2)
    CHECK_REG 15, a0, 1

    la a2, buf + 1
    MRET_TO PRV_U, in_u
in_u:
    MISALIGNED 16, PRV_U, CAUSE_MISALIGNED_LOAD, buf + 1, amoadd.w a0, a1, (a2)
    ECALL_TO_M 17, PRV_U
    TEST_PASS

    .data
    .balign 16
buf:
    .space 32
