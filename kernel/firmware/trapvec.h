// trapvec.h: the body of an M-mode trap vector, as an assembler macro, so the two
// vectors (mtrap.S's for hart 0's boot, smpentry.S's for harts started by SBI) are
// one piece of code. TRAP_VECTOR handler: swap sp with mscratch (the top of this
// hart's M stack), save all 31 registers in a struct mframe (fw.h), call
// handler(frame), restore them (the handler may have changed a0/a1 as SBI return
// values) and mret to mepc.
#ifndef TRAPVEC_H
#define TRAPVEC_H

#define FRAME_SIZE (32 * REGBYTES)

.macro TRAP_VECTOR handler
    csrrw sp, mscratch, sp          // sp = firmware stack, mscratch = interrupted sp
    addi sp, sp, -FRAME_SIZE
    // regs[0] (x0) is never saved; regs[2] (sp) is filled in from mscratch below.
    REG_S x1, 1*REGBYTES(sp)
    REG_S x3, 3*REGBYTES(sp)
    REG_S x4, 4*REGBYTES(sp)
    REG_S x5, 5*REGBYTES(sp)
    REG_S x6, 6*REGBYTES(sp)
    REG_S x7, 7*REGBYTES(sp)
    REG_S x8, 8*REGBYTES(sp)
    REG_S x9, 9*REGBYTES(sp)
    REG_S x10, 10*REGBYTES(sp)
    REG_S x11, 11*REGBYTES(sp)
    REG_S x12, 12*REGBYTES(sp)
    REG_S x13, 13*REGBYTES(sp)
    REG_S x14, 14*REGBYTES(sp)
    REG_S x15, 15*REGBYTES(sp)
    REG_S x16, 16*REGBYTES(sp)
    REG_S x17, 17*REGBYTES(sp)
    REG_S x18, 18*REGBYTES(sp)
    REG_S x19, 19*REGBYTES(sp)
    REG_S x20, 20*REGBYTES(sp)
    REG_S x21, 21*REGBYTES(sp)
    REG_S x22, 22*REGBYTES(sp)
    REG_S x23, 23*REGBYTES(sp)
    REG_S x24, 24*REGBYTES(sp)
    REG_S x25, 25*REGBYTES(sp)
    REG_S x26, 26*REGBYTES(sp)
    REG_S x27, 27*REGBYTES(sp)
    REG_S x28, 28*REGBYTES(sp)
    REG_S x29, 29*REGBYTES(sp)
    REG_S x30, 30*REGBYTES(sp)
    REG_S x31, 31*REGBYTES(sp)
    csrr t0, mscratch
    REG_S t0, 2*REGBYTES(sp)

    mv a0, sp
    call \handler                  // handler(struct mframe *)

    REG_L x1, 1*REGBYTES(sp)
    REG_L x3, 3*REGBYTES(sp)
    REG_L x4, 4*REGBYTES(sp)
    REG_L x5, 5*REGBYTES(sp)
    REG_L x6, 6*REGBYTES(sp)
    REG_L x7, 7*REGBYTES(sp)
    REG_L x8, 8*REGBYTES(sp)
    REG_L x9, 9*REGBYTES(sp)
    REG_L x10, 10*REGBYTES(sp)
    REG_L x11, 11*REGBYTES(sp)
    REG_L x12, 12*REGBYTES(sp)
    REG_L x13, 13*REGBYTES(sp)
    REG_L x14, 14*REGBYTES(sp)
    REG_L x15, 15*REGBYTES(sp)
    REG_L x16, 16*REGBYTES(sp)
    REG_L x17, 17*REGBYTES(sp)
    REG_L x18, 18*REGBYTES(sp)
    REG_L x19, 19*REGBYTES(sp)
    REG_L x20, 20*REGBYTES(sp)
    REG_L x21, 21*REGBYTES(sp)
    REG_L x22, 22*REGBYTES(sp)
    REG_L x23, 23*REGBYTES(sp)
    REG_L x24, 24*REGBYTES(sp)
    REG_L x25, 25*REGBYTES(sp)
    REG_L x26, 26*REGBYTES(sp)
    REG_L x27, 27*REGBYTES(sp)
    REG_L x28, 28*REGBYTES(sp)
    REG_L x29, 29*REGBYTES(sp)
    REG_L x30, 30*REGBYTES(sp)
    REG_L x31, 31*REGBYTES(sp)
    addi sp, sp, FRAME_SIZE
    csrrw sp, mscratch, sp          // back to the interrupted sp; mscratch = stack top again
    mret                            // to mepc, in the privilege saved in mstatus.MPP
.endm

#endif // TRAPVEC_H
