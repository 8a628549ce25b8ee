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
//   THREAD_AREA_BOTTOM   threads 1..NTHREAD-1 (thread.c): for each, from the top
//                        down, its trapframe (not user-accessible), its user stack
//                        of USTACK_PAGES pages and an unmapped guard page
//   USTACK_BOTTOM        the main thread's user stack, USTACK_PAGES pages, with an
//                        unmapped guard page below
//   TRAPFRAME            the main thread's struct trapframe (not user-accessible)
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
// Likewise the return address a new thread's function starts with (thread.c): a
// thread function that returns exits its thread with the value it returned.
#define THREAD_EXIT_PC (TRAMPOLINE + 8)

// Kernel stack of process slot i, with a guard page below each.
#define KSTACK_SIZE (KSTACK_PAGES * PGSIZE)
#define KSTACK(i)   (TRAMPOLINE - ((i) + 1) * (KSTACK_SIZE + PGSIZE))

#define USER_BASE     0x10000
#define USTACK_TOP    TRAPFRAME
#define USTACK_BOTTOM (USTACK_TOP - USTACK_PAGES * PGSIZE)

// Thread tid (1..NTHREAD-1) of a process: a block of its trapframe page, its user
// stack and a guard page, below the main thread's stack and its guard page.
#define THREAD_BLOCK_SIZE ((USTACK_PAGES + 2) * PGSIZE)
#define THREAD_AREA_TOP   (USTACK_BOTTOM - PGSIZE)
#define THREAD_TRAPFRAME(tid) (THREAD_AREA_TOP - ((tid) - 1) * THREAD_BLOCK_SIZE - PGSIZE)
#define THREAD_USTACK_TOP(tid) THREAD_TRAPFRAME(tid)
#define THREAD_USTACK_BOTTOM(tid) (THREAD_USTACK_TOP(tid) - USTACK_PAGES * PGSIZE)
#define THREAD_AREA_BOTTOM (THREAD_AREA_TOP - (NTHREAD - 1) * THREAD_BLOCK_SIZE)
// Where thread tid's trapframe is mapped in the process's page table.
#define TRAPFRAME_OF(tid) ((tid) == 0 ? TRAPFRAME : THREAD_TRAPFRAME(tid))

#define USER_MMAP_TOP THREAD_AREA_BOTTOM   // the lowest guard page stays unmapped

#endif // MEMLAYOUT_H
