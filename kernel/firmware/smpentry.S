// smpentry.S: where the harts other than hart 0 go from reset (mentry.S), and where a
// hart that called SBI hart_stop goes back to: a stack of its own, then hsm.c.
//
// Hart k's M-mode stack is fw_smp_stacks[k] (hsm.c; hart 0 boots on fwmain.c's
// fw_stack and uses its slot here only after a hart_stop); its top is
// fw_smp_stacks + (k + 1) * FW_STACK_SIZE.
#include "asm.h"
#include "fw.h"
#include "trapvec.h"

.section .smp.entry, "ax"    // first after everything else (firmware.ld): mentry.S
                             // jumps here, from code a one-hart boot shows unchanged
.global fw_secondary_entry
fw_secondary_entry:
    csrr a0, mhartid
    la sp, fw_smp_stacks
    addi t1, a0, 1
    slli t1, t1, FW_STACK_SHIFT
    add sp, sp, t1
    call fw_secondary           // fw_secondary(hartid): does not return

.section .smp.text, "ax"
// fw_restart_stopped(hartid): the hart stopped itself (hart_stop, from a trap); wait
// on a fresh stack for the next hart_start.
.global fw_restart_stopped
fw_restart_stopped:
    la sp, fw_smp_stacks
    addi t1, a0, 1
    slli t1, t1, FW_STACK_SHIFT
    add sp, sp, t1
    call smp_wait_start         // does not return

// The trap vector of a hart that SBI hart_start started, and of the hart that called
// hart_start: as mtrap.S's, with smp_mtrap (hsm.c), which also takes IPIs and sets
// this hart's own timer. Hart 0 keeps mtrap.S's until it starts another hart, so a
// one-hart boot runs exactly the code it always ran.
.balign 4
.global smp_mtrap_vector
smp_mtrap_vector:
    TRAP_VECTOR smp_mtrap
