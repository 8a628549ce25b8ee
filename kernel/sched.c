// sched.c: which RUNNABLE process runs next.
//
// The base policy is round-robin over the process table. Lab 3 replaces it with
// stride scheduling: each process has a priority (set_priority) and a pass value;
// the scheduler runs the process with the smallest pass and then advances its pass
// by BIG_STRIDE / priority, so CPU share is proportional to priority.
#include "defs.h"
#include "proc.h"

#define DEFAULT_PRIORITY 16
#define MIN_PRIORITY     2
#define BIG_STRIDE       (1 << 20)

// Round-robin: the first RUNNABLE slot after the one picked last time. The handout's
// sched_pick uses it; the reference's stride scheduler does not.
__attribute__((unused)) static struct proc *round_robin(void) {
  static int last = NPROC - 1;
  for (int i = 1; i <= NPROC; i++) {
    int slot = (last + i) % NPROC;
    if (proc[slot].state == RUNNABLE) {
      last = slot;
      return &proc[slot];
    }
  }
  return 0;
}

struct proc *sched_pick(void) {
  // BEGIN SOLUTION
  struct proc *best = 0;
  for (struct proc *p = proc; p < &proc[NPROC]; p++)
    if (p->state == RUNNABLE && (best == 0 || p->pass < best->pass))
      best = p;
  return best;
  // HANDOUT: return round_robin();
  // END SOLUTION
}

// p has just given up the CPU after running for (at most) one time slice.
void sched_charge(struct proc *p) {
  // BEGIN SOLUTION
  long stride = BIG_STRIDE / p->priority;
  p->pass += stride > 0 ? stride : 1;
  // HANDOUT: (void)p;
  // END SOLUTION
}

// A new process: default priority, and the creator's pass, so it neither starves
// nor monopolizes the CPU while catching up.
void sched_newproc(struct proc *p) {
  p->priority = DEFAULT_PRIORITY;
  // BEGIN SOLUTION
  struct proc *creator = myproc();
  p->pass = creator ? creator->pass : 0;
  // END SOLUTION
}

// set_priority(prio): prio >= 2 sets it and returns it; otherwise -1.
long sys_set_priority(long prio) {
  // BEGIN SOLUTION
  if (prio < MIN_PRIORITY)
    return -1;
  myproc()->priority = prio;
  return prio;
  // HANDOUT: return -1;
  // END SOLUTION
}
