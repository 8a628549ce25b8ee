// trapframe.h: struct trapframe, the one place its layout is defined.
//
// Each process has one trapframe page, mapped at TRAPFRAME in its address space.
// uservec (trampoline.S) saves every user register here on a trap and userret
// restores them; the assembler gets the field offsets from asm-offsets.h, which the
// build generates from this struct (asm-offsets.c), and the harness reads the same
// layout from the kernel ELF's DWARF. So this struct is the single source of truth.
#ifndef TRAPFRAME_H
#define TRAPFRAME_H

#include "types.h"

struct trapframe {
  // Filled by usertrapret() (trap.c) for uservec to find the kernel again:
  uintptr_t kernel_satp;    // the kernel page table
  uintptr_t kernel_sp;      // top of this process's kernel stack
  uintptr_t kernel_trap;    // usertrap_entry (trampoline.S), which calls usertrap()
  uintptr_t kernel_hartid;  // the kernel's tp
  uintptr_t epc;            // user pc: sepc at the trap, sepc again for sret
  // The 31 user registers, in x1..x31 order.
  uintptr_t ra, sp, gp, tp;
  uintptr_t t0, t1, t2;
  uintptr_t s0, s1;
  uintptr_t a0, a1, a2, a3, a4, a5, a6, a7;
  uintptr_t s2, s3, s4, s5, s6, s7, s8, s9, s10, s11;
  uintptr_t t3, t4, t5, t6;
};

#endif // TRAPFRAME_H
