// spin.S: hart 1 waits in a loop while hart 0 works, then both print and stop. How
// hart 1 waits (VARIANT):
//   0  loads a flag until hart 0 sets it: a loop that changes nothing;
//   1  the same, taking and dropping a lock around each look (amoswap, then a store
//      of zero): memory changes inside each round but not across one;
//   2  reads the time CSR until a deadline, keeping only the comparison: the time it
//      read is gone from the registers at the top of the loop, yet it is not idle;
//   3  the same through the CLINT's mtime register, a device, not memory.
// Hart 1 prints its minstret when it leaves the loop (how many rounds it went), hart
// 0 prints its own when its work is done; then hart 0 powers off.
#include "common.h"
#ifndef VARIANT
#define VARIANT 0
#endif
#define WORK 300000

    .section .text.entry
    .globl _start
_start:
    csrr s0, mhartid
    beqz s0, worker
    li t0, 1
    bne s0, t0, park
#if VARIANT == 2
    csrr a1, time
    li t0, WORK / 2
    add a1, a1, t0
#elif VARIANT == 3
    li a2, PLATFORM_CLINT_BASE + CLINT_MTIME
    ld a1, 0(a2)
    li t0, WORK / 2
    add a1, a1, t0
#endif
    la a0, flag
wait:
#if VARIANT == 0
    lw t0, 0(a0)
    beqz t0, wait
#elif VARIANT == 1
    la a3, lock
    li t2, 1
1:  amoswap.w t1, t2, (a3)
    bnez t1, 1b
    lw t0, 0(a0)
    sw zero, 0(a3)
    beqz t0, wait
#elif VARIANT == 2
    csrr t0, time
    sltu t1, t0, a1
    li t0, 0
    bnez t1, wait
#else
    ld t0, 0(a2)
    sltu t1, t0, a1
    li t0, 0
    bnez t1, wait
#endif
    csrr a0, minstret
    PRINT_HEX
    la t0, done
    li t1, 1
    amoswap.w zero, t1, (t0)
park:
    wfi
    j park

worker:
    li t0, WORK
1:  addi t0, t0, -1
    bnez t0, 1b
    la t0, flag
    li t1, 1
    sw t1, 0(t0)
    csrr a0, minstret
    PRINT_HEX
    la t0, done
2:  lw t1, 0(t0)
    beqz t1, 2b
    PASS

    .data
    .align 3
flag:   .word 0
lock:   .word 0
done:   .word 0
