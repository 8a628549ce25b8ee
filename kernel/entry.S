// entry.S: the kernel's first instructions, at PLATFORM_KERNEL_BASE (0x80200000).
//
// Contract: the firmware (firmware/mentry.S enter_supervisor, or OpenSBI) jumps here
// in S-mode with paging off, a0 = hart id and a1 = the device tree's physical address.
// We set up a boot stack and call main(hartid, dtb) (main.c), which never returns.
#include "param.h"

.section .text.entry
.global _entry
_entry:
    la sp, boot_stack_top
    mv tp, a0                   // the hart id lives in tp, as in xv6
    call main
spin:
    j spin

.section .bss.stack
.balign 16
.global boot_stack, boot_stack_top
boot_stack:
    .space 4096 * 4
boot_stack_top:
