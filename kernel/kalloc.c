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
// Lab 14 (locks): several harts allocate at once (page faults take no kernel lock:
// trap.c), so the allocator has its own spinlock. With one lock for all, harts queue
// for it; the reference gives each hart its own free list and its own share of the
// untouched frames, each under its own lock, and a hart whose list and share are
// empty takes a frame from another hart's. lockstat("kmem") (spinlock.c) counts how
// often a hart found a kmem lock taken.
//
// Lab 10 (cow): copy-on-write fork shares frames between page tables, so a frame can
// have several owners, and each frame gets a reference count: kalloc() hands a frame
// out with one owner, kref() adds one (another page table maps it), and kfree() takes
// one away, returning the frame to the free list only when the last owner lets go.
// Every kalloc()ed page (page-table pages, trapframes, kernel stacks, pipes) goes
// through the same count.
#include "defs.h"
#include "memlayout.h"
#include "proc.h"
#include "riscv.h"
#include "spinlock.h"

extern char end[];  // first address after the kernel image; kernel.ld

struct run {
  struct run *next;
};

// Free frames, and the lock that guards them: frames freed (the list) and frames
// never handed out, [low, untouched).
struct kmem {
  struct spinlock lock;
  struct run *freelist;
  uintptr_t low, untouched;
};

// BEGIN SOLUTION locks
static struct kmem kmem[NCPU];          // one per hart, indexed by hart id
static struct kmem *mine(void) { return &kmem[r_tp()]; }
// HANDOUT: static struct kmem kmem;
// HANDOUT: static struct kmem *mine(void) { return &kmem; }
// END SOLUTION

static size_t nfree;            // frames on the lists plus frames never handed out
static uintptr_t lowest;        // the first frame kalloc may hand out (after the counts)

// BEGIN SOLUTION cow
// One count per frame of RAM, indexed by frame number from boot.ram_base; kept in the
// first pages after the kernel image (RAM's size is known only at boot). A count fits
// 16 bits: a frame is mapped at most once per page table, and there are NPROC of them.
// Harts change counts with atomic operations: two processes sharing a frame may fault
// on it at once (cow.c).
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

void kinit(void) {
  uintptr_t top = boot.ram_base + boot.ram_size;
  uintptr_t pa = PGROUNDUP((uintptr_t)end);
  // BEGIN SOLUTION cow
  size_t bytes = PGROUNDUP(boot.ram_size / PGSIZE * sizeof(uint16_t));
  for (uintptr_t page = pa; page < pa + bytes; page += PGSIZE)
    if (page + PGSIZE > top || in_use_at_boot(page))
      panic("kinit: no room for the frames' reference counts");
  refcount = (uint16_t *)pa;
  memset(refcount, 0, bytes);  // every frame free: count 0
  pa += bytes;
  // END SOLUTION
  lowest = pa;
  uintptr_t frames = (top - lowest) / PGSIZE;
  for (; pa + PGSIZE <= top; pa += PGSIZE)
    if (!in_use_at_boot(pa))
      nfree++;
  // BEGIN SOLUTION locks
  // Each hart its slice of the untouched frames, hart 0 the highest; a hart the
  // device tree does not list gets none.
  uintptr_t share = frames / boot.ncpu, from = lowest + frames * PGSIZE;
  for (int h = 0; h < NCPU; h++) {
    initlock(&kmem[h].lock, "kmem");
    uintptr_t n = h >= boot.ncpu ? 0 : h == boot.ncpu - 1 ? (from - lowest) / PGSIZE : share;
    kmem[h].untouched = from;
    kmem[h].low = from -= n * PGSIZE;
  }
  // HANDOUT: initlock(&kmem.lock, "kmem");
  // HANDOUT: kmem.low = lowest;
  // HANDOUT: kmem.untouched = lowest + frames * PGSIZE;
  // END SOLUTION
}

// Take a frame from k: the most recently freed one, else the highest never handed
// out; 0 if k has none. The caller holds k->lock.
static void *take(struct kmem *k) {
  struct run *r = k->freelist;
  if (r != 0) {
    k->freelist = r->next;
    return r;
  }
  while (k->untouched > k->low) {
    k->untouched -= PGSIZE;
    if (!in_use_at_boot(k->untouched))
      return (void *)k->untouched;
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
  // BEGIN SOLUTION cow
  uint16_t *ref = frame_ref(pa);
  uint16_t left = __atomic_sub_fetch(ref, 1, __ATOMIC_ACQ_REL);
  if (left == UINT16_MAX)
    panic("kfree %p: the frame is free already", pa);
  if (left > 0)
    return;  // another page table still maps it
  // END SOLUTION
  memset(pa, 0x5a, PGSIZE);
  struct kmem *k = mine();
  struct run *r = pa;
  acquire(&k->lock);
  r->next = k->freelist;
  k->freelist = r;
  release(&k->lock);
  __atomic_fetch_add(&nfree, 1, __ATOMIC_RELAXED);
}

// One zeroed 4096-byte page (with one owner), or 0 if memory is exhausted.
void *kalloc(void) {
  struct kmem *k = mine();
  acquire(&k->lock);
  void *r = take(k);
  release(&k->lock);
  // BEGIN SOLUTION locks
  // This hart has none left: take one from the next hart that has.
  for (int i = 1; r == 0 && i < NCPU; i++) {
    struct kmem *other = &kmem[(k - kmem + i) % NCPU];
    acquire(&other->lock);
    r = take(other);
    release(&other->lock);
  }
  // END SOLUTION
  if (r == 0)
    return 0;
  __atomic_fetch_sub(&nfree, 1, __ATOMIC_RELAXED);
  // BEGIN SOLUTION cow
  __atomic_store_n(frame_ref(r), 1, __ATOMIC_RELEASE);
  // END SOLUTION
  memset(r, 0, PGSIZE);
  return r;
}

// BEGIN SOLUTION cow
// One more owner of an allocated frame: a page table that now maps it too (fork).
void kref(void *pa) {
  uint16_t *ref = frame_ref(pa);
  uint16_t old = __atomic_fetch_add(ref, 1, __ATOMIC_ACQ_REL);
  if (old == 0 || old == UINT16_MAX)
    panic("kref %p: count %d", pa, old);
}

// How many owners the frame has (0: it is free).
int kref_count(void *pa) { return __atomic_load_n(frame_ref(pa), __ATOMIC_ACQUIRE); }
// END SOLUTION

size_t kfree_count(void) { return __atomic_load_n(&nfree, __ATOMIC_RELAXED); }
