// kernelvec.S: the trap vector while the kernel itself runs (stvec during S-mode).
//
// Contract: usertrap() (trap.c) points stvec here on entry to the kernel. The kernel
// keeps interrupts off (sstatus.SIE = 0), so only kernel bugs arrive: we save the
// caller-saved registers on the current kernel stack, call kerneltrap() (trap.c),
// which reports and stops, and restore and sret in case it ever returns.
#include "asm.h"

.text
.balign 4
.global kernelvec
kernelvec:
    addi sp, sp, -18*REGBYTES
    REG_S ra, 0*REGBYTES(sp)
    REG_S s0, 1*REGBYTES(sp)    // frame pointer, so backtrace() can walk through here
    REG_S t0, 2*REGBYTES(sp)
    REG_S t1, 3*REGBYTES(sp)
    REG_S t2, 4*REGBYTES(sp)
    REG_S a0, 5*REGBYTES(sp)
    REG_S a1, 6*REGBYTES(sp)
    REG_S a2, 7*REGBYTES(sp)
    REG_S a3, 8*REGBYTES(sp)
    REG_S a4, 9*REGBYTES(sp)
    REG_S a5, 10*REGBYTES(sp)
    REG_S a6, 11*REGBYTES(sp)
    REG_S a7, 12*REGBYTES(sp)
    REG_S t3, 13*REGBYTES(sp)
    REG_S t4, 14*REGBYTES(sp)
    REG_S t5, 15*REGBYTES(sp)
    REG_S t6, 16*REGBYTES(sp)
    call kerneltrap
    REG_L ra, 0*REGBYTES(sp)
    REG_L s0, 1*REGBYTES(sp)
    REG_L t0, 2*REGBYTES(sp)
    REG_L t1, 3*REGBYTES(sp)
    REG_L t2, 4*REGBYTES(sp)
    REG_L a0, 5*REGBYTES(sp)
    REG_L a1, 6*REGBYTES(sp)
    REG_L a2, 7*REGBYTES(sp)
    REG_L a3, 8*REGBYTES(sp)
    REG_L a4, 9*REGBYTES(sp)
    REG_L a5, 10*REGBYTES(sp)
    REG_L a6, 11*REGBYTES(sp)
    REG_L a7, 12*REGBYTES(sp)
    REG_L t3, 13*REGBYTES(sp)
    REG_L t4, 14*REGBYTES(sp)
    REG_L t5, 15*REGBYTES(sp)
    REG_L t6, 16*REGBYTES(sp)
    addi sp, sp, 18*REGBYTES
    sret                        // back to sepc, in S-mode (sstatus.SPP = S)
