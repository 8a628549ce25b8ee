// proc.c: processes: creation, fork, exit, waitpid, the heap, and the scheduler loop.
//
// The kernel takes interrupts only while it waits for one (sstatus.SIE is 0 in
// S-mode except around the wfi in scheduler() and sleep()), and a hart runs kernel
// code only while it holds kernel_lock (smp.c), so kernel code runs as on one hart:
// a thread loses its hart only where it calls yield(), sleep() or sched() itself, and
// no other hart runs kernel code meanwhile. Each hart runs its own scheduler() loop
// over the one process table.
#include "defs.h"
#include "memlayout.h"
#include "proc.h"
#include "riscv.h"
#include "spinlock.h"
#include "trapframe.h"

struct proc proc[NPROC];
static struct proc *initproc;  // the first process: orphans go to it; its exit powers off
static int nextpid = 1;

void forkret(void);
extern char forkret_entry[];  // switch.S: calls forkret()

// The running thread, and the process it belongs to (its main thread's slot).
struct proc *myproc(void) { return mycpu()->proc; }
struct proc *myprocess(void) {
  struct proc *p = myproc();
  return p ? p->group : 0;
}

// Give every process slot its kernel stack, mapped at KSTACK(slot) in the kernel page
// table with an unmapped guard page below it.
void procinit(void) {
  for (int i = 0; i < NPROC; i++) {
    for (int page = 0; page < KSTACK_PAGES; page++) {
      void *pa = kalloc();
      if (pa == 0)
        panic("procinit: out of memory");
      kvmmap_stack(KSTACK(i) + page * PGSIZE, pa);
    }
    proc[i].kstack = KSTACK(i);
  }
}

// A user page table holding only the trampoline and this process's trapframe, both
// without PTE_U: the user cannot touch them, but uservec/userret run there.
pagetable_t proc_pagetable(struct proc *p) {
  extern char trampoline[];
  pagetable_t pt = uvmcreate();
  if (pt == 0)
    return 0;
  if (mappages(pt, TRAMPOLINE, PGSIZE, (uintptr_t)trampoline, PTE_R | PTE_X) != 0 ||
      mappages(pt, TRAPFRAME, PGSIZE, (uintptr_t)p->trapframe, PTE_R | PTE_W) != 0) {
    proc_freepagetable(pt);
    return 0;
  }
  return pt;
}

// Free a user page table and every user frame in it; the trampoline and trapframe
// pages are only unmapped (they are not the page table's to free).
void proc_freepagetable(pagetable_t pt) {
  uvmunmap(pt, TRAMPOLINE, 1, 0);
  uvmunmap(pt, TRAPFRAME, 1, 0);
  uvmfree(pt);
}

// Claim an UNUSED slot for a thread: a trapframe, and a context that starts in
// forkret() (through forkret_entry). 0 if the table or memory is full. allocproc() and thread_create()
// (thread.c) give it the rest.
struct proc *allocslot(void) {
  struct proc *p = proc;
  while (p < &proc[NPROC] && p->state != UNUSED)
    p++;
  if (p == &proc[NPROC])
    return 0;
  p->state = USED;
  p->group = p;
  if ((p->trapframe = kalloc()) == 0) {
    freeproc(p);
    return 0;
  }
  memset(p->trapframe, 0, PGSIZE);
  p->context.ra = (uintptr_t)forkret_entry;
  p->context.sp = p->kstack + KSTACK_SIZE;
  sched_newproc(p);
  return p;
}

// A new process: a slot as its main thread, a pid, and a page table with nothing
// user in it yet. 0 if the table or memory is full.
struct proc *allocproc(void) {
  struct proc *p = allocslot();
  if (p == 0)
    return 0;
  p->pid = nextpid++;
  if ((p->pagetable = proc_pagetable(p)) == 0) {
    freeproc(p);
    return 0;
  }
  return p;
}

// Release everything a slot holds (except its kernel stack) and mark it UNUSED. The
// page table is the process's: only a main thread's slot frees it.
void freeproc(struct proc *p) {
  uintptr_t kstack = p->kstack;
  if (p->pagetable && p->group == p)
    proc_freepagetable(p->pagetable);
  if (p->trapframe)
    kfree(p->trapframe);
  memset(p, 0, sizeof(*p));  // also clears the lab fields (stride, task_info)
  p->kstack = kstack;
  p->state = UNUSED;
}

// Start the first process: the program named by bootargs' init=, else "init".
void userinit(void) {
  struct args *a = bootargs_init_args();
  struct proc *p = allocproc();
  if (a == 0 || p == 0)
    panic("userinit: out of memory");
  if (exec_load(p, args_argv0(a), a) < 0) {
    printf("[kernel] cannot run %s: not a program %s\n", args_argv0(a),
           fs_mounted() ? "on the disk" : "in the initrd");
    sbi_shutdown(EXIT_NOT_FOUND);
  }
  args_free(a);
  if (console_files(p) < 0)
    panic("userinit: no file for the console");
  p->cwd = fs_mounted() ? fs_root() : 0;
  if (bootargs_flag("vmprint"))
    vmprint(p->pagetable);
  initproc = p;
  p->state = RUNNABLE;
}

// np starts with p's open files (shared, as after dup) and current directory: fork,
// and spawn too, so a spawned program writes to its parent's console or pipe.
void inherit_files(struct proc *np, struct proc *p) {
  for (int fd = 0; fd < NOFILE; fd++)
    if (p->ofile[fd])
      np->ofile[fd] = filedup(p->ofile[fd]);
  np->cwd = p->cwd ? idup(p->cwd) : 0;
}

// Copy the calling process: its memory (every user page), registers and heap. The
// child returns 0 from fork, the parent the child's pid; -1 if out of slots or memory.
// Only the calling thread is copied (POSIX): the child's one thread is its main
// thread, with the caller's registers (and the other threads' stacks, as memory).
int fork(void) {
  struct proc *t = myproc(), *p = myprocess(), *np = allocproc();
  if (np == 0)
    return -1;
  if (uvmcopy(p->pagetable, np->pagetable) < 0) {
    freeproc(np);
    return -1;
  }
  if (boot.ncpu > 1 && !lone_thread(t))
    tlb_shootdown(p);  // copy-on-write made p's pages read-only under its other threads
  *np->trapframe = *t->trapframe;
  np->trapframe->a0 = 0;  // fork() returns 0 in the child
  np->heap_bottom = p->heap_bottom;
  np->brk = p->brk;
  np->priority = p->priority;
  signal_fork(np, p);
  inherit_files(np, p);
  safestrcpy(np->name, p->name, sizeof(np->name));
  np->parent = p;
  np->state = RUNNABLE;
  return np->pid;
}

// Close every descriptor of p and let go of its current directory.
static void close_files(struct proc *p) {
  for (int fd = 0; fd < NOFILE; fd++)
    if (p->ofile[fd]) {
      fileclose(p->ofile[fd]);
      p->ofile[fd] = 0;
    }
  if (p->cwd) {
    begin_op();  // dropping a directory reference may free an unlinked one
    iput(p->cwd);
    end_op();
    p->cwd = 0;
  }
}

// End the calling thread (thread.c) or, called by the main thread, the process: its
// other threads first, then its memory; the slot stays a ZOMBIE until the parent's
// waitpid() collects the status. The first process's exit powers off.
void exit(int status) {
  struct proc *p = myproc();
  if (p->group != p)
    thread_exit(status);
  end_other_threads(p);
  if (p == initproc) {
    if (!bootargs_flag("quiet") && !bootargs_has_init())
      printf("[kernel] init exited with status %d: powering off\n", status);
    sbi_shutdown(status);
  }
  close_files(p);
  for (struct proc *c = proc; c < &proc[NPROC]; c++)
    if (c->parent == p) {
      c->parent = initproc;
      if (c->state == ZOMBIE)
        wakeup(initproc);  // init may be waiting and can reap it now
    }
  proc_freepagetable(p->pagetable);  // we run on the kernel page table
  p->pagetable = 0;
  p->xstatus = status;
  p->state = ZOMBIE;
  wakeup(p->parent);  // a parent sleeping in waitpid() sleeps on itself
  sched();
  panic("zombie %d ran again", p->pid);
}

// Reap an exited child (pid -1: any child) and store its status at status_addr (if
// not 0). Waits until such a child has exited; returns its pid, or -1 if there is
// no such child or a signal ended the wait (sleep_intr()). A bad status_addr gives -1 too and leaves the child to be reaped by
// a later call: the status must not be lost. (rCore's user library loops while it
// sees -2, the old non-blocking answer; it never sees it now and works unchanged.)
int waitpid(int pid, uintptr_t status_addr) {
  struct proc *p = myprocess();
  for (;;) {
    int found = 0;
    for (struct proc *c = proc; c < &proc[NPROC]; c++) {
      if (c->parent != p || c->state == UNUSED || (pid != -1 && c->pid != pid))
        continue;
      found = 1;
      if (c->state != ZOMBIE)
        continue;
      if (status_addr != 0 &&
          copyout(p->pagetable, status_addr, &c->xstatus, sizeof(c->xstatus)) < 0)
        return WAIT_NO_CHILD;
      int cpid = c->pid;
      freeproc(c);
      return cpid;
    }
    if (!found || sleep_intr(p) < 0)  // exit() wakes the parent; kill() may too
      return WAIT_NO_CHILD;
  }
}

// The parent's pid; 0 for the first process (and, as on Linux, orphans get init's).
int getppid(void) {
  struct proc *p = myprocess();
  return p->parent ? p->parent->pid : 0;
}

// Move the heap's end by n bytes (sbrk). Returns the old end, or -1 if the new end
// would fall below the image, run into the stack or an mmap region, or out of memory.
long growproc(long n) {
  struct proc *p = myprocess();
  uintptr_t old = p->brk, new = old + (uintptr_t)n;
  if (n > 0) {
    if (new < old || new > USER_MMAP_TOP || heap_grow(p, new) < 0)  // lazy.c
      return -1;
  } else if (n < 0) {
    if ((uintptr_t)-n > old - p->heap_bottom)
      return -1;
    uvmunmap(p->pagetable, PGROUNDUP(new), (PGROUNDUP(old) - PGROUNDUP(new)) / PGSIZE, 1);
  }
  p->brk = new;
  return (long)old;
}

// Wait for an interrupt and take it. wfi comes first, with sstatus.SIE still 0: it
// returns once an interrupt enabled in sie is pending, whatever SIE says. Turning SIE
// on before the wfi would let the interrupt be taken just before it, and the wfi
// would then wait for another one that may never come.
static void wait_for_interrupt(void) {
  wfi();
  intr_on();   // the pending interrupt is taken here (kerneltrap)
  intr_off();
}

// Is any thread waiting in sleep(), or running on another hart? If not, and none is
// RUNNABLE either, nothing can ever run again.
static int anyone_waits(void) {
  for (struct proc *p = proc; p < &proc[NPROC]; p++)
    if (p->state == SLEEPING || p->state == RUNNING)
      return 1;
  return 0;
}

// Run forever on this hart: pick a RUNNABLE thread (sched.c), switch to it
// (switch.S), and come back here when it calls sched(). Runs on the hart's boot
// stack, called last by main() and secondary_main(). It holds kernel_lock while it
// picks; the thread it switches to inherits it and gives it up on its way to U
// (usertrapret()), and a thread switching back here hands it back (sched()). With
// nothing to run, it waits for an interrupt (a disk completion, the timer, another
// hart's work) without the lock, so the other harts can go on: the only place the
// kernel takes interrupts (see kerneltrap()).
void scheduler(void) {
  struct cpu *c = mycpu();
  acquire(&kernel_lock);
  for (;;) {
    struct proc *p = sched_pick();
    if (p == 0) {
      if (!anyone_waits())
        panic("scheduler: no process to run");
      release(&kernel_lock);
      wait_for_interrupt();
      acquire(&kernel_lock);
      continue;
    }
    taskinfo_start(p->group);  // task_info counts for the whole process
    p->state = RUNNING;
    p->hart = (int)r_tp();
    c->proc = p;
    swtch(&c->context, &p->context);  // returns when p calls sched()
    c->proc = 0;
    sched_charge(p);
  }
}

// Give the hart back to scheduler(); the caller has already changed its state. It
// holds kernel_lock and no other lock: the scheduler takes the kernel lock over, and
// another lock held across the switch would stay held by a hart that runs others.
void sched(void) {
  struct proc *p = myproc();
  if (p->state == RUNNING)
    panic("sched: pid %d still RUNNING", p->pid);
  if (!holding(&kernel_lock) || mycpu()->noff != 1)
    panic("sched: pid %d holds locks other than the kernel lock", p->pid);
  swtch(&p->context, &mycpu()->context);
}

void yield(void) {
  myproc()->state = RUNNABLE;
  sched();
}

// Wait until wakeup(chan). The caller holds kernel_lock, as all kernel code for a
// thread does, from its check of its condition through this sleep into the
// scheduler, and wakeup() needs it too: nothing can call wakeup() in between, so no
// other lock is needed. Callers still re-check their condition in a loop (a wakeup
// may be for another waiter on the same chan).
//
// Before the first process runs (main() reading the disk), there is nobody to switch
// away from: wait for the next interrupt instead, which is a correct, if spurious,
// wakeup for callers that loop.
void sleep(void *chan) {
  struct proc *p = myproc();
  if (p == 0) {
    wait_for_interrupt();
    return;
  }
  static uint64_t seq;
  p->chan = chan;
  p->sleep_seq = ++seq;
  p->state = SLEEPING;
  sched();
  p->chan = 0;
}

// sleep(), for a wait that a signal may cut short (a pipe, waitpid, the console):
// -1, without sleeping or once woken, if a signal is pending that will end the
// process or run a handler (signal.c), so the caller gives up and returns -1 from its
// system call, and the signal is acted on as the process leaves the kernel (Linux's
// EINTR, without restarting the call). kill() wakes a process sleeping here. Only
// for waits that hold nothing: a disk request or a file-system operation in progress
// must finish, so those use sleep().
//
// A thread of a process that is ending (thread.c) gives up the same way.
int wait_interrupted(void) {
  struct proc *p = myproc();
  return p->group->exiting || (p->group == p && signal_interrupts(p));
}

int sleep_intr(void *chan) {
  if (wait_interrupted())
    return -1;
  sleep(chan);
  return wait_interrupted() ? -1 : 0;
}

// Make every thread sleeping on chan RUNNABLE.
void wakeup(void *chan) {
  for (struct proc *p = proc; p < &proc[NPROC]; p++)
    if (p->state == SLEEPING && p->chan == chan)
      p->state = RUNNABLE;
}

// Make the thread that has slept on chan the longest RUNNABLE (first come, first
// served: a condition variable's signal). 0 if none sleeps there.
struct proc *wakeup_one(void *chan) {
  struct proc *first = 0;
  for (struct proc *p = proc; p < &proc[NPROC]; p++)
    if (p->state == SLEEPING && p->chan == chan &&
        (first == 0 || p->sleep_seq < first->sleep_seq))
      first = p;
  if (first)
    first->state = RUNNABLE;
  return first;
}

// A new process's first run: scheduler() swtch()ed to forkret_entry (switch.S;
// allocslot set context.ra), which calls this: go out to user space as if returning
// from a trap.
void forkret(void) { usertrapret(); }
