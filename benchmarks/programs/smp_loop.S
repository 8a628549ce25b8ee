// smp_loop.S: every hart runs ITERATIONS of a ten-instruction ALU loop in M-mode,
// then counts itself done with amoadd.w; hart 0 waits for HARTS of them and powers
// off. ITERATIONS and HARTS come from the build (benchmarks/smp_throughput.py).
#include "platform.h"

    .section .text.entry
    .globl _start
_start:
    li t0, ITERATIONS
    li t1, 0
    li t2, 1
1:  add t1, t1, t2
    xor t3, t1, t2
    add t2, t2, t3
    andi t2, t2, 255
    or t3, t3, t1
    sub t1, t1, t3
    addi t1, t1, 7
    slli t3, t1, 1
    addi t0, t0, -1
    bnez t0, 1b
    la t0, done
    li t1, 1
    amoadd.w zero, t1, (t0)
    csrr t2, mhartid
    bnez t2, 3f
2:  lw t1, 0(t0)
    li t2, HARTS
    bne t1, t2, 2b
    li t0, PLATFORM_FINISHER_BASE
    li t1, FINISHER_PASS
    sw t1, 0(t0)
3:  wfi
    j 3b

    .data
    .align 3
done: .word 0
