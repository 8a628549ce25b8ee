// taskinfo.c: task_info(&info) (lab 1, rCore-Tutorial chapter 3): the caller's
// status, how many times it made each system call, and the milliseconds since it
// was first scheduled. syscall() calls taskinfo_count() before each call (so the
// task_info call itself counts) and scheduler() calls taskinfo_start().
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
  if (p->first_run_time == 0)
    p->first_run_time = r_time() | 1;  // never 0, which means "not yet"
  // HANDOUT: (void)p;
  // END SOLUTION
}

long sys_task_info(uintptr_t info) {
  // BEGIN SOLUTION
  struct proc *p = myproc();
  static struct task_info ti;  // 2 KiB: too big for the kernel stack
  ti.status = TASK_RUNNING;
  memmove(ti.syscall_times, p->syscall_times, sizeof(ti.syscall_times));
  ti.time = (r_time() - p->first_run_time) * 1000 / boot.timebase_hz;
  return copyout(p->pagetable, info, &ti, sizeof(ti));
  // HANDOUT: (void)info;
  // HANDOUT: return -1;
  // END SOLUTION
}
