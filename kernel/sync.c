// sync.c: mutexes, semaphores and condition variables for the threads of a process
// (rCore-Tutorial chapter 8). Each process has NMUTEX, NSEM and NCONDVAR of them
// (struct syncset in the main thread's slot); the system calls name one by its
// index, which the create call returns.
//
// The kernel runs on one hart with interrupts off, so checking a condition and
// going to sleep on it cannot be split by another thread: no lost wake-ups. Waits
// are interruptible (sleep_intr()): a signal or the end of the process cuts one
// short, and the call returns -1 without the object.
//
// A mutex is either blocking (waiters sleep until unlock wakes them) or spinning
// (waiters keep trying, yielding the CPU in between), as mutex_create's argument
// says; both are error-checking: locking one the caller holds, or unlocking one it
// does not, returns -1. A thread that exits releases the mutexes it holds.
//
// Deadlock detection (deadlock.c, enable_deadlock_detect): every mutex_lock and
// semaphore_down tells deadlock.c what the caller asks for, and with detection on for
// the process, a request no order of the threads could satisfy returns -0xDEAD
// (DEADLOCK_DETECTED) at once, waiting for and taking nothing. Relocking a mutex the
// caller holds is such a request: -0xDEAD with detection on, -1 (the error check
// above) with it off. Semaphore units taken and given back are reported to deadlock.c
// too, which keeps who holds how many.
#include "defs.h"
#include "proc.h"
#include "riscv.h"
#include "deadlock.h"

// The object named id in array a of n, if it exists.
#define LOOKUP(a, n, id) ((id) >= 0 && (id) < (n) && (a)[id].used ? &(a)[id] : 0)

static struct syncset *myset(void) { return &myprocess()->sync; }

// The index of the first unused one of the n objects of `size` bytes at objs (each
// struct begins with its `used` flag), now marked used; -1 if all are in use.
static int claim(void *objs, int n, size_t size) {
  for (int i = 0; i < n; i++) {
    int *used = (int *)((char *)objs + (size_t)i * size);
    if (!*used) {
      *used = 1;
      return i;
    }
  }
  return -1;
}
#define CLAIM(a, n) claim((a), (n), sizeof((a)[0]))

// ---- mutexes ---------------------------------------------------------------------

long sys_mutex_create(int blocking) {
  struct syncset *s = myset();
  int id = CLAIM(s->mutex, NMUTEX);
  if (id >= 0)
    s->mutex[id] = (struct mutex){.used = 1, .blocking = blocking != 0};
  return id;
}

// Take m (mutex id of the process) for the calling thread, waiting as m's kind says;
// while it waits, deadlock.c has m as its need. 0, or -1 if the wait was cut short.
static int mutex_acquire(struct mutex *m, int id) {
  int r = 0;
  deadlock_wait(DL_MUTEX, id);
  while (m->owner && r == 0) {
    if (m->blocking) {
      r = sleep_intr(m);
    } else {
      yield();
      // Take any pending interrupt (the tick that ends a holder's sleep()): a thread
      // spinning here never returns to user space, where it would be taken, and the
      // scheduler takes them only when nothing is runnable (kerneltrap() only rearms
      // the timer and wakes sleepers). And let the other harts into the kernel
      // meanwhile: the holder may run on another hart and need kernel_lock to unlock.
      // Threads spinning here hand kernel_lock to each other through the scheduler,
      // so without this window a hart with two of them would never give it up.
      release(&kernel_lock);
      intr_on();
      intr_off();
      acquire(&kernel_lock);
      r = myprocess()->exiting ? -1 : 0;
    }
  }
  deadlock_wait_over();
  if (r == 0)
    m->owner = myproc();
  return r;
}

static void mutex_release(struct mutex *m) {
  m->owner = 0;
  wakeup(m);  // every waiter tries again; the first to run takes it
}

long sys_mutex_lock(int id) {
  struct mutex *m = LOOKUP(myset()->mutex, NMUTEX, id);
  if (m == 0)
    return -1;
  long refused = deadlock_request(DL_MUTEX, id);
  if (refused)
    return refused;
  if (m->owner == myproc()) {
    deadlock_wait_over();
    return -1;
  }
  return mutex_acquire(m, id);
}

long sys_mutex_unlock(int id) {
  struct mutex *m = LOOKUP(myset()->mutex, NMUTEX, id);
  if (m == 0 || m->owner != myproc())
    return -1;
  mutex_release(m);
  return 0;
}

// ---- semaphores ------------------------------------------------------------------

long sys_semaphore_create(int count) {
  struct syncset *s = myset();
  int id = count < 0 ? -1 : CLAIM(s->sem, NSEM);
  if (id >= 0) {
    s->sem[id] = (struct semaphore){.used = 1, .count = count};
    deadlock_sem_created(id);
  }
  return id;
}

long sys_semaphore_up(int id) {
  struct semaphore *sem = LOOKUP(myset()->sem, NSEM, id);
  if (sem == 0)
    return -1;
  sem->count++;
  deadlock_sem_given(id);
  wakeup(sem);
  return 0;
}

long sys_semaphore_down(int id) {
  struct semaphore *sem = LOOKUP(myset()->sem, NSEM, id);
  if (sem == 0)
    return -1;
  long refused = deadlock_request(DL_SEM, id);
  if (refused)
    return refused;
  while (sem->count == 0)
    if (sleep_intr(sem) < 0) {
      deadlock_wait_over();
      return -1;
    }
  sem->count--;
  deadlock_sem_taken(id);
  return 0;
}

// ---- condition variables ---------------------------------------------------------

long sys_condvar_create(void) {
  struct syncset *s = myset();
  int id = CLAIM(s->condvar, NCONDVAR);
  if (id >= 0)
    s->condvar[id] = (struct condvar){.used = 1};
  return id;
}

// Wake the thread that has waited longest on the condition variable, if any.
long sys_condvar_signal(int id) {
  struct condvar *cv = LOOKUP(myset()->condvar, NCONDVAR, id);
  if (cv == 0)
    return -1;
  wakeup_one(cv);
  return 0;
}

// condvar_wait(cv, mutex): release the mutex (which the caller must hold) and sleep
// on cv, as one step; once woken, take the mutex again before returning. Returns 0,
// or -1 (no such objects, mutex not held, or the wait cut short: then the mutex is
// taken again if it can be, and not held if the process is ending).
long sys_condvar_wait(int id, int mutex_id) {
  struct syncset *s = myset();
  struct condvar *cv = LOOKUP(s->condvar, NCONDVAR, id);
  struct mutex *m = LOOKUP(s->mutex, NMUTEX, mutex_id);
  if (cv == 0 || m == 0 || m->owner != myproc())
    return -1;
  mutex_release(m);
  int r = sleep_intr(cv);
  if (mutex_acquire(m, mutex_id) < 0)
    return -1;
  return r;
}

// Thread t is exiting: release the mutexes it holds, or their waiters would wait
// forever; deadlock.c forgets its semaphore units.
void sync_thread_exit(struct proc *t) {
  struct syncset *s = &t->group->sync;
  for (int i = 0; i < NMUTEX; i++)
    if (s->mutex[i].used && s->mutex[i].owner == t)
      mutex_release(&s->mutex[i]);
  deadlock_thread_exit(t);
}
