// hostile MODE: a program that misbehaves on purpose. Every mode but badptr must get
// the process killed by the kernel (exit status EXIT_KILLED, and one "[kernel] ...
// killed" line); badptr passes bad pointers to system calls, which must return -1.
//   kread kwrite   load from / store to kernel memory
//   trapframe      load from the (kernel-only) trapframe page
//   textwrite      store into our own read-only text
//   sret csrw csrr privileged instructions in U-mode
//   ebreak illegal breakpoint; an all-zero instruction word
//   jump0          jump to address 0
//   stack          recurse until the user stack's guard page
//   sighandler     a signal handler at a kernel address: entering it faults
//   sigjump        jump to SIGRETURN_PC (the trampoline) with no handler running:
//                  that is how a returning handler ends (kernel/signal.c), but only
//                  from inside one; anywhere else it is a plain fault
//   threadjump     jump to THREAD_EXIT_PC in the main thread: a thread function that
//                  returns ends its thread there (kernel/thread.c), but the main
//                  thread has no thread function to return from
//   badptr         bad pointers to write, read, waitpid, exec, get_time (not task_info:
//                  its lab tests it, so that one mistake there costs one point)
#include "user.h"

#define SIGRETURN_ADDR (TRAPFRAME_ADDR + 4096)  // SIGRETURN_PC = TRAMPOLINE (memlayout.h)
#define THREAD_EXIT_ADDR (SIGRETURN_ADDR + 8)   // THREAD_EXIT_PC

typedef void (*fn_t)(void);
static volatile fn_t zero = 0;  // volatile: the compiler may not reason about the call

static int recurse(int n) {
  volatile char frame[512];
  frame[0] = (char)n;
  if (n > 1000000)  // never reached: the stack is 32 KiB
    return 0;
  return recurse(n + 1) + frame[0];
}

static int bad_pointers(void) {
  char *bad[] = {NULL, (char *)KERNEL_ADDR, (char *)TRAPFRAME_ADDR, (char *)0x20000000,
                 (char *)-1L};
  char *argv_bad[] = {"hello", (char *)KERNEL_ADDR, NULL};
  int failures = 0;
  for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    failures += write(STDOUT, bad[i], 8) != -1;
    failures += read(STDIN, bad[i], 8) != -1;
    failures += exec(bad[i], NULL) != -1;
    failures += get_time((struct timeval *)bad[i], 0) != -1;
  }
  failures += read(STDIN, (char *)0x10000, 1) != -1;             // our text: not writable
  failures += write(STDOUT, (char *)0x10000, ~0UL >> 2) != -1;   // runs off the mapping
  failures += exec("hello", (char **)KERNEL_ADDR) != -1;         // argv array itself bad
  failures += exec("hello", argv_bad) != -1;                     // one argv string bad
  int child = fork();
  if (child == 0)
    exit(7);
  failures += waitpid(child, (int *)KERNEL_ADDR) != -1;          // bad status pointer
  int status = 0;
  failures += waitpid(child, &status) != child || status != 7;   // still collectable
  printf("hostile badptr: %d unexpected results\n", failures);
  return failures;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "kread") == 0)
    printf("read %x\n", *(volatile int *)KERNEL_ADDR);
  else if (strcmp(mode, "kwrite") == 0)
    *(volatile int *)KERNEL_ADDR = 1;
  else if (strcmp(mode, "trapframe") == 0)
    printf("read %x\n", *(volatile int *)TRAPFRAME_ADDR);
  else if (strcmp(mode, "textwrite") == 0)
    *(volatile int *)main = 0;
  else if (strcmp(mode, "sret") == 0)
    asm volatile("sret");
  else if (strcmp(mode, "csrw") == 0)
    asm volatile("csrw sstatus, zero");
  else if (strcmp(mode, "csrr") == 0)
    asm volatile("csrr t0, satp" ::: "t0");
  else if (strcmp(mode, "ebreak") == 0)
    asm volatile("ebreak");
  else if (strcmp(mode, "illegal") == 0)
    asm volatile(".word 0");
  else if (strcmp(mode, "jump0") == 0)
    zero();
  else if (strcmp(mode, "stack") == 0)
    return recurse(0);
  else if (strcmp(mode, "sighandler") == 0) {
    struct sigaction act = {.handler = KERNEL_ADDR};
    sigaction(SIGUSR1, &act, NULL);
    kill(getpid(), SIGUSR1);
  } else if (strcmp(mode, "sigjump") == 0)
    ((fn_t)SIGRETURN_ADDR)();
  else if (strcmp(mode, "threadjump") == 0)
    ((fn_t)THREAD_EXIT_ADDR)();
  else if (strcmp(mode, "badptr") == 0)
    return bad_pointers();
  else {
    printf("usage: hostile kread|kwrite|trapframe|textwrite|sret|csrw|csrr|ebreak|illegal|"
           "jump0|stack|sighandler|sigjump|threadjump|badptr\n");
    return 2;
  }
  printf("hostile %s: survived, which it must not\n", mode);
  return 3;
}
