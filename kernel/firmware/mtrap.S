// mtrap.S: the M-mode trap vector (mtvec, direct mode).
//
// Contract: every trap that is not delegated to S lands here: SBI calls (ecall from
// S), the machine timer interrupt, and anything unexpected. mscratch holds the top of
// the firmware stack (set by fw_main); we swap it with sp, save all 31 registers in a
// struct mframe (fw.h) on that stack, call mtrap(frame) (fwmain.c), restore the
// registers (mtrap may have changed a0/a1 as SBI return values) and mret to mepc.
#include "asm.h"
#include "trapvec.h"

.text
.balign 4
.global mtrap_vector
mtrap_vector:
    TRAP_VECTOR mtrap               // mtrap(struct mframe *) in fwmain.c
