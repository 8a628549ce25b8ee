// memlayout.h: the virtual address spaces.
//
// Kernel (one page table, kvmmake() in vm.c):
//   RAM, identity-mapped: kernel text read/execute, everything else read/write
//   KSTACK(i) for each process slot, each below an unmapped guard page
//   TRAMPOLINE (the top page): trampoline.S, mapped at the same address in every
//   address space so the satp switch in uservec/userret keeps executing.
//
// User (one page table per process, proc_pagetable() in proc.c):
//   USER_BASE            the program's ELF segments (linked there by userland/user.ld)
//   ...                  heap: grows up from the end of the image with sbrk()
//   ...                  mmap() regions, anywhere in [USER_BASE, USER_MMAP_TOP)
//   USTACK_BOTTOM        user stack, USTACK_PAGES pages, with an unmapped guard page below
//   TRAPFRAME            this process's struct trapframe (not user-accessible)
//   TRAMPOLINE           the trampoline (not user-accessible)
//
// Plain integer constants only: trampoline.S includes this file too.
#ifndef MEMLAYOUT_H
#define MEMLAYOUT_H

#include "param.h"
#include "riscv_gen.h"

#define PGSIZE  PAGE_SIZE    // xv6's names for the spec's page (riscv_gen.h)
#define PGSHIFT PAGE_SHIFT
#define PGROUNDUP(a)   (((a) + PGSIZE - 1) & ~(uintptr_t)(PGSIZE - 1))
#define PGROUNDDOWN(a) ((a) & ~(uintptr_t)(PGSIZE - 1))

#if __riscv_xlen == 64
// Sv39 allows 2^39, but we stay below 2^38 so no address needs sign extension.
#define MAXVA      0x4000000000
#define TRAMPOLINE 0x3FFFFFF000   // MAXVA - PGSIZE
#else
#define TRAMPOLINE 0xFFFFF000     // Sv32: the last page of the 4 GiB space
#endif
#define TRAPFRAME  (TRAMPOLINE - PGSIZE)

// The return address a signal handler starts with (signal.c): the trampoline, which U
// may not execute, so a handler that returns traps at exactly this pc (usertrap()).
#define SIGRETURN_PC TRAMPOLINE

// Kernel stack of process slot i, with a guard page below each.
#define KSTACK_SIZE (KSTACK_PAGES * PGSIZE)
#define KSTACK(i)   (TRAMPOLINE - ((i) + 1) * (KSTACK_SIZE + PGSIZE))

#define USER_BASE     0x10000
#define USTACK_TOP    TRAPFRAME
#define USTACK_BOTTOM (USTACK_TOP - USTACK_PAGES * PGSIZE)
#define USER_MMAP_TOP (USTACK_BOTTOM - PGSIZE)   // keep the stack's guard page unmapped

#endif // MEMLAYOUT_H
