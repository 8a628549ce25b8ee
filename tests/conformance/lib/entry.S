// entry.S: reset entry and trap vectors of every conformance program.
//
// Contract: QEMU (or privlab) starts the hart in M-mode at 0x8000_0000, which the
// linker script fills with .text.entry. `_start` leaves the machine in a known state
// (no delegation, no interrupts enabled or pending from software, satp = 0, one PMP
// entry granting RWX on all of memory so S and U can run, direct mtvec/stvec into the
// handlers below) and calls the program's `test_main`, which ends through the finisher.
//
// Trap entry: xtvec points either at the direct entry (`mtrap_direct`, `strap_direct`)
// or, with MODE = 1, at a 16-slot vector table. Every way in records which slot it
// came through, saves all registers in the level's frame (found through xscratch) and
// calls the C handler (trap_m / trap_s in runtime.c), which checks the trap against the
// program's next EXPECT record. The handler returns 0 to xRET, or an address to jump
// to at the handler's privilege (RESUME_JUMP; t6 then holds that address).
#include "conformance.h"

#define F(n) ((n) * REGBYTES)

    .section .text.entry, "ax"
    .globl _start
_start:
    la sp, __stack_top
    la t0, __bss_start
    la t1, __bss_end
1:  bgeu t0, t1, 2f
    SREG zero, 0(t0)
    addi t0, t0, REGBYTES
    j 1b
2:
    // Without a matching PMP entry, S and U may access nothing (spec 3.7.1).
    li t0, -1
    csrw pmpaddr0, t0
    li t0, PMP_A_NAPOT | PMP_R | PMP_W | PMP_X
    csrw pmpcfg0, t0
    csrw satp, zero
    csrw medeleg, zero
    csrw mideleg, zero
    csrw mie, zero
    csrw mip, zero
    csrw mstatus, zero
    csrw mcounteren, zero
    csrw scounteren, zero
    la t0, m_frame
    csrw mscratch, t0
    la t0, s_frame
    csrw sscratch, t0
    MTVEC_DIRECT
    STVEC_DIRECT
    call timer_off
    call test_main
    // test_main ends through TEST_PASS; returning is a bug in the program.
    li a1, 0
    li a2, 0
    FAIL CHECK_UNEXPECTED_TRAP, WHAT_NO_TRAP

// Save every register but sp (already swapped with xscratch) and t0 (saved by the
// entry stub, which put the slot number in t0).
.macro SAVE_REGS scratch
    SREG x1, F(1)(sp)
    SREG x3, F(3)(sp)
    SREG x4, F(4)(sp)
    .irp n, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
    SREG x\n, F(\n)(sp)
    .endr
    csrr t1, \scratch
    SREG t1, F(2)(sp)
.endm

.macro RESTORE_REGS
    LREG x1, F(1)(sp)
    LREG x3, F(3)(sp)
    LREG x4, F(4)(sp)
    .irp n, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
    LREG x\n, F(\n)(sp)
    .endr
.endm

    .text
// ---- M-mode ----------------------------------------------------------------------
    .balign 4
    .globl mtrap_direct
mtrap_direct:
    csrrw sp, mscratch, sp
    SREG t0, F(5)(sp)
    li t0, -1
    j mtrap_common

mtrap_common:
    SAVE_REGS mscratch
    mv a0, sp
    mv a1, t0
    call trap_m
    bnez a0, 1f
    RESTORE_REGS
    csrrw sp, mscratch, sp
    mret
1:  SREG a0, F(31)(sp)
    RESTORE_REGS
    csrrw sp, mscratch, sp
    jr t6

// ---- S-mode ----------------------------------------------------------------------
    .balign 4
    .globl strap_direct
strap_direct:
    csrrw sp, sscratch, sp
    SREG t0, F(5)(sp)
    li t0, -1
    j strap_common

strap_common:
    SAVE_REGS sscratch
    mv a0, sp
    mv a1, t0
    call trap_s
    bnez a0, 1f
    RESTORE_REGS
    csrrw sp, sscratch, sp
    sret
1:  SREG a0, F(31)(sp)
    RESTORE_REGS
    csrrw sp, sscratch, sp
    jr t6

// ---- Vector tables: slot n at BASE + 4n (interrupt code n; exceptions use slot 0) ----
    .balign 256
    .globl mtrap_vectors
mtrap_vectors:
    .option push
    .option norvc
    .irp n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    j mtrap_slot_\n
    .endr
    .option pop

    .irp n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
mtrap_slot_\n:
    csrrw sp, mscratch, sp
    SREG t0, F(5)(sp)
    li t0, \n
    j mtrap_common
    .endr

    .balign 256
    .globl strap_vectors
strap_vectors:
    .option push
    .option norvc
    .irp n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    j strap_slot_\n
    .endr
    .option pop

    .irp n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
strap_slot_\n:
    csrrw sp, sscratch, sp
    SREG t0, F(5)(sp)
    li t0, \n
    j strap_common
    .endr

// ---- Handler stacks: the C handler runs below its level's register frame ----------
    .bss
    .balign 16
    .space 4096
    .globl m_frame
m_frame:
    .space F(STACK_FRAME_WORDS)
    .space 4096
    .globl s_frame
s_frame:
    .space F(STACK_FRAME_WORDS)
