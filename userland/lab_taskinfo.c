// lab_taskinfo MODE TOKEN ARGS...: the graded checks of lab 1 (task_info, taskinfo.c).
// Prints "PASS TOKEN" only if every check of MODE held; otherwise a FAIL line saying
// what differed. The grader passes a fresh random TOKEN each run (labs/taskinfo/).
//   counts TOKEN N M   N getpid and M get_time calls, then task_info: exact counts
//   fork TOKEN N       a child's counts start at zero and are its own
//   time TOKEN MS      after spinning MS ms, time is MS-1..MS+10
//   clock TOKEN ROUNDS in each of ROUNDS fresh processes, get_time at once (t1), spin
//                      past 1..3 millisecond boundaries (t2), then task_info: time is
//                      at least t2 - t1 (one clock, kernel/clock.c)
//   late TOKEN MS      the parent spins MS ms, then forks: the child, first scheduled
//                      only then, calls task_info at once: its time is 0 or 1 (counted
//                      from its first run, not from boot or from its parent's)
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

// A get_time reading in whole milliseconds (as time_ms() gives it) and in microseconds.
static uint64_t ms_of(const struct timeval *tv) {
  return (uint64_t)tv->sec * 1000 + tv->usec / 1000;
}
static uint64_t us_of(const struct timeval *tv) { return (uint64_t)tv->sec * 1000000 + tv->usec; }

// In a process scheduled for the first time just now: read t1, spin until `crossings`
// millisecond boundaries have passed (t2), then task_info. Whatever the phase of t1
// within its millisecond, time (ms since first scheduled) must cover t2 - t1 as
// get_time shows it, in whole milliseconds and in microseconds rounded down.
static int one_clock(int round, uint64_t crossings) {
  struct timeval a, b;
  if (get_time(&a, 0) != 0)
    return fail("get_time returned non-zero");
  do {
    asm volatile(".rept 100\n nop\n .endr");  // work, between few system calls
    get_time(&b, 0);
  } while (ms_of(&b) < ms_of(&a) + crossings);
  if (task_info(&ti) != 0)
    return fail("task_info returned non-zero");
  uint64_t ms = ms_of(&b) - ms_of(&a), us = us_of(&b) - us_of(&a);
  if (ti.time >= ms && ti.time >= us / 1000)
    return 0;
  printf("FAIL: round %d: t2 - t1 = %lu ms (%lu us) by get_time, but task_info time = %lu\n",
         round, (unsigned long)ms, (unsigned long)us, (unsigned long)ti.time);
  return 1;
}

static int clock(int rounds) {
  int failed = 0;
  for (int r = 0; r < rounds; r++) {
    int pid = fork(), status = -1;
    if (pid == 0)
      exit(one_clock(r, (uint64_t)(r % 3 + 1)));
    if (pid < 0 || waitpid(pid, &status) != pid)
      return fail("fork or waitpid failed");
    failed += status != 0;
  }
  if (failed)
    return 1;
  printf("clock: %d rounds, time >= t2 - t1 in each\n", rounds);
  return 0;
}

static int late(int ms) {
  uint64_t end = time_ms() + ms;
  while (time_ms() < end)
    asm volatile(".rept 500\n nop\n .endr");
  int pid = fork(), status = -1;
  if (pid == 0) {
    if (task_info(&ti) != 0)
      exit(fail("task_info returned non-zero in the child"));
    printf("child: time = %lu ms, first scheduled after its parent spun %d ms\n",
           (unsigned long)ti.time, ms);
    exit(ti.time <= 1 ? 0 : fail("the child's time counts from before its first run"));
  }
  if (pid < 0 || waitpid(pid, &status) != pid)
    return fail("fork or waitpid failed");
  return status;
}

static int badptr(void) {
  int bad = 0;
  bad += task_info(0) != -1;
  bad += task_info((struct task_info *)KERNEL_ADDR) != -1;
  bad += task_info((struct task_info *)TRAPFRAME_ADDR) != -1;
  bad += task_info((struct task_info *)0x10000) != -1;  // our own text: not writable
  bad += task_info((struct task_info *)0x20000000) != -1;  // not mapped
  bad += task_info((struct task_info *)-1L) != -1;         // runs off the address space
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
  else if (strcmp(mode, "clock") == 0)
    r = clock((int)a);
  else if (strcmp(mode, "late") == 0)
    r = late((int)a);
  else if (strcmp(mode, "badptr") == 0)
    r = badptr();
  else
    return fail("unknown mode");
  if (r == 0)
    printf("PASS %s\n", argv[2]);
  return r;
}
