// taskinfo.c: task_info(&info) (lab 1, rCore-Tutorial chapter 3): the caller's
// status, how many times it made each system call, and the milliseconds since it
// was first scheduled, on get_time's clock (clock.c). syscall() calls
// taskinfo_count() before each call (so the task_info call itself counts) and
// scheduler() calls taskinfo_start().
#include "abi.h"
#include "defs.h"
#include "proc.h"
#include "riscv.h"

void taskinfo_count(struct proc *p, uintptr_t num) {
  // BEGIN SOLUTION
  if (num < MAX_SYSCALL_NUM)
    p->syscall_times[num]++;
  // HANDOUT: (void)p, (void)num;
  // END SOLUTION
}

void taskinfo_start(struct proc *p) {
  // BEGIN SOLUTION
  // 0 means "not yet". A real reading is never 0: the timer counted through the boot.
  if (p->first_run_time == 0)
    p->first_run_time = r_time();
  // HANDOUT: (void)p;
  // END SOLUTION
}

long sys_task_info(uintptr_t info) {
  // BEGIN SOLUTION
  struct proc *p = myprocess();
  static struct task_info ti;  // 2 KiB: too big for the kernel stack
  ti.status = TASK_RUNNING;
  memmove(ti.syscall_times, p->syscall_times, sizeof(ti.syscall_times));
  // Two readings of get_time's clock in whole ms, then the difference (clock.c says
  // why not the other way round).
  ti.time = clock_us(r_time()) / 1000 - clock_us(p->first_run_time) / 1000;
  return copyout(p->pagetable, info, &ti, sizeof(ti));
  // HANDOUT: (void)info;
  // HANDOUT: return -1;
  // END SOLUTION
}
