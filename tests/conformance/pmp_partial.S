// pmp_partial.S: a PMP entry that grants some access types but not others, checked
// for each access as it happens.
//
// Entry 0 covers all memory with R only. M-mode with mstatus.MPRV = 1 and MPP = S
// loads and stores with S's permissions: the load succeeds, the store right after it,
// to the same word, is a store access fault (cause 7, tval = the address).
//
// Unicorn 2.1.4 by itself checks PMP only when it fills a TLB entry and then caches the
// page's full permissions, so the store would not be checked again
// (docs/unicorn.md#pmp-permissions-cached-per-page); QEMU 7.2 limits the cached
// permissions to what PMP allows, and so does privlab's core (harness/native/pmp.c).
//
// Expected traps, in order (to M):
//   1: store_access from M with MPRV = 1, MPP = S, tval = buf
#include "conformance.h"

TEST_MAIN pmp_partial
    li t0, -1
    csrw pmpaddr0, t0
    li t0, PMP_A_NAPOT | PMP_R
    csrw pmpcfg0, t0
    la a0, buf
    li t0, MSTATUS_MPP
    csrc mstatus, t0
    li t0, MSTATUS_MPRV | MSTATUS_MPP_S
    csrs mstatus, t0
    lw t1, 0(a0)
    EXPECT 1, PRV_M, PRV_M, CAUSE_FAULT_STORE, 1f, buf, RESUME_AT, 2f
1:  sw t1, 0(a0)
    FAIL_NO_TRAP 1
2:  li t0, MSTATUS_MPRV         // (the handler's mret left MPRV set, MPP = U)
    csrc mstatus, t0
    TEST_PASS

    .data
    .balign 16
buf:
    .space 16
