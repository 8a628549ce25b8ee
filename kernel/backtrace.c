// backtrace.c: print the chain of return addresses on the current kernel stack
// (lab 5, after xv6's traps lab). panic() calls it; bootargs "backtrace" prints one
// at boot.
//
// The kernel is built with -fno-omit-frame-pointer: s0 (fp) points just above each
// frame, where the prologue stored the return address at fp - 1 word and the
// caller's fp at fp - 2 words. Walk that chain while it stays strictly inside this
// stack: the frame at the very top belongs to the function called from assembly
// on an empty stack (usertrap from usertrap_entry in trampoline.S, main from
// entry.S), whose saved ra and fp lead out of the C frames, so the walk ends below it.
// Each line is one return address; `llvm-addr2line -e kernel.elf` names it.
#include "defs.h"
#include "memlayout.h"
#include "proc.h"
#include "riscv.h"

extern char boot_stack[], boot_stack_top[];  // entry.S

void backtrace(void) {
  printf("backtrace:\n");
  // BEGIN SOLUTION
  uintptr_t fp = r_fp(), low, high;
  struct proc *p = myproc();
  if (p && fp >= p->kstack && fp <= p->kstack + KSTACK_SIZE) {
    low = p->kstack, high = p->kstack + KSTACK_SIZE;
  } else {
    low = (uintptr_t)boot_stack, high = (uintptr_t)boot_stack_top;
  }
  while (fp > low + 2 * sizeof(uintptr_t) && fp < high && fp % sizeof(uintptr_t) == 0) {
    uintptr_t ra = ((uintptr_t *)fp)[-1];
    printf("  %p\n", (void *)ra);
    fp = ((uintptr_t *)fp)[-2];
  }
  // END SOLUTION
}
