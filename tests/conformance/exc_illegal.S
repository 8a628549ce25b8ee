// exc_illegal.S: illegal-instruction exceptions (cause 2) and their tval.
//
// QEMU 7.2 reports the instruction bits in mtval for every illegal instruction, both
// the ones its decoder rejects and the ones rejected at run time (CSR privilege and
// read-only checks, xRET/wfi privilege, TVM): the 32 bits of a 4-byte instruction
// zero-extended, the 16 bits of a compressed one, and 0 for the all-zero halfword
// (which is the defined illegal compressed instruction, so only 16 bits count).
// Nothing is delegated: every trap is taken in M; each resumes after the instruction.
//
// Expected traps (cause 2, taken in M), check: from, instruction -> tval:
//   1: M  .word 0xfffff00b (custom-0, all fields set)   -> 0xfffff00b
//   2: M  .word 0xffffffff                              -> 0xffffffff
//   3: M  fadd.s f0,f0,f0 with mstatus.FS = 0 (0x00000053) -> 0x53
//   4: M  .half 0x0004 (c.addi4spn, nzuimm = 0)         -> 0x0004
//   5: M  .half 0x6001 (c.lui x0, 0: reserved)          -> 0x6001
//   6: M  .half 0x8002 (c.jr x0: reserved)              -> 0x8002
//   7: M  .half 0x0000 (all zero)                       -> 0
//   8: M  csrw mvendorid, zero (read-only CSR)          -> 0xf1101073
//   9: M  csrr t0, 0x7c0 (unimplemented CSR)            -> 0x7c0022f3
//  10: U  csrr t0, mstatus                              -> 0x300022f3
//  11: U  csrr t0, sstatus                              -> 0x100022f3
//  12: U  .word 0x0000000b (custom-0)                   -> 0x0000000b
//  13: U  .half 0x0000                                  -> 0
//  14: U  mret                                          -> 0x30200073
//  15: U  sret                                          -> 0x10200073
//  16: U  wfi                                           -> 0x10500073
//  17: U  ecall back to M (cause 8)
//  18: S  csrr t0, mstatus                              -> 0x300022f3
//  19: S  mret                                          -> 0x30200073
//  20: S  csrr t0, satp with mstatus.TVM = 1            -> 0x180022f3
//  21: S  sfence.vma with mstatus.TVM = 1               -> 0x12000073
//  22: S  ecall back to M (cause 9)
#include "conformance.h"

// `insn` (any instruction or data directive) must raise illegal instruction from
// privilege `from` with tval `bits`; execution resumes after it.
.macro ILLEGAL check, from, bits, insn:vararg
    EXPECT \check, PRV_M, \from, CAUSE_ILLEGAL_INSTRUCTION, .Linsn\@, \bits, RESUME_AT, .Lnext\@
.Linsn\@:
    \insn
.Lnext\@:
.endm

TEST_MAIN exc_illegal
    ILLEGAL 1, PRV_M, 0xfffff00b, .word 0xfffff00b
    ILLEGAL 2, PRV_M, 0xffffffff, .word 0xffffffff
    ILLEGAL 3, PRV_M, 0x00000053, .word 0x00000053
    ILLEGAL 4, PRV_M, 0x0004, .half 0x0004
    ILLEGAL 5, PRV_M, 0x6001, .half 0x6001
    ILLEGAL 6, PRV_M, 0x8002, .half 0x8002
    ILLEGAL 7, PRV_M, 0, .half 0x0000
    ILLEGAL 8, PRV_M, 0xf1101073, csrw mvendorid, zero
    ILLEGAL 9, PRV_M, 0x7c0022f3, csrr t0, 0x7c0

    MRET_TO PRV_U, in_u
in_u:
    ILLEGAL 10, PRV_U, 0x300022f3, csrr t0, mstatus
    ILLEGAL 11, PRV_U, 0x100022f3, csrr t0, sstatus
    ILLEGAL 12, PRV_U, 0x0000000b, .word 0x0000000b
    ILLEGAL 13, PRV_U, 0, .half 0x0000
    ILLEGAL 14, PRV_U, 0x30200073, mret
    ILLEGAL 15, PRV_U, 0x10200073, sret
    ILLEGAL 16, PRV_U, 0x10500073, wfi
    ECALL_TO_M 17, PRV_U

    li t0, MSTATUS_TVM
    csrs mstatus, t0
    MRET_TO PRV_S, in_s
in_s:
    ILLEGAL 18, PRV_S, 0x300022f3, csrr t0, mstatus
    ILLEGAL 19, PRV_S, 0x30200073, mret
    ILLEGAL 20, PRV_S, 0x180022f3, csrr t0, satp
    ILLEGAL 21, PRV_S, 0x12000073, sfence.vma
    ECALL_TO_M 22, PRV_S
    TEST_PASS
