// spinlock.c: spinlocks, as xv6 has them.
//
// A hart takes a lock with an atomic swap (amoswap.w.aq, from
// __sync_lock_test_and_set) and spins while another hart holds it. A lock is held by
// a hart, not by a thread: code holding one must not sleep, except for kernel_lock
// (smp.c), which sched() hands from the thread to the hart's scheduler and back.
//
// Interrupts stay off while a hart holds any lock (push_off/pop_off count how deeply,
// per hart): an interrupt handler that wanted the same lock would spin forever on
// the hart that holds it. The kernel already runs with sstatus.SIE = 0 except where
// it waits for an interrupt (proc.c), so push_off mostly records that they were off.
//
// Every lock counts its acquisitions and its spins, the times a hart tried and found
// it taken: sys_lockstat hands them to user space (the lock lab's contention test).
#include "abi.h"
#include "defs.h"
#include "proc.h"
#include "riscv.h"
#include "spinlock.h"

// Every lock initlock() has seen, for sys_lockstat.
#define NLOCKS 64
static struct spinlock *locks[NLOCKS];
static int nlocks;

void initlock(struct spinlock *lk, const char *name) {
  lk->locked = 0;
  lk->name = name;
  lk->cpu = 0;
  lk->acquires = lk->spins = 0;
  for (int i = 0; i < nlocks; i++)
    if (locks[i] == lk)
      return;
  if (nlocks == NLOCKS)
    panic("initlock %s: more than %d locks", name, NLOCKS);
  locks[nlocks++] = lk;  // before the other harts start: no lock needed for the table
}

// Does this hart hold lk? Interrupts must be off (push_off), so the hart cannot change
// under the caller.
int holding(struct spinlock *lk) { return lk->locked && lk->cpu == mycpu(); }

void acquire(struct spinlock *lk) {
  push_off();
  if (holding(lk))
    panic("acquire %s: this hart holds it already", lk->name);
  while (__sync_lock_test_and_set(&lk->locked, 1) != 0)
    __atomic_fetch_add(&lk->spins, 1, __ATOMIC_RELAXED);  // spinners count together
  // No load or store of the critical section may move above the swap (the compiler's
  // barrier and the hart's fence both): the RISC-V memory model is weak.
  __sync_synchronize();
  lk->cpu = mycpu();
  lk->acquires++;
}

void release(struct spinlock *lk) {
  if (!holding(lk))
    panic("release %s: this hart does not hold it", lk->name);
  lk->cpu = 0;
  __sync_synchronize();      // the critical section's stores are seen before the lock is free
  __sync_lock_release(&lk->locked);
  pop_off();
}

// push_off/pop_off are intr_off/intr_on that nest: the first push_off remembers
// whether interrupts were on, the matching last pop_off restores that.
void push_off(void) {
  int old = intr_get();
  intr_off();
  struct cpu *c = mycpu();
  if (c->noff == 0)
    c->intena = old;
  c->noff++;
}

void pop_off(void) {
  struct cpu *c = mycpu();
  if (intr_get())
    panic("pop_off: interrupts are on");
  if (c->noff < 1)
    panic("pop_off: not pushed");
  c->noff--;
  if (c->noff == 0 && c->intena)
    intr_on();
}

// lockstat(name, stat) (abi.h): the locks whose names begin with `name`, summed.
// The counts are read without the locks: a snapshot that may be a few acquisitions
// behind on a busy hart, which is all statistics need.
long sys_lockstat(uintptr_t name, uintptr_t out) {
  char prefix[LOCKSTAT_NAME_MAX];
  struct proc *p = myprocess();
  if (copyinstr(p->pagetable, prefix, name, sizeof(prefix)) < 0)
    return -1;
  struct lockstat st = {0, 0};
  int matched = 0;
  size_t n = strlen(prefix);
  for (int i = 0; i < nlocks; i++)
    if (strncmp(locks[i]->name, prefix, n) == 0) {
      st.acquires += locks[i]->acquires;
      st.spins += __atomic_load_n(&locks[i]->spins, __ATOMIC_RELAXED);
      matched++;
    }
  if (out != 0 && copyout(p->pagetable, out, &st, sizeof(st)) < 0)
    return -1;
  return matched;
}
