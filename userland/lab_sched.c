// lab_sched MODE TOKEN ARGS...: the graded checks of lab 3 (spawn and stride
// scheduling, spawn.c and sched.c). Prints "PASS TOKEN" only if every check of MODE
// held (labs/stride/).
//   spawn TOKEN CODE     spawn "lab_sched child TOKEN CODE"; it exits with CODE
//   fresh TOKEN          a spawned child starts from a fresh image, not a copy
//   errors TOKEN         bad paths and argv give -1
//   priority TOKEN       set_priority's range
//   stride TOKEN MS P... fork one spinning child per priority P; sleep MS ms; exit.
//                        The grader counts the time slices each child got.
#include "user.h"

static volatile int marker;  // 0 in a fresh image

static int fail(const char *why) {
  printf("FAIL: %s\n", why);
  return 1;
}

static int spawned(const char *token, const char *code) {
  char *argv[] = {"lab_sched", "child", (char *)token, (char *)code, NULL};
  int status = -1, pid = spawn("lab_sched", argv);
  if (pid <= 0 || pid == getpid())
    return fail("spawn did not return a child's pid");
  if (waitpid(pid, &status) != pid)
    return fail("waitpid did not find the spawned child");
  if (status != atoi(code))
    return fail("the child's exit status did not come back");
  return 0;
}

static int fresh(const char *token) {
  marker = 1;
  char *argv[] = {"lab_sched", "marker", (char *)token, NULL};
  int status = -1, pid = spawn("lab_sched", argv);
  if (pid <= 0 || waitpid(pid, &status) != pid)
    return fail("spawn or waitpid failed");
  return status == 0 ? 0 : fail("the spawned child saw the parent's memory");
}

static int errors(void) {
  char *argv[] = {"hello", NULL};
  char *bad_argv[] = {"hello", (char *)KERNEL_ADDR, NULL};
  int bad = 0;
  bad += spawn("no-such-program", argv) != -1;
  bad += spawn((char *)KERNEL_ADDR, argv) != -1;
  bad += spawn(0, argv) != -1;
  bad += spawn("hello", (char **)KERNEL_ADDR) != -1;
  bad += spawn("hello", bad_argv) != -1;
  if (bad)
    return fail("a bad spawn did not return -1");
  int status = -1, pid = spawn("hello", argv);
  if (pid <= 0 || waitpid(pid, &status) != pid || status != 0)
    return fail("spawn failed after the bad calls");
  return 0;
}

static int priority(void) {
  int bad = 0;
  bad += set_priority(1) != -1;
  bad += set_priority(0) != -1;
  bad += set_priority(-7) != -1;
  bad += set_priority(2) != 2;
  bad += set_priority(1000) != 1000;
  return bad ? fail("set_priority returned the wrong value") : 0;
}

static int stride(long ms, int n, char **prios) {
  for (int i = 0; i < n; i++) {
    if (fork() == 0) {
      set_priority(atol(prios[i]));  // the grader finds this child by this call
      // Spin in one long basic block: the emulator's per-block cost stays small.
      asm volatile("1: .rept 200\n addi t0, t0, 1\n .endr\n j 1b" ::: "t0");
    }
  }
  sleep_ms((uint64_t)ms);
  return 0;  // powers off: the children never end
}

int main(int argc, char **argv) {
  if (argc < 3)
    return fail("usage: lab_sched MODE TOKEN ARGS...");
  const char *mode = argv[1];
  int r;
  if (strcmp(mode, "child") == 0) {
    printf("child %s\n", argv[2]);
    return argc > 3 ? atoi(argv[3]) : 0;
  } else if (strcmp(mode, "marker") == 0) {
    return marker;
  } else if (strcmp(mode, "spawn") == 0) {
    r = spawned(argv[2], argc > 3 ? argv[3] : "0");
  } else if (strcmp(mode, "fresh") == 0) {
    r = fresh(argv[2]);
  } else if (strcmp(mode, "errors") == 0) {
    r = errors();
  } else if (strcmp(mode, "priority") == 0) {
    r = priority();
  } else if (strcmp(mode, "stride") == 0) {
    r = stride(argc > 3 ? atol(argv[3]) : 100, argc - 4, argv + 4);
  } else {
    return fail("unknown mode");
  }
  if (r == 0)
    printf("PASS %s\n", argv[2]);
  return r;
}
