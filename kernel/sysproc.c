// sysproc.c: the process system calls. Each unpacks and checks its arguments and
// calls the implementation in proc.c or exec.c. Prototypes: syscall_gen.h.
#include "abi.h"
#include "defs.h"
#include "memlayout.h"
#include "proc.h"
#include "riscv.h"

long sys_exit(int status) { exit(status); }

long sys_yield(void) {
  yield();
  return 0;
}

long sys_getpid(void) { return myproc()->pid; }

// freemem(): bytes of RAM the frame allocator (kalloc.c) has free.
long sys_freemem(void) { return (long)(kfree_count() * PGSIZE); }

long sys_getppid(void) { return getppid(); }

long sys_fork(void) { return fork(); }

long sys_waitpid(int pid, uintptr_t status) { return waitpid(pid, status); }

long sys_sbrk(long increment) { return growproc(increment); }

// Copy a program path and its argv from user space into kernel memory. A null argv
// means no arguments besides the program name. *out is freed by the caller.
int fetchargs(uintptr_t upath, uintptr_t uargv, char *path, struct args **out) {
  struct proc *p = myproc();
  struct args *a;
  if (copyinstr(p->pagetable, path, upath, MAXPATH) < 0 || (a = args_alloc()) == 0)
    return -1;
  if ((uargv == 0 ? args_add(a, path) : args_copyin(a, p->pagetable, uargv)) < 0) {
    args_free(a);
    return -1;
  }
  *out = a;
  return 0;
}

// exec(path, argv): on success the new program starts with a0 = argc, a1 = argv.
// -1 while the process has other threads: they run in the address space exec would
// replace (rCore's kernel refuses this too).
long sys_exec(uintptr_t upath, uintptr_t uargv) {
  char path[MAXPATH];
  struct args *a;
  if (!lone_thread(myproc()) || fetchargs(upath, uargv, path, &a) < 0)
    return -1;
  int argc = exec_load(myproc(), path, a);
  args_free(a);
  return argc;
}

// get_time(tv, tz): the clock (clock.c), which task_info measures with too, in
// seconds and microseconds; tz is ignored.
long sys_get_time(uintptr_t tv, long tz) {
  (void)tz;
  uint64_t us = clock_us(r_time());
  struct timeval t = {.sec = us / 1000000, .usec = us % 1000000};
  return copyout(myproc()->pagetable, tv, &t, sizeof(t));
}
