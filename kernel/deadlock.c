// deadlock.c: deadlock detection for the mutexes and semaphores of a process
// (rCore-Tutorial chapter 8's exercise; the lab is labs/deadlock).
//
// enable_deadlock_detect(1) turns it on for the calling process (0 turns it off).
// Then every mutex_lock and semaphore_down first asks whether the request is safe, by
// the banker's algorithm's safety check over the process's threads:
//
//   Available[r]     units of resource r nobody holds: 1 for a free mutex, 0 for a held
//                    one; a semaphore's count.
//   Allocation[t][r] units of r thread t holds: 1 if t owns mutex r; for a semaphore,
//                    the units t took with semaphore_down and has not given back.
//   Need[t][r]       units of r thread t waits for: a thread waits in at most one call
//                    at a time, for one unit of one object, so its need is that object
//                    or nothing (a thread that runs, sleeps, or waits for anything else
//                    needs nothing here: it is assumed able to finish).
//
// The request is recorded as the caller's need first. Then: Work = Available, no
// thread finished; while some unfinished thread's need fits in Work, it can finish,
// and gives back all it holds (Work += Allocation[t]). If every thread finishes, some
// order lets them all finish: safe, the call goes on (and waits if it must). If not,
// the call returns DEADLOCK_DETECTED (-0xDEAD) at once, without waiting or taking
// anything, and the need is withdrawn.
//
// The bookkeeping (who holds what, who waits for what) is kept whether detection is on
// or not, so it can be turned on at any time. A mutex's holder is its `owner`
// (struct mutex); the rest is in tables here, one row per slot of proc[] (a thread),
// found by the thread's pid and tid, so a row that belonged to an earlier thread of
// the slot starts afresh. A semaphore_up by a thread that holds no unit of it still
// adds a unit to Available (the count); it just takes nothing from anyone's row. A
// thread that exits forgets its units (they stay taken: nobody can give them back)
// and releases its mutexes (sync.c).
#include "defs.h"
#include "proc.h"
#include "deadlock.h"

// What one thread holds and waits for, beyond the mutexes it owns.
struct dl_thread {
  int pid, tid;              // the thread this row describes
  enum dl_kind want;         // its need: what it waits for (DL_NONE: nothing)
  int want_id;               // ... which mutex or semaphore
  int held[NSEM];            // units of each semaphore it took and still holds
  int detect;                // in a main thread's row: detection is on for the process
};
static struct dl_thread rows[NPROC];  // by slot of proc[]

// Thread t's row, started afresh if it was an earlier thread's. The main thread's row
// holds the process's detect setting: it lasts as long as the pid, across exec.
static struct dl_thread *row(struct proc *t) {
  struct dl_thread *r = &rows[t - proc];
  if (r->pid != t->pid || r->tid != t->tid)
    *r = (struct dl_thread){.pid = t->pid, .tid = t->tid, .want = DL_NONE};
  return r;
}

// Is t a thread of process g that has not exited?
static int live_thread_of(struct proc *t, struct proc *g) {
  return t->group == g && t->state != UNUSED && t->state != ZOMBIE;
}

void deadlock_wait(enum dl_kind kind, int id) {
  struct dl_thread *r = row(myproc());
  r->want = kind;
  r->want_id = id;
}

void deadlock_wait_over(void) { row(myproc())->want = DL_NONE; }

void deadlock_sem_taken(int id) {
  struct dl_thread *r = row(myproc());
  r->held[id]++;
  r->want = DL_NONE;
}

void deadlock_sem_given(int id) {
  struct dl_thread *r = row(myproc());
  if (r->held[id] > 0)
    r->held[id]--;
}

void deadlock_sem_created(int id) {
  struct proc *g = myprocess();
  for (struct proc *t = proc; t < &proc[NPROC]; t++)
    if (live_thread_of(t, g))
      row(t)->held[id] = 0;  // an earlier program's semaphore id, before an exec
}

void deadlock_thread_exit(struct proc *t) {
  rows[t - proc] = (struct dl_thread){.want = DL_NONE};
}

// ---- the lab: the safety check and the system call that turns it on -------------

// Could every live thread of process g finish, given what each holds (Allocation),
// waits for (Need) and what is free (Available)? The banker's safety check, above.
// 1: safe; 0: some threads can never finish (a deadlock, or one the recorded
// request would make).
static int state_is_safe(struct proc *g) {
  // BEGIN SOLUTION
  struct syncset *s = &g->sync;
  int work_mutex[NMUTEX], work_sem[NSEM], finished[NPROC];
  for (int i = 0; i < NMUTEX; i++)
    work_mutex[i] = s->mutex[i].used && s->mutex[i].owner == 0;
  for (int j = 0; j < NSEM; j++)
    work_sem[j] = s->sem[j].used ? s->sem[j].count : 0;
  for (int k = 0; k < NPROC; k++)
    finished[k] = !live_thread_of(&proc[k], g);  // only g's threads take part

  for (int progress = 1; progress;) {
    progress = 0;
    for (int k = 0; k < NPROC; k++) {
      struct proc *t = &proc[k];
      if (finished[k])
        continue;
      struct dl_thread *r = row(t);
      if ((r->want == DL_MUTEX && work_mutex[r->want_id] == 0) ||
          (r->want == DL_SEM && work_sem[r->want_id] == 0))
        continue;  // its need does not fit in Work (yet)
      // t can have what it waits for and finish: then all it holds is free.
      for (int i = 0; i < NMUTEX; i++)
        if (s->mutex[i].used && s->mutex[i].owner == t)
          work_mutex[i] = 1;
      for (int j = 0; j < NSEM; j++)
        work_sem[j] += r->held[j];
      finished[k] = 1;
      progress = 1;
    }
  }
  for (int k = 0; k < NPROC; k++)
    if (!finished[k])
      return 0;
  return 1;
  // HANDOUT: (void)g;
  // HANDOUT: return 1;
  // END SOLUTION
}

// enable_deadlock_detect(enabled): 1 turns detection on for the calling process, 0
// turns it off; 0 is returned. Anything else: -1, and the setting stays as it was.
long sys_enable_deadlock_detect(int enabled) {
  // BEGIN SOLUTION
  if (enabled != 0 && enabled != 1)
    return -1;
  row(myprocess())->detect = enabled;
  return 0;
  // HANDOUT: (void)enabled;
  // HANDOUT: return -1;
  // END SOLUTION
}

long deadlock_request(enum dl_kind kind, int id) {
  struct proc *g = myprocess();
  deadlock_wait(kind, id);
  if (row(g)->detect && !state_is_safe(g)) {
    deadlock_wait_over();
    return DEADLOCK_DETECTED;
  }
  return 0;
}
