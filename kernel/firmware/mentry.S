// mentry.S: the first instructions after reset, in M-mode at 0x80000000.
//
// Contract: QEMU's reset ROM (or privlab's loader) jumps here with a0 = hart id and
// a1 = the physical address of the flattened device tree. We give hart 0 a stack and
// call fw_main() (fwmain.c), which never returns: it ends in enter_supervisor() below.
// Other harts go to fw_secondary_entry (smpentry.S) and wait there for SBI hart_start.
#include "asm.h"

.section .text.entry
.global _start
_start:
    csrr t0, mhartid
    bnez t0, park
    la sp, fw_stack_top         // fw_stack is defined in fwmain.c
    call fw_main                // fw_main(hartid = a0, dtb = a1): does not return
park:
    j fw_secondary_entry        // hart 0 never comes here
    j park

// enter_supervisor(hartid, dtb, entry): drop to S-mode at `entry` with a0/a1 intact.
// fw_main() has already set mstatus.MPP = S; mret now loads pc from mepc and the
// privilege from MPP, so the next instruction is the kernel's _entry (kernel/entry.S).
.text
.global enter_supervisor
enter_supervisor:
    csrw mepc, a2
    mret
