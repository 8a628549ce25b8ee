// vm.c: page tables (Sv39 on RV64, Sv32 on RV32), and copying across the user boundary.
//
// The kernel has one page table (kvminit) mapping RAM at its physical addresses, the
// trampoline at the top page and each process's kernel stack. Each process has its
// own (proc_pagetable in proc.c). A process's page table is the only record of what
// it owns: every leaf with PTE_U is one of its frames, which lets fork (uvmcopy) and
// exit (uvmfree) handle the image, heap, stack and mmap regions alike.
#include "defs.h"
#include "memlayout.h"
#include "platform.h"
#include "proc.h"
#include "riscv.h"

extern char _entry[];      // start of kernel text; entry.S
extern char etext[];       // end of kernel text; kernel.ld
extern char trampoline[];  // trampoline.S

static pagetable_t kernel_pagetable;

// Can this virtual address be translated at all?
#if XLEN == 64
#define VA_OK(va) ((va) < MAXVA)
#else
#define VA_OK(va) 1
#endif

static void kvmmap(uintptr_t va, uintptr_t pa, size_t size, int perm) {
  if (mappages(kernel_pagetable, va, size, pa, perm) != 0)
    panic("kvmmap %p", (void *)va);
}

// Build the kernel page table: RAM (text read-execute, the rest read-write) and the
// trampoline. Kernel stacks are added by procinit().
void kvminit(void) {
  uintptr_t text = (uintptr_t)_entry;
  uintptr_t top = boot.ram_base + boot.ram_size;
  if ((kernel_pagetable = kalloc()) == 0)
    panic("kvminit: out of memory");
  if (text > boot.ram_base)  // the firmware's region; harmless to map, PMP guards it
    kvmmap(boot.ram_base, boot.ram_base, text - boot.ram_base, PTE_R | PTE_W);
  kvmmap(text, text, (uintptr_t)etext - text, PTE_R | PTE_X);
  kvmmap((uintptr_t)etext, (uintptr_t)etext, top - (uintptr_t)etext, PTE_R | PTE_W);
  kvmmap(TRAMPOLINE, (uintptr_t)trampoline, PGSIZE, PTE_R | PTE_X);
  // The devices the kernel drives, at their physical addresses (platform.h).
  kvmmap(PLATFORM_PLIC_BASE, PLATFORM_PLIC_BASE, PLATFORM_PLIC_SIZE, PTE_R | PTE_W);
  kvmmap(PLATFORM_VIRTIO0_BASE, PLATFORM_VIRTIO0_BASE, PGSIZE, PTE_R | PTE_W);
}

// Map a process slot's kernel stack at va (procinit in proc.c).
void kvmmap_stack(uintptr_t va, void *pa) { kvmmap(va, (uintptr_t)pa, PGSIZE, PTE_R | PTE_W); }

// Switch this hart to the kernel page table: paging is on from here.
void kvminithart(void) {
  sfence_vma();
  w_satp(MAKE_SATP(kernel_pagetable));
  sfence_vma();
}

uintptr_t kernel_satp(void) { return MAKE_SATP(kernel_pagetable); }

// The PTE for va in pt, allocating missing page-table pages if alloc. 0 if absent
// (or out of memory). Mirrors the hardware walk: the top level first.
pte_t *walk(pagetable_t pt, uintptr_t va, int alloc) {
  if (!VA_OK(va))
    return 0;
  for (int level = PT_LEVELS - 1; level > 0; level--) {
    pte_t *pte = &pt[PX(level, va)];
    if (*pte & PTE_V) {
      if (PTE_LEAF(*pte))
        return 0;  // a superpage: we never make them
      pt = (pagetable_t)PTE2PA(*pte);
    } else {
      if (!alloc || (pt = kalloc()) == 0)
        return 0;
      *pte = PA2PTE(pt) | PTE_V;
    }
  }
  return &pt[PX(0, va)];
}

// The leaf PTE of user page va (valid, with PTE_U), or 0.
static pte_t *walkuser(pagetable_t pt, uintptr_t va) {
  pte_t *pte = walk(pt, va, 0);
  return pte && (*pte & (PTE_V | PTE_U)) == (PTE_V | PTE_U) ? pte : 0;
}

// The physical address behind user address va if the user could access it with all
// of `perm` itself, else 0. A W-without-R page has PTE_W but the hart faults on every
// access to it, so the kernel must not read or write it on the user's behalf either.
//
// A page the hart would fault on but the kernel supplies on demand (pagefault.c: a
// COW page to store to, a heap page not touched yet) is first made accessible, as
// the hart's page fault would make it: a system call may be given either.
uintptr_t walkaddr(pagetable_t pt, uintptr_t va, int perm) {
  pte_t *pte = walkuser(pt, va);
  if ((pte == 0 || (*pte & perm) != perm) && uvm_fault(pt, va, perm & PTE_W) == FAULT_FIXED)
    pte = walkuser(pt, va);
  if (pte == 0 || (*pte & perm) != perm || PTE_W_WITHOUT_R(*pte))
    return 0;
  return PTE2PA(*pte) + (va % PGSIZE);
}

// Map [va, va+size) to [pa, pa+size). Returns -1 if a page is already mapped or a
// page-table page cannot be allocated (pages mapped before the failure stay mapped).
int mappages(pagetable_t pt, uintptr_t va, size_t size, uintptr_t pa, int perm) {
  uintptr_t a = PGROUNDDOWN(va), last = PGROUNDDOWN(va + size - 1);
  for (;; a += PGSIZE, pa += PGSIZE) {
    pte_t *pte = walk(pt, a, 1);
    if (pte == 0 || (*pte & PTE_V))
      return -1;
    *pte = PA2PTE(pa) | perm | PTE_V | PTE_A | PTE_D;
    if (a == last)
      return 0;
  }
}

pagetable_t uvmcreate(void) { return kalloc(); }

// Remove npages mappings from va; free the frames if do_free. Unmapped pages are skipped.
void uvmunmap(pagetable_t pt, uintptr_t va, size_t npages, int do_free) {
  // Threads of this process on other harts may have these pages in their TLBs (smp.c):
  // take the pages away first (V cleared, the frame number kept), have those harts
  // flush, and only then free the frames, which another hart may be handed at once.
  int shared = do_free && boot.ncpu > 1 && myproc() != 0 && pt == myprocess()->pagetable &&
               !lone_thread(myproc());
  for (uintptr_t a = va; a < va + npages * PGSIZE; a += PGSIZE) {
    pte_t *pte = walk(pt, a, 0);
    if (pte == 0 || (*pte & PTE_V) == 0)
      continue;
    if (shared) {
      *pte &= ~(pte_t)PTE_V;
      continue;
    }
    if (do_free)
      kfree((void *)PTE2PA(*pte));
    *pte = 0;
  }
  if (!shared)
    return;
  tlb_shootdown(myprocess());
  for (uintptr_t a = va; a < va + npages * PGSIZE; a += PGSIZE) {
    pte_t *pte = walk(pt, a, 0);
    if (pte != 0 && *pte != 0) {  // one taken away above: nothing else leaves a PTE not 0
      kfree((void *)PTE2PA(*pte));
      *pte = 0;
    }
  }
}

// Map fresh zeroed user frames over [va, va+size) (page-aligned). All or nothing:
// on failure, what was mapped is freed again and -1 returned.
int uvmmap_zeroed(pagetable_t pt, uintptr_t va, size_t size, int perm) {
  if (size / PGSIZE > kfree_count())
    return -1;  // fail at once rather than allocate everything and give it back
  for (uintptr_t a = va; a < va + size; a += PGSIZE) {
    void *mem = kalloc();
    if (mem == 0 || mappages(pt, a, PGSIZE, (uintptr_t)mem, perm | PTE_U) != 0) {
      if (mem)
        kfree(mem);
      uvmunmap(pt, va, (a - va) / PGSIZE, 1);
      return -1;
    }
  }
  return 0;
}

// 1 if none of the npages pages from va is mapped (and all are translatable).
int uvm_range_unmapped(pagetable_t pt, uintptr_t va, size_t npages) {
  for (size_t i = 0; i < npages; i++) {
    pte_t *pte = walk(pt, va + i * PGSIZE, 0);
    if (!VA_OK(va + i * PGSIZE) || (pte && (*pte & PTE_V)))
      return 0;
  }
  return 1;
}

// 1 if all of the npages pages from va are mapped user pages, whatever their
// permissions (munmap must be able to remove a W-without-R page too).
int uvm_range_mapped(pagetable_t pt, uintptr_t va, size_t npages) {
  for (size_t i = 0; i < npages; i++)
    if (walkuser(pt, va + i * PGSIZE) == 0)
      return 0;
  return 1;
}

// Call fn(pte, va) for every user leaf of the table at `level`, whose first
// address is `base`. Returns the first nonzero result of fn.
typedef int (*leaf_fn)(pte_t *pte, uintptr_t va, void *arg);
static int for_each_user_leaf(pagetable_t pt, int level, uintptr_t base, leaf_fn fn, void *arg) {
  for (int i = 0; i < PT_ENTRIES; i++) {
    pte_t pte = pt[i];
    uintptr_t va = base + ((uintptr_t)i << PXSHIFT(level));
    if ((pte & PTE_V) == 0)
      continue;
    int r = PTE_LEAF(pte) ? ((pte & PTE_U) ? fn(&pt[i], va, arg) : 0)
                          : for_each_user_leaf((pagetable_t)PTE2PA(pte), level - 1, va, fn, arg);
    if (r)
      return r;
  }
  return 0;
}

static int copy_leaf(pte_t *pte, uintptr_t va, void *newpt) {
  int shared = cow_share(pte, va, newpt);  // lab 10 (cow.c): share the frame instead?
  if (shared != 0)
    return shared < 0 ? -1 : 0;
  void *mem = kalloc();
  if (mem == 0)
    return -1;
  memmove(mem, (void *)PTE2PA(*pte), PGSIZE);
  if (mappages(newpt, va, PGSIZE, (uintptr_t)mem, PTE_FLAGS(*pte) & ~(PTE_V | PTE_A | PTE_D)) != 0) {
    kfree(mem);
    return -1;
  }
  return 0;
}

// Give `new` a copy of every user page of `old` (fork), or with copy-on-write (lab 10)
// the same frames, shared. On failure the caller frees new.
int uvmcopy(pagetable_t old, pagetable_t new) {
  return for_each_user_leaf(old, PT_LEVELS - 1, 0, copy_leaf, new) ? -1 : 0;
}

static int free_leaf(pte_t *pte, uintptr_t va, void *arg) {
  (void)va, (void)arg;
  kfree((void *)PTE2PA(*pte));
  *pte = 0;
  return 0;
}

// Free the page-table pages (not leaves) of pt; every user leaf must be gone.
static void freewalk(pagetable_t pt, int level) {
  for (int i = 0; level > 0 && i < PT_ENTRIES; i++)
    if ((pt[i] & PTE_V) && !PTE_LEAF(pt[i]))
      freewalk((pagetable_t)PTE2PA(pt[i]), level - 1);
  kfree(pt);
}

// Free every user frame and then the page table itself. Non-user leaves (the
// trampoline and trapframe) are not owned here: proc_freepagetable unmaps them first.
void uvmfree(pagetable_t pt) {
  for_each_user_leaf(pt, PT_LEVELS - 1, 0, free_leaf, 0);
  freewalk(pt, PT_LEVELS - 1);
}

// Copy len bytes from the kernel to user address dstva. Every page touched must be
// a mapped user page the user could store to (walkaddr): otherwise -1 and nothing
// more is written.
int copyout(pagetable_t pt, uintptr_t dstva, const void *src, size_t len) {
  while (len > 0) {
    uintptr_t pa = walkaddr(pt, dstva, PTE_W);
    if (pa == 0)
      return -1;
    size_t n = PGSIZE - (dstva % PGSIZE);
    n = n < len ? n : len;
    memmove((void *)pa, src, n);
    len -= n, src = (const char *)src + n, dstva += n;
  }
  return 0;
}

// Copy len bytes from user address srcva into the kernel; -1 if any page is not a
// mapped user page the user could load from (walkaddr).
int copyin(pagetable_t pt, void *dst, uintptr_t srcva, size_t len) {
  while (len > 0) {
    uintptr_t pa = walkaddr(pt, srcva, PTE_R);
    if (pa == 0)
      return -1;
    size_t n = PGSIZE - (srcva % PGSIZE);
    n = n < len ? n : len;
    memmove(dst, (void *)pa, n);
    len -= n, dst = (char *)dst + n, srcva += n;
  }
  return 0;
}

// Copy a NUL-terminated string of at most max bytes (NUL included) from user space.
// Returns its length, or -1 for a bad pointer or a string that does not fit.
int copyinstr(pagetable_t pt, char *dst, uintptr_t srcva, size_t max) {
  for (size_t i = 0; i < max; i++, srcva++) {
    uintptr_t pa = walkaddr(pt, srcva, PTE_R);
    if (pa == 0)
      return -1;
    if ((dst[i] = *(const char *)pa) == 0)
      return (int)i;
  }
  return -1;
}
