// alarm.c: sigalarm(ticks, handler) (lab 12, alarm: MIT 6.1810's traps lab).
//
// After every `ticks` timer ticks of CPU time the process consumes, the kernel makes
// it run handler(), in U, in the middle of whatever it was doing; the handler ends
// with sigreturn(), and the interrupted code goes on with every register as it was.
// A tick counts when the timer interrupt stops the process in U: usertrap() (trap.c)
// calls alarm_tick() for each, and sys_sigreturn() (signal.c) calls alarm_return()
// when no signal handler runs.
//
// The path of one alarm: the tick that completes the interval copies the trap frame
// (all 31 registers and epc) into p->alarm.saved and sets the frame's epc to the
// handler: userret's sret enters the handler with every other register as it was
// interrupted. sigreturn copies the saved frame back, so the next sret resumes at the
// interrupted instruction, and returns the saved a0, which syscall() stores into a0.
//
// One handler at a time, of either kind: while the alarm handler runs, caught signals
// stay pending (signal.c asks alarm_running()), and while a signal's handler runs, the
// alarm waits. Ticks go on counting meanwhile, up to the interval; the first tick
// after that handler's sigreturn then fires the alarm. Ticks never queue: at most one
// alarm is owed.
#include "defs.h"
#include "proc.h"
#include "trapframe.h"

// sigalarm(ticks, handler): from now on, run handler after every `ticks` ticks;
// sigalarm(0, 0) (any handler) stops the alarm. A handler running keeps running:
// its sigreturn still resumes the code it interrupted. -1 for negative ticks, or an
// odd handler address, which no instruction has (sret would round it down).
long sys_sigalarm(int ticks, uintptr_t handler) {
  // BEGIN SOLUTION
  struct alarmstate *a = &myproc()->alarm;
  if (ticks < 0 || (ticks > 0 && (handler & 1)))
    return -1;
  a->interval = ticks;
  a->handler = ticks > 0 ? handler : 0;
  a->ticks = 0;  // the interval starts now
  return 0;
  // HANDOUT: (void)ticks, (void)handler;
  // HANDOUT: return -1;
  // END SOLUTION
}

// A timer interrupt stopped p in U (usertrap(), before it yields): count the tick,
// and if the interval is complete, make the coming sret enter the handler. The
// handler's address is not checked: a bad one faults there, in U, and the fault
// kills the process as any other (kill_for_fault() in trap.c).
void alarm_tick(struct proc *p) {
  // BEGIN SOLUTION
  struct alarmstate *a = &p->alarm;
  if (a->interval == 0)
    return;
  if (a->ticks < a->interval)
    a->ticks++;
  if (a->ticks < a->interval || a->running || p->sig.handling)
    return;  // not yet, or a handler runs: the first tick after its sigreturn fires
  a->ticks = 0;
  a->saved = *p->trapframe;
  a->running = 1;
  p->trapframe->epc = a->handler;
  // HANDOUT: (void)p;
  // END SOLUTION
}

// Does p's alarm handler run (entered, no sigreturn yet)? signal.c holds caught
// signals back meanwhile.
int alarm_running(struct proc *p) { return p->alarm.running; }

// The alarm's part of sigreturn(): put the interrupted registers back, exactly. -1 if
// the alarm handler does not run (a sigreturn out of the blue changes nothing).
int alarm_return(struct proc *p) {
  // BEGIN SOLUTION
  struct alarmstate *a = &p->alarm;
  if (!a->running)
    return -1;
  *p->trapframe = a->saved;  // the kernel_* fields too: usertrapret() refills them
  a->running = 0;
  return 0;
  // HANDOUT: (void)p;
  // HANDOUT: return -1;
  // END SOLUTION
}

// exec: the handler is an address in the old image, so the alarm stops, and a handler
// that was running is gone with its image (exec_load() in exec.c).
void alarm_exec(struct proc *p) {
  // BEGIN SOLUTION
  memset(&p->alarm, 0, sizeof(p->alarm));
  // HANDOUT: (void)p;
  // END SOLUTION
}
