// kernelvec.S: the trap vector while the kernel itself runs (stvec during S-mode).
//
// Contract: usertrap() (trap.c) points stvec here on entry to the kernel. The kernel
// runs with interrupts off (sstatus.SIE = 0) except for a moment where it waits for
// one (the idle scheduler's wait_for_interrupt() in proc.c, a spinning
// mutex_acquire() in sync.c), so what arrives is that interrupt or a kernel bug: we
// save the caller-saved registers on the current kernel stack and call kerneltrap()
// (trap.c), which handles the interrupt and returns, or reports the bug and stops;
// then restore them and sret to the interrupted instruction.
#include "asm.h"

// The CFI describes the interrupted code as this frame's caller, for gdb's `bt`: its
// pc is the saved sepc, given as the return address in a DWARF column of its own (no
// register uses 64), so the interrupted function's own ra still unwinds from slot 0.
#define SEPC_COLUMN 64

.cfi_sections .debug_frame

.text
.balign 4
.global kernelvec
kernelvec:
    .cfi_startproc
    .cfi_return_column SEPC_COLUMN
    .cfi_undefined SEPC_COLUMN      // until saved below
    .cfi_remember_state
    addi sp, sp, -18*REGBYTES
    .cfi_adjust_cfa_offset 18*REGBYTES
    REG_S ra, 0*REGBYTES(sp)
    .cfi_rel_offset ra, 0*REGBYTES
    REG_S s0, 1*REGBYTES(sp)    // frame pointer, so backtrace() can walk through here
    .cfi_rel_offset s0, 1*REGBYTES
    REG_S t0, 2*REGBYTES(sp)
    .cfi_rel_offset t0, 2*REGBYTES
    REG_S t1, 3*REGBYTES(sp)
    .cfi_rel_offset t1, 3*REGBYTES
    REG_S t2, 4*REGBYTES(sp)
    .cfi_rel_offset t2, 4*REGBYTES
    REG_S a0, 5*REGBYTES(sp)
    .cfi_rel_offset a0, 5*REGBYTES
    REG_S a1, 6*REGBYTES(sp)
    .cfi_rel_offset a1, 6*REGBYTES
    REG_S a2, 7*REGBYTES(sp)
    .cfi_rel_offset a2, 7*REGBYTES
    REG_S a3, 8*REGBYTES(sp)
    .cfi_rel_offset a3, 8*REGBYTES
    REG_S a4, 9*REGBYTES(sp)
    .cfi_rel_offset a4, 9*REGBYTES
    REG_S a5, 10*REGBYTES(sp)
    .cfi_rel_offset a5, 10*REGBYTES
    REG_S a6, 11*REGBYTES(sp)
    .cfi_rel_offset a6, 11*REGBYTES
    REG_S a7, 12*REGBYTES(sp)
    .cfi_rel_offset a7, 12*REGBYTES
    REG_S t3, 13*REGBYTES(sp)
    .cfi_rel_offset t3, 13*REGBYTES
    REG_S t4, 14*REGBYTES(sp)
    .cfi_rel_offset t4, 14*REGBYTES
    REG_S t5, 15*REGBYTES(sp)
    .cfi_rel_offset t5, 15*REGBYTES
    REG_S t6, 16*REGBYTES(sp)
    .cfi_rel_offset t6, 16*REGBYTES
    csrr t0, sepc                   // the interrupted pc, for gdb (t0 is saved above)
    REG_S t0, 17*REGBYTES(sp)
    .cfi_rel_offset SEPC_COLUMN, 17*REGBYTES
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
    .cfi_restore_state              // every register back in place; sepc in the CSR only
    sret                        // back to sepc, in S-mode (sstatus.SPP = S)
    .cfi_endproc
