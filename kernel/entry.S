// entry.S: the kernel's first instructions, at PLATFORM_KERNEL_BASE (0x80200000).
//
// Contract: the firmware (firmware/mentry.S enter_supervisor, or OpenSBI) jumps to
// _entry on the boot hart in S-mode with paging off, a0 = hart id and a1 = the device
// tree's physical address. A hart the boot hart starts later (smp.c, SBI HSM
// hart_start) enters at _secondary the same way, with a0 = its hart id. Each hart
// gets its own boot stack, BOOT_STACK_SIZE bytes at boot_stack + hart id * that size,
// which its scheduler() runs on; then main(hartid, dtb) or secondary_main(hartid)
// (main.c, smp.c), which never return.
#include "param.h"

#define BOOT_STACK_SIZE (4096 * 4)

.section .text.entry
.global _entry
_entry:
    call hart_stack
    call main
spin:
    j spin

.global _secondary
_secondary:
    call hart_stack
    call secondary_main
    j spin

// sp = the top of hart a0's boot stack; tp = a0, where the kernel keeps the hart id,
// as xv6 does. A hart id beyond NCPU has no stack: it parks (smp.c never starts one).
hart_stack:
    li t0, NCPU
    bgeu a0, t0, spin
    mv tp, a0
    addi t1, a0, 1
    li t0, BOOT_STACK_SIZE
    mul t1, t1, t0
    la sp, boot_stack
    add sp, sp, t1
    ret

.section .bss.stack
.balign 16
.global boot_stack, boot_stack_top
boot_stack:
    .space BOOT_STACK_SIZE * NCPU
boot_stack_top:
