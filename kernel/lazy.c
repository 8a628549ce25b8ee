// lazy.c: lazy heap allocation (lab 11, MIT 6.1810's lazy lab).
//
// sbrk(n > 0) without it maps n bytes of zeroed frames at once, though programs
// often ask for more than they touch. With it, sbrk only moves p->brk: the pages of
// [heap_bottom, brk) get their frames when first touched. The load or store traps (a
// load or store page fault, cause 13 or 15, from U), lazy_fault() maps a zeroed page
// there, and the access is retried at the same sepc (pagefault.c). copyin and
// copyout fault a heap page in the same way (walkaddr in vm.c), so a system call may
// be given heap memory nobody has touched yet.
//
// Nothing else needs to know: the page table stays the only record of which heap
// pages exist. sbrk(-n) (growproc in proc.c) unmaps only the pages that are mapped
// (uvmunmap skips the others), fork copies or shares only those (uvmcopy), and exit
// frees only those (uvmfree). An address outside [heap_bottom, brk), the stack's
// guard page among them, is still a real fault that kills the process.
#include "defs.h"
#include "memlayout.h"
#include "proc.h"
#include "riscv.h"

// Make room for process p's heap (its main thread's slot, myprocess()) to grow from
// p->brk to `new` (sbrk(n > 0), growproc in proc.c, which has checked new against
// USER_MMAP_TOP): 0, or -1 if it cannot.
int heap_grow(struct proc *p, uintptr_t new) {
  uintptr_t from = PGROUNDUP(p->brk), pages = (PGROUNDUP(new) - from) / PGSIZE;
  // BEGIN SOLUTION
  // Nothing is mapped yet. A heap larger than RAM could never be backed, though:
  // refuse it at once, as an eager sbrk would (and as usertests' sbrk_out_of_memory
  // expects), rather than kill the process later for touching it.
  if (PGROUNDUP(new) - p->heap_bottom > boot.ram_size)
    return -1;
  return uvm_range_unmapped(p->pagetable, from, pages) ? 0 : -1;  // no mmap region there
  // HANDOUT: if (!uvm_range_unmapped(p->pagetable, from, pages))
  // HANDOUT:   return -1;
  // HANDOUT: return uvmmap_zeroed(p->pagetable, from, pages * PGSIZE, PTE_R | PTE_W);
  // END SOLUTION
}

// Does [start, start + npages pages) overlap p's heap, mapped or not? (mmap refuses
// such a range: a heap page not touched yet is still the heap's.)
int heap_overlaps(struct proc *p, uintptr_t start, size_t npages) {
  return npages > 0 && start < PGROUNDUP(p->brk) &&
         p->heap_bottom < start + npages * PGSIZE;
}

// A page fault at user address va of page table pt, with no valid user leaf there
// (pagefault.c): FAULT_FIXED if va is in the heap and now has a zeroed page,
// FAULT_BAD if it is not a heap address, FAULT_NO_MEMORY if it is but no frame is
// free.
int lazy_fault(pagetable_t pt, uintptr_t va) {
  // BEGIN SOLUTION
  struct proc *p = myprocess();  // the heap is the process's, whichever thread faults
  if (p == 0 || pt != p->pagetable || va < p->heap_bottom || va >= p->brk)
    return FAULT_BAD;
  void *mem = kalloc();
  if (mem == 0)
    return FAULT_NO_MEMORY;
  if (mappages(pt, PGROUNDDOWN(va), PGSIZE, (uintptr_t)mem, PTE_R | PTE_W | PTE_U) != 0) {
    kfree(mem);
    return FAULT_NO_MEMORY;  // no frame for a page-table page
  }
  return FAULT_FIXED;
  // HANDOUT: (void)pt, (void)va;
  // HANDOUT: return FAULT_BAD;
  // END SOLUTION
}
