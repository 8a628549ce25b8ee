// alu_loop.S: the compute benchmark. M-mode opens PMP, drops to U-mode and runs
// ITERATIONS of a 10-instruction integer loop body (a xorshift/multiply hash, the kind
// of code a compute-bound user program spends its time in), then ecalls to M, which
// powers off through the finisher with exit status 0. 20,000,000 iterations retire
// 200,000,000 instructions in U-mode.
#include "bench.h"

#ifndef ITERATIONS
#define ITERATIONS 20000000
#endif

    START done
    MRET_TO 0, user

user:
    li s0, ITERATIONS
    li s1, 0x9e3779b9       // hash state
    li s2, 0x100000001b3    // multiplier
    li s3, 0
    beqz s0, 2f
1:  xor s1, s1, s0          // 10 instructions per iteration
    slli t0, s1, 13
    xor s1, s1, t0
    srli t0, s1, 7
    xor s1, s1, t0
    mul s1, s1, s2
    add s3, s3, s1
    andi t1, s3, 0xff
    addi s0, s0, -1
    bnez s0, 1b
2:  ecall

    .align 2
done:
    POWER_OFF
