// kalloc.c: the physical page (frame) allocator.
//
// Frames that have been freed form a linked list threaded through the frames
// themselves. Frames never handed out yet are not on it: they are every page of RAM
// from the kernel image (the linker's `end`) up to `untouched`, handed out from the
// top down once the list is empty, skipping the pages holding the device tree and
// the initrd, which stay in use until power-off. So boot writes nothing into RAM it
// does not use: threading a list through all 128 MiB would touch every page (for the
// host running the machine, 128 MiB to zero) for frames a short run never needs. The
// order frames are handed out in is the one a list of every frame would give: freed
// frames first, most recent first, then the rest from the highest address down.
// Frames are junk-filled when freed (kfree), where use-after-free bugs happen.
//
// Lab 10 (cow): copy-on-write fork shares frames between page tables, so a frame can
// have several owners, and each frame gets a reference count: kalloc() hands a frame
// out with one owner, kref() adds one (another page table maps it), and kfree() takes
// one away, returning the frame to the free list only when the last owner lets go.
// Every kalloc()ed page (page-table pages, trapframes, kernel stacks, pipes) goes
// through the same count.
#include "defs.h"
#include "memlayout.h"

extern char end[];  // first address after the kernel image; kernel.ld

struct run {
  struct run *next;
};

static struct run *freelist;
static size_t nfree;            // frames on the list plus frames below `untouched`
static uintptr_t lowest;        // the first frame kalloc may hand out (after the counts)
static uintptr_t untouched;     // frames in [lowest, untouched) were never handed out

// BEGIN SOLUTION
// One count per frame of RAM, indexed by frame number from boot.ram_base; kept in the
// first pages after the kernel image (RAM's size is known only at boot). A count fits
// 16 bits: a frame is mapped at most once per page table, and there are NPROC of them.
static uint16_t *refcount;

static uint16_t *frame_ref(void *pa) {
  uintptr_t a = (uintptr_t)pa;
  if (a % PGSIZE != 0 || a < (uintptr_t)end || a >= boot.ram_base + boot.ram_size)
    panic("frame_ref %p", pa);
  return &refcount[(a - boot.ram_base) / PGSIZE];
}
// END SOLUTION

static int overlaps(uintptr_t page, uintptr_t start, uintptr_t stop) {
  return start < stop && page < stop && page + PGSIZE > start;
}

static int in_use_at_boot(uintptr_t page) {
  return overlaps(page, boot.dtb, boot.dtb + boot.dtb_size) ||
         overlaps(page, boot.initrd_start, boot.initrd_end);
}

static void push_free(void *pa) {
  struct run *r = pa;
  r->next = freelist;
  freelist = r;
  nfree++;
}

void kinit(void) {
  uintptr_t top = boot.ram_base + boot.ram_size;
  uintptr_t pa = PGROUNDUP((uintptr_t)end);
  // BEGIN SOLUTION
  size_t bytes = PGROUNDUP(boot.ram_size / PGSIZE * sizeof(uint16_t));
  for (uintptr_t page = pa; page < pa + bytes; page += PGSIZE)
    if (page + PGSIZE > top || in_use_at_boot(page))
      panic("kinit: no room for the frames' reference counts");
  refcount = (uint16_t *)pa;
  memset(refcount, 0, bytes);  // every frame free: count 0
  pa += bytes;
  // END SOLUTION
  lowest = pa;
  untouched = lowest + (top - lowest) / PGSIZE * PGSIZE;
  for (; pa + PGSIZE <= top; pa += PGSIZE)
    if (!in_use_at_boot(pa))
      nfree++;
}

// The highest frame never handed out yet, or 0.
static void *take_untouched(void) {
  while (untouched > lowest) {
    untouched -= PGSIZE;
    if (!in_use_at_boot(untouched))
      return (void *)untouched;
  }
  return 0;
}

// Let go of a page: with reference counts (lab 10), of one owner's share of it. The
// last owner's kfree() returns it to the free list, with a junk fill that makes
// use-after-free bugs loud.
void kfree(void *pa) {
  uintptr_t a = (uintptr_t)pa;
  if (a % PGSIZE != 0 || a < (uintptr_t)end || a >= boot.ram_base + boot.ram_size)
    panic("kfree %p", pa);
  // BEGIN SOLUTION
  uint16_t *ref = frame_ref(pa);
  if (*ref == 0)
    panic("kfree %p: the frame is free already", pa);
  if (--*ref > 0)
    return;  // another page table still maps it
  // END SOLUTION
  memset(pa, 0x5a, PGSIZE);
  push_free(pa);
}

// One zeroed 4096-byte page (with one owner), or 0 if memory is exhausted.
void *kalloc(void) {
  struct run *r = freelist;
  if (r != 0)
    freelist = r->next;
  else if ((r = take_untouched()) == 0)
    return 0;
  nfree--;
  // BEGIN SOLUTION
  *frame_ref(r) = 1;
  // END SOLUTION
  memset(r, 0, PGSIZE);
  return r;
}

// BEGIN SOLUTION
// One more owner of an allocated frame: a page table that now maps it too (fork).
void kref(void *pa) {
  uint16_t *ref = frame_ref(pa);
  if (*ref == 0 || *ref == UINT16_MAX)
    panic("kref %p: count %d", pa, *ref);
  ++*ref;
}

// How many owners the frame has (0: it is free).
int kref_count(void *pa) { return *frame_ref(pa); }
// END SOLUTION

size_t kfree_count(void) { return nfree; }
