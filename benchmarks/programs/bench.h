// bench.h: what every benchmark program needs around its loop: PMP opened for S and
// U (QEMU 7.2 refuses an mret to U without it), and powering off with status 0.
#include "platform.h"

#if __riscv_xlen == 64
#define PMP_ALL -1
#else
#define PMP_ALL 0xffffffff
#endif

.macro OPEN_PMP
    li t0, PMP_ALL
    csrw pmpaddr0, t0
    li t0, 0x1f             // NAPOT, R, W, X
    csrw pmpcfg0, t0
.endm

.macro POWER_OFF
    li t0, PLATFORM_FINISHER_BASE
    li t1, FINISHER_PASS
    sw t1, 0(t0)
1:  j 1b
.endm
