// triggers_code_page.S: load and store triggers on a word that shares its page with
// the code running in M without paging, as QEMU 7.2 fires them: the page's fetches
// give no pass to its loads and stores.
//
// `word` sits in .text, on the page of the instructions that access it. Trigger 0
// watches its XLEN/8 bytes (mcontrol, M): a store fires and does not write, a store to
// the next word does; then a load fires, and a load of the next word does not.
//
// Expected traps, in order (breakpoint from M to M, tval 0):
//  1: the sw to word (store trigger)
//  3: the lw of word (load trigger)
#include "conformance.h"

#define TYPE(t) ((t) << (__riscv_xlen - MCONTROL_TYPE_FROM_TOP))
#define MC TYPE(2)

TEST_MAIN triggers_code_page
    la s0, word
    csrw tselect, zero
    csrw tdata2, s0
    li t0, MC | MCONTROL_M | MCONTROL_STORE
    csrw tdata1, t0
    li t1, 0x5a5a
    EXPECT 1, PRV_M, PRV_M, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  sw t1, 0(s0)
    FAIL_NO_TRAP 1
2:  sw t1, REGBYTES(s0)
    li t0, MC | MCONTROL_M | MCONTROL_LOAD
    csrw tdata1, t0
    EXPECT 3, PRV_M, PRV_M, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  lw t2, 0(s0)
    FAIL_NO_TRAP 3
2:  lw t2, REGBYTES(s0)
    CHECK_REG 4, t2, 0x5a5a
    li t0, MC
    csrw tdata1, t0
    lw t2, 0(s0)
    CHECK_REG 2, t2, 0          // the store that fired did not write
    TEST_PASS

    .balign REGBYTES
word:
    .space 2 * REGBYTES
