// race.S: two harts add ITER to one counter each, in three ways (VARIANT):
//   0  load, some work, store: an update made between another hart's load and store
//      is lost;
//   1  amoadd.w: atomic, the total is exact;
//   2  lr.w, the same work, sc.w, retried until it succeeds: exact; a failed SC is
//      counted in sc_failures (the reservation went while the hart was switched out).
// Hart 0 waits for both, prints the counter and the SC failures in hex and powers off.
// Harts past the second wait in wfi for ever. The same program runs on QEMU -smp 2.
#include "common.h"
#ifndef VARIANT
#define VARIANT 0
#endif
#define HARTS 2
#define ITER 2000

    .section .text.entry
    .globl _start
_start:
    csrr s0, mhartid
    li t0, HARTS
    bgeu s0, t0, park
    la a0, counter
    li s1, ITER
loop:
#if VARIANT == 0
    lw t0, 0(a0)
    li t1, 3
1:  addi t1, t1, -1          // work between the load and the store
    bnez t1, 1b
    addi t0, t0, 1
    sw t0, 0(a0)
#elif VARIANT == 1
    li t1, 3
1:  addi t1, t1, -1
    bnez t1, 1b
    li t0, 1
    amoadd.w zero, t0, (a0)
#else
retry:
    lr.w t0, (a0)
    li t1, 3
1:  addi t1, t1, -1          // the same work, inside the reservation
    bnez t1, 1b
    addi t0, t0, 1
    sc.w t2, t0, (a0)
    beqz t2, 2f
    la t3, sc_failures
    li t4, 1
    amoadd.w zero, t4, (t3)
    j retry
2:
#endif
    addi s1, s1, -1
    bnez s1, loop
    la t0, done
    li t1, 1
    amoadd.w zero, t1, (t0)
    bnez s0, park
1:  lw t1, 0(t0)
    li t2, HARTS
    bne t1, t2, 1b
    lw a0, counter
    PRINT_HEX
    lw a0, sc_failures
    PRINT_HEX
    PASS
park:
    wfi
    j park

    .data
    .align 3
    .globl counter, sc_failures, done
counter:     .word 0
sc_failures: .word 0
done:        .word 0
