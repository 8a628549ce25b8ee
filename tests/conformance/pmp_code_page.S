// pmp_code_page.S: a PMP entry smaller than a page, on the page U's code runs from:
// the page's fetches give its loads and stores no pass.
//
// Entry 0 is NA4 over `word`, R only; entry 1 opens all memory (NAPOT, RWX). U runs
// code on `word`'s page: it loads `word` (allowed), stores to the word after it
// (allowed), then stores to `word`: a store access fault (cause 7, tval = word), and
// the word keeps its value.
//
// Expected traps, in order (to M):
//   1: store_access from U, tval = word
//   3: user_ecall
#include "conformance.h"

TEST_MAIN pmp_code_page
    la t0, word
    srli t0, t0, 2
    csrw pmpaddr0, t0
    li t0, -1
    csrw pmpaddr1, t0
    li t0, (PMP_A_NA4 | PMP_R) | ((PMP_A_NAPOT | PMP_R | PMP_W | PMP_X) << 8)
    csrw pmpcfg0, t0
    la s0, word
    MRET_TO PRV_U, in_u

in_u:
    lw t1, 0(s0)
    sw t1, 4(s0)
    li t2, 0x77
    EXPECT 1, PRV_M, PRV_U, CAUSE_FAULT_STORE, 1f, word, RESUME_AT, 2f
1:  sw t2, 0(s0)
    FAIL_NO_TRAP 1
2:  lw t1, 0(s0)
    CHECK_REG 2, t1, 0x1234
    ECALL_TO_M 3, PRV_U
    TEST_PASS

    .balign 4
word:
    .word 0x1234
    .word 0
