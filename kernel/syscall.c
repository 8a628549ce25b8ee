// syscall.c: system-call dispatch.
//
// usertrap() (trap.c) calls syscall() for an ecall from U: the number is in a7, the
// arguments in a0..a5, and the result goes back in a0. The table and the argument
// unpacking are generated from syscall.tbl into syscall_gen.h, so adding a call
// means one line there and one sys_ function.
#include "defs.h"
#include "proc.h"
#include "trapframe.h"

struct syscall_entry {
  const char *name;
  int nargs;
  long (*call)(struct trapframe *tf);
};

#define SYSCALL_DISPATCH
#include "syscall_gen.h"

void syscall(void) {
  struct proc *p = myproc();
  uintptr_t num = p->trapframe->a7;
  long ret = -1;  // unknown numbers fail, they do not kill
  if (num < SYSCALL_MAX && syscall_table[num].call) {
    taskinfo_count(p->group, num);  // task_info counts for the whole process
    ret = syscall_table[num].call(p->trapframe);
  }
  p->trapframe->a0 = (uintptr_t)ret;
}
