// signal.c: signals: kill() makes one pending, signal_deliver() acts on it on the
// process's way back to user space, and sigreturn() undoes what a handler's start did.
//
// The path of a caught signal: kill() sets a bit in the target's sig.pending (and
// wakes it if it waits in sleep_intr()). When the target next leaves the kernel,
// usertrapret() (trap.c) calls signal_deliver(), which copies the trapframe to
// sig.saved and rewrites it: epc = the handler, a0 = the signal number, ra =
// SIGRETURN_PC. userret's sret then enters the handler instead of the interrupted
// code. The handler ends with sigreturn() (or by returning: ra traps, see usertrap()),
// which copies sig.saved back, so the next sret resumes the interrupted code with
// every register as it was. The saved copy lives in the kernel, not on the user
// stack, so a handler cannot corrupt it: whatever it does, sigreturn resumes exactly.
//
// One handler runs at a time: while one runs, other caught signals stay pending
// until its sigreturn (signals whose action is not a handler are still acted on).
//
// Signals are the process's: its main thread's slot holds the state, and only the
// main thread acts on them and runs handlers (rCore-Tutorial has no thread signals
// either). A signal that ends the process ends all its threads (thread.c).
#include "abi.h"
#include "defs.h"
#include "memlayout.h"
#include "proc.h"
#include "trapframe.h"

// What sigaction and sigprocmask may never change (POSIX, and rCore refuses them too).
#define UNCATCHABLE (SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))
#define ALL_SIGNALS (~(uint32_t)0 & ~SIGBIT(0))  // 1..NSIG-1: bit 0 is no signal
#define STOP_SIGNALS (SIGBIT(SIGSTOP) | SIGBIT(SIGTSTP) | SIGBIT(SIGTTIN) | SIGBIT(SIGTTOU))
#define IGNORED_BY_DEFAULT (SIGBIT(SIGCHLD) | SIGBIT(SIGURG) | SIGBIT(SIGWINCH))

// What acting on a signal means for a process now.
enum disposition { IGNORE, TERMINATE, STOP, CONTINUE, CATCH };

// Names for the kernel's messages, from the abi.h constants themselves.
#define NAME(sig) [sig] = #sig
static const char *const signal_names[NSIG] = {
    NAME(SIGHUP),  NAME(SIGINT),    NAME(SIGQUIT), NAME(SIGILL),   NAME(SIGTRAP),
    NAME(SIGABRT), NAME(SIGBUS),    NAME(SIGFPE),  NAME(SIGKILL),  NAME(SIGUSR1),
    NAME(SIGSEGV), NAME(SIGUSR2),   NAME(SIGPIPE), NAME(SIGALRM),  NAME(SIGTERM),
    NAME(SIGSTKFLT), NAME(SIGCHLD), NAME(SIGCONT), NAME(SIGSTOP),  NAME(SIGTSTP),
    NAME(SIGTTIN), NAME(SIGTTOU),   NAME(SIGURG),  NAME(SIGXCPU),  NAME(SIGXFSZ),
    NAME(SIGVTALRM), NAME(SIGPROF), NAME(SIGWINCH), NAME(SIGIO),   NAME(SIGPWR),
    NAME(SIGSYS),
};

static int valid(int sig) { return sig > 0 && sig < NSIG; }

static enum disposition disposition(struct proc *p, int sig) {
  uintptr_t handler = p->sig.action[sig].handler;
  if (sig == SIGKILL)
    return TERMINATE;
  if (sig == SIGSTOP)
    return STOP;
  if (handler == SIG_IGN)
    return IGNORE;
  if (handler != SIG_DFL)
    return CATCH;
  if (sig == SIGCONT)
    return CONTINUE;
  if (SIGBIT(sig) & STOP_SIGNALS)
    return STOP;
  return (SIGBIT(sig) & IGNORED_BY_DEFAULT) ? IGNORE : TERMINATE;
}

// May signal_deliver() act on sig now: pending, not blocked, and, if it is caught,
// no other handler running, a signal's or the alarm's (alarm.c): one handler at a
// time, so that sigreturn always knows which one it ends?
static int ready(struct proc *p, int sig) {
  struct sigstate *s = &p->sig;
  if (!(s->pending & SIGBIT(sig)) || (s->blocked & SIGBIT(sig)))
    return 0;
  return !((s->handling || alarm_running(p)) && disposition(p, sig) == CATCH);
}

// Should a blocking wait give up for a pending signal (sleep_intr() in proc.c)? Yes
// for one that will end the process or run a handler. A stop waits: the process
// stops on its way out of the kernel, once its call is done.
int signal_interrupts(struct proc *p) {
  for (int sig = 1; sig < NSIG; sig++)
    if (ready(p, sig)) {
      enum disposition d = disposition(p, sig);
      if (d == TERMINATE || d == CATCH)
        return 1;
    }
  return 0;
}

// kill(pid, sig): make sig pending for pid. 0 if sent (or pid is a zombie, which no
// signal changes, or sig is 0: "does pid exist?"); -1 for no such process or a bad
// signal number.
int kill(int pid, int sig) {
  if (sig != 0 && !valid(sig))
    return -1;
  struct proc *t = proc;  // the process's main thread: threads share its pid
  while (t < &proc[NPROC] && (t->state == UNUSED || t->pid != pid || t->group != t))
    t++;
  if (t == &proc[NPROC])
    return -1;
  if (sig == 0 || t->state == ZOMBIE)
    return 0;
  struct sigstate *s = &t->sig;
  if (sig == SIGCONT) {      // continues at once, even if caught, blocked or ignored
    s->stopped = 0;
    s->pending &= ~STOP_SIGNALS;
  } else if (SIGBIT(sig) & STOP_SIGNALS) {
    s->pending &= ~SIGBIT(SIGCONT);
  }
  s->pending |= SIGBIT(sig);
  // Wake it if it waits in sleep_intr() for something the signal makes moot, or sits
  // stopped (it checks whether it may go on). Any other sleeper re-checks its
  // condition and sleeps again: every sleep() is in a loop.
  if (t->state == SLEEPING && (t->chan == &s->stopped || signal_interrupts(t)))
    t->state = RUNNABLE;
  smp_kick(t);  // running on another hart: make it look now (smp.c)
  return 0;
}

// The default action "terminate": one line, like a fault's (trap.c), and exit.
static void __attribute__((noreturn)) terminate(struct proc *p, int sig) {
  printf("[kernel] pid %d (%s) killed by signal %s\n", p->pid, p->name, signal_names[sig]);
  exit(EXIT_SIGNALED(sig));
}

// Make the coming sret enter the handler for sig instead of the interrupted code.
static void start_handler(struct proc *p, int sig) {
  struct sigstate *s = &p->sig;
  struct trapframe *tf = p->trapframe;
  s->saved = *tf;
  s->saved_blocked = s->blocked;
  s->blocked |= (SIGBIT(sig) | s->action[sig].mask) & ~UNCATCHABLE;
  s->handling = sig;
  tf->epc = s->action[sig].handler;  // a bad address just faults there, in U
  tf->a0 = sig;                      // void handler(int signum)
  tf->ra = SIGRETURN_PC;             // a handler that returns traps (usertrap())
  tf->sp &= ~(uintptr_t)15;          // the calling convention's alignment, whatever
                                     // the interrupted code was doing
}

// Called by usertrapret() (trap.c) before every return to user space: act on the
// pending signals that are not blocked, lowest number first, SIGKILL before all. A
// caught one starts its handler and ends the loop: the rest wait for the next return.
// May not return (a signal that terminates), and waits here while stopped.
void signal_deliver(void) {
  struct proc *p = myproc();
  struct sigstate *s = &p->sig;
  if (p != p->group)
    return;
  for (;;) {
    if (s->pending & SIGBIT(SIGKILL))
      terminate(p, SIGKILL);
    for (int sig = 1; sig < NSIG; sig++) {
      if (!ready(p, sig))
        continue;
      s->pending &= ~SIGBIT(sig);
      switch (disposition(p, sig)) {
      case IGNORE:
        break;
      case TERMINATE:
        terminate(p, sig);
      case STOP:
        s->stopped = 1;
        break;
      case CONTINUE:
        s->stopped = 0;  // kill() has done it already; nothing else to do
        break;
      case CATCH:
        start_handler(p, sig);
        return;
      }
    }
    if (!s->stopped)
      return;
    if (p->exiting)      // a thread ended the process: even stopped, it ends
      exit(p->exit_status);
    sleep(&s->stopped);  // kill() of SIGCONT or SIGKILL wakes us, and exit_group()
  }
}

// Undo start_handler(): the interrupted registers and blocked set, exactly. -1 if no
// handler runs (a sigreturn out of the blue changes nothing).
int signal_return(struct proc *p) {
  struct sigstate *s = &p->sig;
  if (p != p->group || s->handling == 0)  // only the main thread runs handlers
    return -1;
  *p->trapframe = s->saved;  // the kernel_* fields too: usertrapret() refills them
  s->blocked = s->saved_blocked;
  s->handling = 0;
  return 0;
}

// fork: the child has the parent's actions, blocked set and, if it forked inside a
// handler, that handler's saved frame (its copy of the handler may sigreturn); no
// pending signals, and it runs.
void signal_fork(struct proc *child, struct proc *parent) {
  child->sig = parent->sig;
  child->sig.pending = 0;
  child->sig.stopped = 0;
}

// exec: handlers are addresses in the old image, so caught signals go back to
// SIG_DFL; ignored ones stay ignored, blocked and pending ones stay (POSIX). A
// handler running called exec: it is gone, and with it its saved frame.
void signal_exec(struct proc *p) {
  struct sigstate *s = &p->sig;
  for (int sig = 1; sig < NSIG; sig++)
    if (s->action[sig].handler != SIG_IGN)
      s->action[sig] = (struct sigaction){.handler = SIG_DFL};
  s->handling = 0;
}

// ---- the system calls (prototypes: syscall_gen.h) ------------------------------------

long sys_kill(int pid, int signum) { return kill(pid, signum); }

// sigaction(signum, action, old_action): if old_action is not 0, store the current
// action there; if action is not 0, make it the new one. Either may be 0 (Linux's
// rule; rCore's kernel wants both). -1, with nothing changed, for a signal that
// cannot be caught or a pointer the process cannot use.
long sys_sigaction(int signum, uintptr_t action, uintptr_t old_action) {
  struct proc *p = myprocess();
  struct sigaction new;
  if (!valid(signum) || (SIGBIT(signum) & UNCATCHABLE))
    return -1;
  if (action != 0 && copyin(p->pagetable, &new, action, sizeof(new)) < 0)
    return -1;
  if (old_action != 0 &&
      copyout(p->pagetable, old_action, &p->sig.action[signum], sizeof(new)) < 0)
    return -1;
  if (action != 0) {
    new.mask &= ALL_SIGNALS & ~UNCATCHABLE;
    p->sig.action[signum] = new;
  }
  return 0;
}

// sigprocmask(mask): block exactly the signals in mask and return the old mask
// (rCore's form: no "how", no pointers). SIGKILL and SIGSTOP are silently left out.
long sys_sigprocmask(uint32_t mask) {
  struct sigstate *s = &myprocess()->sig;
  uint32_t old = s->blocked;
  s->blocked = mask & ALL_SIGNALS & ~UNCATCHABLE;
  return old;
}

// sigreturn(): resume the code the handler interrupted: a signal's handler, or else
// the alarm's (alarm.c; at most one of them runs). The value returned goes into a0
// (syscall.c), so return the interrupted a0 itself, or it would be lost.
long sys_sigreturn(void) {
  struct proc *p = myproc();
  if (signal_return(p) < 0 && alarm_return(p) < 0)
    return -1;
  return (long)p->trapframe->a0;
}
