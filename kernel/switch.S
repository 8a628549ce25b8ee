// switch.S: swtch(old, new), the context switch.
//
// Contract: save the callee-saved registers (struct context, proc.h; offsets from the
// generated asm-offsets.h) into *old, load them from *new, and return on new's
// stack to new's ra. Called from sched() (proc.c, a process giving up the CPU) and
// scheduler() (proc.c, the scheduler picking a process); each call "returns" in the
// other one. A new process first returns into forkret_entry, below.
#include "asm.h"
#include "asm-offsets.h"

.text
.global swtch
swtch:
    REG_S ra, CTX_RA(a0)
    REG_S sp, CTX_SP(a0)
    REG_S s0, CTX_S0(a0)
    REG_S s1, CTX_S1(a0)
    REG_S s2, CTX_S2(a0)
    REG_S s3, CTX_S3(a0)
    REG_S s4, CTX_S4(a0)
    REG_S s5, CTX_S5(a0)
    REG_S s6, CTX_S6(a0)
    REG_S s7, CTX_S7(a0)
    REG_S s8, CTX_S8(a0)
    REG_S s9, CTX_S9(a0)
    REG_S s10, CTX_S10(a0)
    REG_S s11, CTX_S11(a0)

    REG_L ra, CTX_RA(a1)
    REG_L sp, CTX_SP(a1)
    REG_L s0, CTX_S0(a1)
    REG_L s1, CTX_S1(a1)
    REG_L s2, CTX_S2(a1)
    REG_L s3, CTX_S3(a1)
    REG_L s4, CTX_S4(a1)
    REG_L s5, CTX_S5(a1)
    REG_L s6, CTX_S6(a1)
    REG_L s7, CTX_S7(a1)
    REG_L s8, CTX_S8(a1)
    REG_L s9, CTX_S9(a1)
    REG_L s10, CTX_S10(a1)
    REG_L s11, CTX_S11(a1)
    ret

// forkret_entry: where a new thread's first swtch() returns (context.ra, set by
// allocslot() in proc.c), on its empty kernel stack. It calls forkret() (proc.c),
// which never returns, as the outermost frame of that stack: the CFI marks ra
// undefined, so gdb's `bt` ends here (as at usertrap_entry in trampoline.S) instead
// of naming whatever function precedes forkret.
.cfi_sections .debug_frame
.balign 4
.global forkret_entry
.type forkret_entry, @function
forkret_entry:
    .cfi_startproc
    .cfi_undefined ra
    mv s0, zero                 // no frame-pointer chain below this frame
    call forkret                // proc.c; ends in userret, never back here
    unimp
    .cfi_endproc
.size forkret_entry, . - forkret_entry
