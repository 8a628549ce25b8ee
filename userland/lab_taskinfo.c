// lab_taskinfo MODE TOKEN ARGS...: the graded checks of lab 1 (task_info, taskinfo.c).
// Prints "PASS TOKEN" only if every check of MODE held; otherwise a FAIL line saying
// what differed. The grader passes a fresh random TOKEN each run (labs/taskinfo/).
//   counts TOKEN N M   N getpid and M get_time calls, then task_info: exact counts
//   fork TOKEN N       a child's counts start at zero and are its own
//   time TOKEN MS      after spinning MS ms, time is MS-1..MS+10
//   badptr TOKEN       bad pointers give -1, a good one 0
#include "user.h"

static struct task_info ti;

static int fail(const char *why) {
  printf("FAIL: %s\n", why);
  return 1;
}

// Every count must be 0 except those listed in want (pairs of number, count).
static int counts_are(const int *want, int n) {
  for (int num = 0; num < MAX_SYSCALL_NUM; num++) {
    uint32_t expect = 0;
    for (int i = 0; i < n; i += 2)
      if (want[i] == num)
        expect = (uint32_t)want[i + 1];
    if (ti.syscall_times[num] != expect) {
      printf("FAIL: syscall_times[%d] = %u, expected %u\n", num, ti.syscall_times[num], expect);
      return 0;
    }
  }
  return 1;
}

static int counts(int n, int m) {
  struct timeval tv;
  for (int i = 0; i < n; i++)
    getpid();
  for (int i = 0; i < m; i++)
    get_time(&tv, 0);
  if (task_info(&ti) != 0)
    return fail("task_info returned non-zero");
  if (ti.status != TASK_RUNNING)
    return fail("status is not TASK_RUNNING");
  int want[] = {SYS_getpid, n, SYS_get_time, m, SYS_task_info, 1};
  return counts_are(want, 6) ? 0 : 1;
}

static int forked(int n) {
  int pid = fork(), status = -1;
  if (pid == 0) {
    for (int i = 0; i < n; i++)
      getpid();
    int want[] = {SYS_getpid, n, SYS_task_info, 1};
    exit(task_info(&ti) == 0 && counts_are(want, 4) ? 0 : 1);
  }
  if (pid < 0 || waitpid(pid, &status) != pid)
    return fail("fork or waitpid failed");
  if (status != 0)
    return fail("the child's counts were wrong");
  if (task_info(&ti) != 0)
    return fail("task_info returned non-zero in the parent");
  return ti.syscall_times[SYS_fork] == 1 && ti.syscall_times[SYS_getpid] == 0 &&
                 ti.syscall_times[SYS_task_info] == 1 ? 0 : fail("the parent's counts changed");
}

static int timed(int ms) {
  uint64_t end = time_ms() + ms;
  while (time_ms() < end)  // busy, in long blocks: few system calls to emulate
    asm volatile(".rept 500\n nop\n .endr");
  if (task_info(&ti) != 0)
    return fail("task_info returned non-zero");
  printf("time = %lu ms after sleeping %d ms\n", (unsigned long)ti.time, ms);
  // time_ms() and time both truncate to whole milliseconds: allow one either side.
  return ti.time + 1 >= (uintptr_t)ms && ti.time <= (uintptr_t)ms + 10 ? 0 : fail("time is off");
}

static int badptr(void) {
  int bad = 0;
  bad += task_info(0) != -1;
  bad += task_info((struct task_info *)KERNEL_ADDR) != -1;
  bad += task_info((struct task_info *)TRAPFRAME_ADDR) != -1;
  bad += task_info((struct task_info *)0x10000) != -1;  // our own text: not writable
  if (bad)
    return fail("a bad pointer did not give -1");
  return task_info(&ti) == 0 ? 0 : fail("a good pointer did not give 0");
}

int main(int argc, char **argv) {
  if (argc < 3)
    return fail("usage: lab_taskinfo MODE TOKEN ARGS...");
  const char *mode = argv[1];
  long a = argc > 3 ? atol(argv[3]) : 0, b = argc > 4 ? atol(argv[4]) : 0;
  int r = 1;
  if (strcmp(mode, "counts") == 0)
    r = counts((int)a, (int)b);
  else if (strcmp(mode, "fork") == 0)
    r = forked((int)a);
  else if (strcmp(mode, "time") == 0)
    r = timed((int)a);
  else if (strcmp(mode, "badptr") == 0)
    r = badptr();
  else
    return fail("unknown mode");
  if (r == 0)
    printf("PASS %s\n", argv[2]);
  return r;
}
