// kalloc.c: the physical page (frame) allocator.
//
// Free frames form a linked list threaded through the frames themselves. kinit()
// frees every page of RAM above the kernel image (the linker's `end`), except the
// pages holding the device tree and the initrd, which stay in use until power-off.
// kinit() does not junk-fill: it runs before paging is on, and poisoning all of RAM
// would cost 32 Mi stores for pages that hold nothing stale yet. Pages freed later
// are junk-filled (kfree), where use-after-free bugs actually happen.
#include "defs.h"
#include "memlayout.h"

extern char end[];  // first address after the kernel image; kernel.ld

struct run {
  struct run *next;
};

static struct run *freelist;
static size_t nfree;

static int overlaps(uintptr_t page, uintptr_t start, uintptr_t stop) {
  return start < stop && page < stop && page + PGSIZE > start;
}

static void push_free(void *pa) {
  struct run *r = pa;
  r->next = freelist;
  freelist = r;
  nfree++;
}

void kinit(void) {
  uintptr_t top = boot.ram_base + boot.ram_size;
  for (uintptr_t pa = PGROUNDUP((uintptr_t)end); pa + PGSIZE <= top; pa += PGSIZE) {
    if (overlaps(pa, boot.dtb, boot.dtb + boot.dtb_size) ||
        overlaps(pa, boot.initrd_start, boot.initrd_end))
      continue;
    push_free((void *)pa);
  }
}

// Return a page to the free list. The junk fill makes use-after-free bugs loud.
void kfree(void *pa) {
  uintptr_t a = (uintptr_t)pa;
  if (a % PGSIZE != 0 || a < (uintptr_t)end || a >= boot.ram_base + boot.ram_size)
    panic("kfree %p", pa);
  memset(pa, 0x5a, PGSIZE);
  push_free(pa);
}

// One zeroed 4096-byte page, or 0 if memory is exhausted.
void *kalloc(void) {
  struct run *r = freelist;
  if (r == 0)
    return 0;
  freelist = r->next;
  nfree--;
  memset(r, 0, PGSIZE);
  return r;
}

size_t kfree_count(void) { return nfree; }
