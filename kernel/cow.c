// cow.c: copy-on-write fork (lab 10, MIT 6.1810's cow lab).
//
// fork() without it copies every user page of the parent (uvmcopy in vm.c), though
// the child usually execs at once and throws the copies away. With it, fork copies no
// page: the child's page table maps the parent's frames, and each frame counts the
// page tables that map it (kalloc.c). A page either process may write loses PTE_W in
// both tables and gains PTE_COW, one of the two RSW bits the spec leaves to software
// (riscv_gen.h, from privlab/abi/paging.py). The first store to it traps (a store
// page fault, cause 15, from U), and cow_fault() gives the writer a private copy,
// or, if no other page table maps the frame any more, simply its PTE_W back. The
// store is then retried at the same sepc (pagefault.c). copyout() breaks COW the same
// way for the kernel's stores on a process's behalf (walkaddr in vm.c).
//
// Pages nobody may write (text, read-only data, PROT_READ mappings) are shared as
// they are: they need no PTE_COW, and a store to one is still a real fault that
// kills the process.
#include "defs.h"
#include "memlayout.h"
#include "riscv.h"

// fork's choice for one user leaf of the parent (copy_leaf in vm.c): 1 if the child
// now shares the frame, 0 if the caller is to copy the page as before, -1 if the
// child's page table cannot be extended (out of memory).
int cow_share(pte_t *pte, uintptr_t va, pagetable_t child) {
  // BEGIN SOLUTION
  // W without R (mmap's PROT_WRITE alone): without its W the leaf would have none of
  // R, W and X, which the hart reads as a pointer to another page-table level.
  // Such pages are copied, as without COW.
  if (PTE_W_WITHOUT_R(*pte))
    return 0;
  if (*pte & PTE_W)
    *pte = (*pte & ~PTE_W) | PTE_COW;  // the parent's stores fault from now on too
  uintptr_t pa = PTE2PA(*pte);
  if (mappages(child, va, PGSIZE, pa, PTE_FLAGS(*pte) & ~(PTE_V | PTE_A | PTE_D)) != 0)
    return -1;  // the parent's page stays COW: harmless, its next store takes it back
  kref((void *)pa);
  // No sfence.vma for the parent's cleared PTE_W: the kernel runs on its own page
  // table, and userret flushes the TLB as it switches back to a user one.
  return 1;
  // HANDOUT: (void)pte, (void)va, (void)child;
  // HANDOUT: return 0;
  // END SOLUTION
}

// A store to the user leaf *pte, which has no PTE_W (pagefault.c): FAULT_FIXED if it
// was a COW page and is now writable, FAULT_BAD if the page is truly read-only,
// FAULT_NO_MEMORY if it needs a copy and no frame is free.
int cow_fault(pte_t *pte) {
  // BEGIN SOLUTION
  if ((*pte & PTE_COW) == 0)
    return FAULT_BAD;
  void *frame = (void *)PTE2PA(*pte);
  if (kref_count(frame) > 1) {  // others map it: copy it, and let go of our share
    void *copy = kalloc();
    if (copy == 0)
      return FAULT_NO_MEMORY;  // nothing changed: the page is still COW
    memmove(copy, frame, PGSIZE);
    *pte = PA2PTE(copy) | PTE_FLAGS(*pte);
    kfree(frame);
  }
  // The last owner (now or from the start) simply writes its frame.
  *pte = (*pte & ~PTE_COW) | PTE_W;
  return FAULT_FIXED;
  // HANDOUT: (void)pte;
  // HANDOUT: return FAULT_BAD;
  // END SOLUTION
}
