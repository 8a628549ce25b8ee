// store_loop.S: the store benchmark. M-mode opens PMP, drops to U-mode and fills a
// 4 KiB buffer ITERATIONS / 4096 times, one byte per 3-instruction iteration
// (sb; addi; bne: the loop gcc makes of xv6's byte-by-byte memset, a third of the
// instructions of its usertests), then ecalls to M, which powers off through the
// finisher with exit status 0. 20,480,000 iterations retire about 61,440,000
// instructions in U-mode.
#include "bench.h"

#ifndef ITERATIONS
#define ITERATIONS 20480000
#endif

    START done
    MRET_TO 0, user

user:
    li s0, ITERATIONS / 4096
    li a1, 5                // the byte stored
    la s1, buffer
    li t0, 4096
    add s2, s1, t0          // the buffer's end
    beqz s0, 2f
1:  mv a5, s1
3:  sb a1, 0(a5)            // 3 instructions per byte
    addi a5, a5, 1
    bne a5, s2, 3b
    addi s0, s0, -1
    bnez s0, 1b
2:  ecall

    .align 2
done:
    POWER_OFF

    .bss
    .balign 4096
buffer:
    .skip 4096
