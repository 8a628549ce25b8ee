// proc.h: processes and the CPU that runs them.
#ifndef PROC_H
#define PROC_H

#include "abi.h"
#include "alarm.h"
#include "param.h"
#include "trapframe.h"
#include "types.h"

// Registers swtch() (switch.S) saves and restores: the callee-saved ones, since a
// context switch is an ordinary function call as far as the C compiler knows.
struct context {
  uintptr_t ra;
  uintptr_t sp;
  uintptr_t s[12];  // s0..s11
};

// One hart: the thread it runs, its scheduler's context to return to, and what it
// keeps for itself (smp.c, spinlock.c, trap.c). cpus[] is indexed by hart id, which
// the kernel keeps in tp (entry.S; trampoline.S restores it on every trap from U).
struct cpu {
  struct proc *proc;        // running thread, or 0 while in scheduler()
  struct context context;   // swtch() here to enter scheduler()
  int noff;                 // depth of push_off() nesting (spinlock.c)
  int intena;               // were interrupts on before the first push_off()?
  uint64_t timer_armed;     // when this hart's next timer interrupt is due (trap.c)
};

// A process's signals (signal.c). Sets of signals are masks of SIGBIT(signum) (abi.h).
struct sigstate {
  uint32_t pending;                  // sent by kill(), not yet acted on
  uint32_t blocked;                  // held back: sigprocmask(), and while a handler runs
  struct sigaction action[NSIG];     // what to do with each: SIG_DFL, SIG_IGN or a handler
  int stopped;                       // by SIGSTOP (and the like) until SIGCONT
  int handling;                      // the signal whose handler runs, 0 if none
  uint32_t saved_blocked;            // `blocked` before the handler began
  struct trapframe saved;            // the interrupted user registers, restored exactly
                                     // by sigreturn: kept here, out of the user's reach
};

// A process's synchronisation objects (sync.c), named by their index in each array.
struct mutex {
  int used;
  int blocking;                // 1: waiters sleep; 0: they spin, yielding the CPU
  struct proc *owner;          // the thread holding it, 0 if free
};
struct semaphore {
  int used;
  int count;                   // what semaphore_down may still take without waiting
};
struct condvar {
  int used;
};
struct syncset {
  struct mutex mutex[NMUTEX];
  struct semaphore sem[NSEM];
  struct condvar condvar[NCONDVAR];
};

// SLEEPING: waiting in sleep() on chan until someone calls wakeup(chan) (a child's
// exit, a disk request's completion, a pipe's reader or writer).
enum procstate { UNUSED, USED, SLEEPING, RUNNABLE, RUNNING, ZOMBIE };

// One slot of proc[] is one thread: what the scheduler runs. A process is its main
// thread (tid 0) and the threads it created (thread.c), which share its address space.
// What the threads of a process share is kept in the main thread's slot only, reached
// through `group` (myprocess()): open files, current directory, heap, parent and
// children, signals, sync objects, task_info's counts. A thread's own slot holds its
// state, registers (trapframe), kernel stack and context.
struct proc {
  enum procstate state;
  int pid;                      // the process's pid, the same in all its threads
  int tid;                      // thread id within the process: 0 for the main thread
  struct proc *group;           // the process's main thread (the slot itself for it)
  struct proc *parent;
  int xstatus;                  // exit status, for the parent's waitpid()
  void *chan;                   // SLEEPING: what it waits for (sleep/wakeup)
  char name[PROC_NAME];         // program name, for messages
  int hart;                     // RUNNING: the hart it runs on (tlb_shootdown)

  uintptr_t kstack;             // bottom of the kernel stack (KSTACK(slot))
  pagetable_t pagetable;        // user address space
  struct trapframe *trapframe;  // kernel address of the page mapped at TRAPFRAME
  struct context context;       // swtch() here to run this process
  uintptr_t heap_bottom;        // end of the program image: sbrk() never goes below
  struct file *ofile[NOFILE];   // open files, by descriptor
  struct inode *cwd;            // current directory (0 without a file system)
  uintptr_t brk;                // current end of the heap
  struct sigstate sig;          // signals (signal.c)
  struct syncset sync;          // mutexes, semaphores, condition variables (sync.c)
  int exiting;                  // threads must exit: the process is ending (thread.c)
  int exit_status;              // ... with this status, when a thread ended it
  uint64_t wake_at;             // in sys_sleep(): r_time() to wake at (clock.c)
  uint64_t sleep_seq;           // when it began to sleep, for wakeup_one()

  // Stride scheduling (sched.c).
  long priority;
  uint64_t pass;

  // Accounting for task_info (taskinfo.c).
  uint32_t syscall_times[MAX_SYSCALL_NUM];
  uint64_t first_run_time;      // r_time() when first scheduled; 0 = not yet

  struct alarmstate alarm;      // sigalarm (alarm.c, lab 12)
};

extern struct proc proc[NPROC];
extern struct cpu cpus[NCPU];

// This hart's struct cpu. tp holds the hart id in the kernel (entry.S, trampoline.S).
static inline struct cpu *mycpu(void) {
  uintptr_t id;
  asm volatile("mv %0, tp" : "=r"(id));
  return &cpus[id];
}

// p's process: the main thread's slot, which holds what its threads share.
static inline struct proc *process_of(struct proc *p) { return p->group; }

#endif // PROC_H
