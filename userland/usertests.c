// usertests [PREFIX...]: the kernel's test suite, run from user space. Each case runs
// in its own child process, so a case that crashes is just a failure. Prints one
// "PASS name" or "FAIL name" line per case and a total; exits with the failure count.
// With arguments, runs only the cases whose names start with one of them.
#include "user.h"

#define MMAP_AT 0x10000000UL

// ---- cases that must return 0 -------------------------------------------------------

static int run_child(char **argv) {
  int pid = fork(), status = -100;
  if (pid == 0) {
    exec(argv[0], argv);
    exit(99);
  }
  if (pid < 0 || waitpid(pid, &status) != pid)
    return -101;
  return status;
}

static int exec_hello(void) {
  char *argv[] = {"hello", "from", "usertests", NULL};
  return run_child(argv);
}

static int exec_missing(void) {
  char *argv[] = {"no-such-program", NULL};
  return exec("no-such-program", argv) == -1 && exec("", NULL) == -1 ? 0 : 1;
}

static int exit_status(void) {
  int pid = fork(), status = 0;
  if (pid == 0)
    exit(42);
  return waitpid(pid, &status) == pid && status == 42 ? 0 : 1;
}

static int fork_copies_memory(void) {
  static volatile int shared = 1;
  int parent = getpid(), pid = fork(), status = 0;
  if (pid == 0)
    exit(getpid() != parent && shared == 1 ? (shared = 2, 0) : 1);
  return waitpid(pid, &status) == pid && status == 0 && shared == 1 ? 0 : 1;
}

// Does a child see ppid as its parent's pid? 0 if so.
static int fork_ppid_is(int parent) {
  int pid = fork(), status = -1;
  if (pid == 0)
    exit(getppid() == parent ? 0 : 1);
  return pid < 0 || waitpid(pid, &status) != pid ? -1 : status;
}

static int waitpid_semantics(void) {
  if (waitpid(-1, NULL) != WAIT_NO_CHILD || waitpid(12345, NULL) != WAIT_NO_CHILD)
    return 1;
  int pid = fork(), status = 0;
  if (pid == 0) {
    sleep_ms(20);
    exit(5);
  }
  // Blocks until the child has exited (it sleeps 20 ms first).
  if (waitpid(pid, &status) != pid || status != 5)
    return 2;
  // A bad status pointer gives -1 and leaves the child to be reaped.
  if ((pid = fork()) == 0)
    exit(6);
  if (waitpid(pid, (int *)KERNEL_ADDR) != WAIT_NO_CHILD)
    return 3;
  if (fork_ppid_is(getpid()) != 0)
    return 4;
  return waitpid(pid, &status) == pid && status == 6 ? 0 : 5;
}

static int fork_until_full(void) {
  int n = 0, pid;
  while (n < 200 && (pid = fork()) != -1) {
    if (pid == 0) {
      sleep_ms(300);
      exit(0);
    }
    n++;
  }
  int reaped = 0;
  while (wait(NULL) > 0)
    reaped++;
  return n < 200 && reaped == n && fork_copies_memory() == 0 ? 0 : 1;  // still works
}

static int sbrk_grow_shrink(void) {
  long start = sbrk(0), old = sbrk(10000);
  if (old != start)
    return 1;
  memset((void *)old, 0xab, 10000);
  return sbrk(-10000) == start + 10000 && sbrk(0) == start && sbrk(-(start + 4096)) == -1 &&
                 sbrk((long)(~0UL >> 2)) == -1 ? 0 : 2;
}

static int sbrk_out_of_memory(void) {
  long start = sbrk(0), step = 1 << 20, grown = 0;
  while (grown < (1L << 30) && sbrk(step) != -1)
    grown += step;
  if (grown >= (1L << 30) || sbrk(-grown) != start + grown)
    return 1;
  return fork_copies_memory();  // memory came back
}

static int get_time_sane(void) {
  struct timeval a, b;
  if (get_time(&a, 0) != 0 || a.usec >= 1000000)
    return 1;
  sleep_ms(5);
  get_time(&b, 0);
  return b.sec * 1000000 + b.usec > a.sec * 1000000 + a.usec ? 0 : 2;
}

static int yield_and_getpid(void) {
  return yield() == 0 && getpid() > 0 ? 0 : 1;
}

static int unknown_syscall(void) {
  return syscall(9999, 0, 0, 0, 0, 0, 0) == -1 && syscall(-1, 1, 2, 3, 4, 5, 6) == -1 &&
                 syscall(0, 0, 0, 0, 0, 0, 0) == -1 ? 0 : 1;
}

static int bad_pointers(void) {
  char *argv[] = {"hostile", "badptr", NULL};
  return run_child(argv);
}

// ---- lab cases ----------------------------------------------------------------------

static int mmap_basic(void) {
  if (mmap((void *)MMAP_AT, 8192, PROT_READ | PROT_WRITE) != 0)
    return 1;
  memset((void *)MMAP_AT, 7, 8192);
  int pid = fork(), status = 0;
  if (pid == 0)
    exit(((volatile char *)MMAP_AT)[8191] == 7 ? 0 : 1);  // fork copies the mapping
  if (waitpid(pid, &status) != pid || status != 0)
    return 2;
  return munmap((void *)MMAP_AT, 8192) == 0 ? 0 : 3;
}

static int mmap_errors(void) {
  int bad = 0;
  bad += mmap((void *)(MMAP_AT + 1), 4096, PROT_READ) != -1;
  bad += mmap((void *)MMAP_AT, 4096, 0) != -1;
  bad += mmap((void *)MMAP_AT, 4096, 8 | PROT_READ) != -1;
  bad += mmap((void *)0x10000, 4096, PROT_READ) != -1;  // our own text
  bad += mmap((void *)TRAPFRAME_ADDR, 4096, PROT_READ) != -1;  // above user space
  bad += munmap((void *)MMAP_AT, 4096) != -1;            // not mapped
  bad += mmap((void *)MMAP_AT, 4096, PROT_READ) != 0;
  bad += mmap((void *)MMAP_AT, 8192, PROT_READ) != -1;   // overlaps
  bad += munmap((void *)MMAP_AT, 8192) != -1;            // half not mapped
  bad += munmap((void *)MMAP_AT, 4096) != 0;
  return bad;
}

static int spawn_hello(void) {
  char *argv[] = {"hello", "spawned", NULL};
  int status = -1, pid = spawn("hello", argv);
  if (pid <= 0 || waitpid(pid, &status) != pid || status != 0)
    return 1;
  return spawn("no-such-program", NULL) == -1 ? 0 : 2;
}

static int set_priority_range(void) {
  return set_priority(1) == -1 && set_priority(0) == -1 && set_priority(10) == 10 ? 0 : 1;
}

static int task_info_counts(void) {
  static struct task_info ti;
  for (int i = 0; i < 3; i++)
    getpid();
  if (task_info(&ti) != 0)
    return 1;
  return ti.status == TASK_RUNNING && ti.syscall_times[SYS_getpid] >= 3 &&
                 ti.syscall_times[SYS_task_info] >= 1 ? 0 : 2;
}

// ---- the table ----------------------------------------------------------------------

struct test {
  const char *name;
  int (*fn)(void);      // returns 0 for pass; or null, and:
  const char *hostile;  // run "hostile MODE": the kernel must kill it
};

static const struct test tests[] = {
    {"exec_hello", exec_hello, 0},
    {"exec_missing", exec_missing, 0},
    {"exit_status", exit_status, 0},
    {"fork_copies_memory", fork_copies_memory, 0},
    {"waitpid_semantics", waitpid_semantics, 0},
    {"fork_until_full", fork_until_full, 0},
    {"sbrk_grow_shrink", sbrk_grow_shrink, 0},
    {"sbrk_out_of_memory", sbrk_out_of_memory, 0},
    {"get_time", get_time_sane, 0},
    {"yield_getpid", yield_and_getpid, 0},
    {"unknown_syscall", unknown_syscall, 0},
    {"bad_pointers", bad_pointers, 0},
    {"kill_kernel_read", 0, "kread"},
    {"kill_kernel_write", 0, "kwrite"},
    {"kill_trapframe_read", 0, "trapframe"},
    {"kill_text_write", 0, "textwrite"},
    {"kill_sret", 0, "sret"},
    {"kill_csrw", 0, "csrw"},
    {"kill_csrr", 0, "csrr"},
    {"kill_ebreak", 0, "ebreak"},
    {"kill_illegal", 0, "illegal"},
    {"kill_jump0", 0, "jump0"},
    {"kill_stack_overflow", 0, "stack"},
    {"kill_signal_handler_in_kernel", 0, "sighandler"},
    {"kill_sigreturn_jump_outside_handler", 0, "sigjump"},
    {"kill_thread_exit_jump_in_main_thread", 0, "threadjump"},
    {"lab_mmap_basic", mmap_basic, 0},
    {"lab_mmap_errors", mmap_errors, 0},
    {"lab_spawn", spawn_hello, 0},
    {"lab_set_priority", set_priority_range, 0},
    {"lab_task_info", task_info_counts, 0},
};

static int run(const struct test *t) {
  int pid = fork(), status = -100;
  if (pid == 0) {
    if (t->fn)
      exit(t->fn());
    char *argv[] = {"hostile", (char *)t->hostile, NULL};
    exec("hostile", argv);
    exit(98);
  }
  if (pid < 0 || waitpid(pid, &status) != pid)
    return 0;
  return t->fn ? status == 0 : status == EXIT_KILLED;
}

static const char *case_name(unsigned i) {
  return tests[i].name;
}

int main(int argc, char **argv) {
  if (refuse_unknown_cases("usertests", argc, argv, case_name,
                           sizeof(tests) / sizeof(tests[0])))
    return 2;
  int passed = 0, failed = 0;
  for (unsigned i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
    if (!test_selected(tests[i].name, argc, argv))
      continue;
    int ok = run(&tests[i]);
    printf("%s %s\n", ok ? "PASS" : "FAIL", tests[i].name);
    ok ? passed++ : failed++;
  }
  printf("usertests: %d passed, %d failed\n", passed, failed);
  return failed;
}
