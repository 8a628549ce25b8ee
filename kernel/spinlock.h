// spinlock.h: mutual exclusion between harts (spinlock.c).
#ifndef SPINLOCK_H
#define SPINLOCK_H

#include "types.h"

struct cpu;

struct spinlock {
  volatile uint32_t locked;  // 1 while held: amoswap.w sets it (__sync_lock_test_and_set)
  const char *name;          // for panics and lock statistics
  struct cpu *cpu;           // the hart holding it, for holding() and for panics
  // Statistics (the lock lab, sys_lockstat): how often it was taken, and how many
  // times a hart found it held and had to try again (contention).
  uintptr_t acquires;  // word-sized: RV32 has no 64-bit atomics
  uintptr_t spins;
};

#endif // SPINLOCK_H
