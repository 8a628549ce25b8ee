// pagefault.c: page faults the kernel resolves itself instead of killing the process.
//
// Two labs make a page fault from U a normal event: copy-on-write fork (lab 10,
// cow.c) and lazy heap allocation (lab 11, lazy.c). The hart faults on an access its
// PTE does not allow; the kernel makes the PTE allow it and returns to the same sepc,
// where the load or store runs again, this time through a valid PTE. (No sfence.vma
// is needed here: the kernel runs on its own page table, and userret flushes the TLB
// as it switches back to the user's.) The kernel's own accesses to user memory,
// copyin and copyout, go through the same decision (walkaddr in vm.c): a system call
// may be given a COW page to write or a heap page nobody has touched.
//
// Without the labs (their handouts), cow_fault and lazy_fault resolve nothing, and
// every page fault from U is a real one, as before.
#include "defs.h"
#include "memlayout.h"
#include "proc.h"
#include "riscv.h"
#include "trapframe.h"

// An access to user address va of pt (a store if `write`) that the hart refuses, or
// would refuse: FAULT_FIXED if the kernel made it possible and it may be retried,
// FAULT_BAD if it breaks the rules, FAULT_NO_MEMORY if the page is the process's but
// no frame is free for it.
int uvm_fault(pagetable_t pt, uintptr_t va, int write) {
  pte_t *pte = walk(pt, va, 0);
  if (pte == 0 || (*pte & PTE_V) == 0)
    return lazy_fault(pt, va);  // lab 11: a heap page sbrk has not mapped yet?
  if ((*pte & PTE_U) && write && (*pte & PTE_W) == 0)
    return cow_fault(pte);      // lab 10: a page fork shares?
  return FAULT_BAD;
}

// usertrap()'s load or store page fault from U (trap.c) in thread t: 0 if resolved
// (return to the same sepc), -1 for a real fault (usertrap kills the process with its
// usual line). Out of memory kills here, saying so: the program did nothing wrong,
// the machine is full, and a kernel panic would take every other process with it.
// As for any fault, the whole process dies, with all its threads (thread.c).
int user_page_fault(struct proc *t, uintptr_t scause, uintptr_t va) {
  int r = uvm_fault(t->pagetable, va, scause == CAUSE_STORE_PAGE_FAULT);
  if (r == FAULT_NO_MEMORY) {
    void *sepc = (void *)t->trapframe->epc, *stval = (void *)va;
    if (t->tid != 0)
      printf("[kernel] pid %d tid %d (%s) killed: out of memory sepc=%p stval=%p\n", t->pid,
             t->tid, t->name, sepc, stval);
    else
      printf("[kernel] pid %d (%s) killed: out of memory sepc=%p stval=%p\n", t->pid,
             t->name, sepc, stval);
    exit_group(EXIT_KILLED);
  }
  return r == FAULT_FIXED ? 0 : -1;
}
