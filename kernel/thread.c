// thread.c: threads within a process (rCore-Tutorial chapter 8): thread_create,
// gettid, waittid, a thread's exit, and how the end of a process ends its threads.
//
// A thread is a slot of proc[] whose `group` is the process's main thread (tid 0):
// it runs in the same page table, with its own trapframe, user stack, kernel stack
// and context. Thread tid's trapframe and stack sit at fixed addresses below the
// main thread's stack (memlayout.h), so uservec finds the trapframe through
// sscratch as for the main thread: userret is told where it is (usertrapret()).
//
// Exit: exit() in a thread ends that thread only: it becomes a ZOMBIE that holds
// its status until waittid() in another thread of the process collects it. exit()
// in the main thread ends the process, and with it every thread (end_other_threads):
// each is made to leave on its way back to user space, never in the middle of a
// kernel operation it might be holding something for. A fault (or any other reason
// the kernel kills a process) in any thread ends the whole process (exit_group).
#include "defs.h"
#include "memlayout.h"
#include "proc.h"
#include "riscv.h"
#include "trapframe.h"

// The live (not UNUSED) thread tid of process g, or 0.
static struct proc *find_thread(struct proc *g, int tid) {
  for (struct proc *t = proc; t < &proc[NPROC]; t++)
    if (t->state != UNUSED && t->group == g && t->tid == tid)
      return t;
  return 0;
}

// The lowest thread id of g not in use (a ZOMBIE thread keeps its id until it is
// collected), or -1 if all NTHREAD are.
static int free_tid(struct proc *g) {
  for (int tid = 1; tid < NTHREAD; tid++)
    if (find_thread(g, tid) == 0)
      return tid;
  return -1;
}

// Unmap and free what thread t has in the process's address space: its user stack
// and its trapframe page.
static void release_thread_memory(struct proc *t) {
  pagetable_t pt = t->group->pagetable;
  uvmunmap(pt, THREAD_USTACK_BOTTOM(t->tid), USTACK_PAGES, 1);
  uvmunmap(pt, THREAD_TRAPFRAME(t->tid), 1, 0);
  kfree(t->trapframe);
  t->trapframe = 0;
  t->pagetable = 0;
}

// thread_create(entry, arg): a new thread of the caller's process that starts at
// entry with a0 = arg on a fresh stack, and the creator's gp and tp; it returns
// into THREAD_EXIT_PC, so a thread function that returns exits with its value.
// Returns the new tid, or -1 (no free tid or slot, no memory, entry not user text).
int thread_create(uintptr_t entry, uintptr_t arg) {
  struct proc *me = myproc(), *g = myprocess(), *t;
  int tid = free_tid(g);
  if (tid < 0 || walkaddr(g->pagetable, entry, PTE_X) == 0 || (t = allocslot()) == 0)
    return -1;
  t->group = g;
  t->pid = g->pid;
  t->tid = tid;
  t->pagetable = g->pagetable;
  if (mappages(g->pagetable, THREAD_TRAPFRAME(tid), PGSIZE, (uintptr_t)t->trapframe,
               PTE_R | PTE_W) != 0) {
    freeproc(t);
    return -1;
  }
  if (uvmmap_zeroed(g->pagetable, THREAD_USTACK_BOTTOM(tid), USTACK_PAGES * PGSIZE,
                    PTE_R | PTE_W) != 0) {
    release_thread_memory(t);
    freeproc(t);
    return -1;
  }
  *t->trapframe = *me->trapframe;  // gp, tp, and whatever else the creator had
  t->trapframe->epc = entry;
  t->trapframe->a0 = arg;
  t->trapframe->sp = THREAD_USTACK_TOP(tid);
  t->trapframe->ra = THREAD_EXIT_PC;
  safestrcpy(t->name, g->name, sizeof(t->name));
  t->state = RUNNABLE;
  return tid;
}

// The calling thread (not the main one) ends with status: its stack goes, its
// mutexes are released (sync.c), and its slot waits as a ZOMBIE for waittid().
void thread_exit(int status) {
  struct proc *t = myproc();
  sync_thread_exit(t);
  release_thread_memory(t);  // we run on the kernel page table
  t->xstatus = status;
  t->state = ZOMBIE;
  wakeup(t);                   // waittid() sleeps on the thread it waits for
  wakeup(&t->group->exiting);  // end_other_threads() waits for every thread
  sched();
  panic("exited thread %d of pid %d ran again", t->tid, t->pid);
}

// Called by the main thread p as its process ends (exit(), proc.c): make every
// other thread leave and wait until they all have, then reap them. A thread runnable
// or in an interruptible wait leaves on its way back to user space (usertrapret()
// calls thread_leave_if_exiting()); one in the middle of a disk operation finishes
// it first. Nothing runs in user space meanwhile: the process is over.
void end_other_threads(struct proc *p) {
  p->exiting = 1;
  for (;;) {
    int live = 0;
    for (struct proc *t = proc; t < &proc[NPROC]; t++) {
      if (t == p || t->group != p || t->state == UNUSED)
        continue;
      if (t->state == ZOMBIE) {
        freeproc(t);
        continue;
      }
      live++;
      if (t->state == SLEEPING)
        t->state = RUNNABLE;  // every sleep() is in a loop: at worst it sleeps again
    }
    if (live == 0)
      return;
    sleep(&p->exiting);
  }
}

// The kernel ends the process of the calling thread, whichever it is (a fault). The
// main thread exits at once; any other asks the main thread to (it wakes from an
// interruptible wait, or finds out on its way to user space) and exits itself.
void exit_group(int status) {
  struct proc *t = myproc(), *g = myprocess();
  if (t == g)
    exit(status);
  if (!g->exiting) {
    g->exiting = 1;
    g->exit_status = status;
  }
  if (g->state == SLEEPING)
    g->state = RUNNABLE;
  thread_exit(status);
}

// On every way back to user space (usertrapret()): a thread of a process that is
// ending does not go back. The main thread ends the process with the status the
// thread that ended it chose; any other thread just exits.
void thread_leave_if_exiting(void) {
  struct proc *t = myproc(), *g = myprocess();
  if (!g->exiting)
    return;
  if (t == g)
    exit(g->exit_status);
  thread_exit(0);
}

// waittid(tid): wait until thread tid of the caller's process has exited, collect
// it, and return its exit status. -1 for no such thread, for the caller itself, or
// if the wait is cut short (a signal, the end of the process).
int waittid(int tid) {
  struct proc *me = myproc(), *t = find_thread(myprocess(), tid);
  if (t == 0 || t == me)
    return -1;
  while (t->state != ZOMBIE)
    if (sleep_intr(t) < 0)
      return -1;
  int status = t->xstatus;
  freeproc(t);
  return status;
}

// Is p its process's only thread (exec replaces the address space all share)?
int lone_thread(struct proc *p) {
  for (struct proc *t = proc; t < &proc[NPROC]; t++)
    if (t != p && t->state != UNUSED && t->group == p->group)
      return 0;
  return 1;
}

// ---- the system calls (prototypes: syscall_gen.h) ------------------------------------

long sys_thread_create(uintptr_t entry, uintptr_t arg) { return thread_create(entry, arg); }

long sys_gettid(void) { return myproc()->tid; }

long sys_waittid(int tid) { return waittid(tid); }
