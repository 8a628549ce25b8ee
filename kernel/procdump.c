// procdump.c: the process table on the console, for Ctrl-P typed at the console
// (console_getc() in console.c), as xv6's procdump: one line per thread with its pid,
// state, name and, when asleep, what it waits on, named as `privlab inspect` and a
// stopped `privlab run` name it (harness/cli/diagnose.py): `proc[0] (pid 1)` for a
// parent in waitpid(), `pipe+0x204 (nwrite)` for a writer waiting on a full pipe.
#include "defs.h"
#include "fs.h"
#include "proc.h"

static const char *const states[] = {
    [UNUSED] = "UNUSED",     [USED] = "USED",       [SLEEPING] = "SLEEPING",
    [RUNNABLE] = "RUNNABLE", [RUNNING] = "RUNNING", [ZOMBIE] = "ZOMBIE",
};

// Print what a sync object at chan inside q's slot is (sync.c); 0 if none is there.
static int print_sync(struct proc *q, void *chan) {
  struct syncset *s = &q->sync;
  for (int i = 0; i < NMUTEX; i++)
    if (chan == &s->mutex[i]) {
      printf("mutex %d of pid %d", i, q->pid);
      return 1;
    }
  for (int i = 0; i < NSEM; i++)
    if (chan == &s->sem[i]) {
      printf("semaphore %d of pid %d", i, q->pid);
      return 1;
    }
  for (int i = 0; i < NCONDVAR; i++)
    if (chan == &s->condvar[i]) {
      printf("condvar %d of pid %d", i, q->pid);
      return 1;
    }
  return 0;
}

// Print what a pipe some process has open makes of chan; 0 if it is none of theirs.
static int print_pipe(void *chan) {
  for (struct proc *q = proc; q < &proc[NPROC]; q++) {
    if (q->state == UNUSED)
      continue;
    for (int fd = 0; fd < NOFILE; fd++) {
      struct file *f = q->ofile[fd];
      const char *member = f && f->type == FD_PIPE ? pipe_chan(f->pipe, chan) : 0;
      if (member) {
        printf("pipe+0x%x (%s)", (unsigned)((char *)chan - (char *)f->pipe), member);
        return 1;
      }
    }
  }
  return 0;
}

// Print what chan is: a slot of proc[] (or an object inside one), a pipe, else its
// address.
static void print_chan(void *chan) {
  char *c = chan;
  for (struct proc *q = proc; q < &proc[NPROC]; q++) {
    char *start = (char *)q;
    if (c < start || c >= start + sizeof(*q))
      continue;
    if (print_sync(q, chan))
      return;
    if (c == start)
      printf("proc[%d] (pid %d)", (int)(q - proc), q->pid);
    else
      printf("proc[%d]+0x%x (pid %d)", (int)(q - proc), (unsigned)(c - start), q->pid);
    return;
  }
  if (!print_pipe(chan))
    printf("%p", chan);
}

void procdump(void) {
  printf("\nprocdump:\n");
  for (struct proc *p = proc; p < &proc[NPROC]; p++) {
    if (p->state == UNUSED)
      continue;
    printf("  pid %d", p->pid);
    if (p->tid != 0)
      printf(" tid %d", p->tid);
    printf(" %s %s", states[p->state], p->name);
    if (p->state == RUNNING)
      printf(" on hart %d", p->hart);
    if (p->state == SLEEPING && p->chan) {
      printf(" waits on ");
      print_chan(p->chan);
    }
    printf("\n");
  }
}
