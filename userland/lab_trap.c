// lab_trap MODE TOKEN ARGS...: the graded checks of lab 6 (trap entry and exit,
// trampoline.S and trap.c). Prints "PASS TOKEN" only if every check of MODE held
// (labs/trap/).
//   syscall TOKEN SEED        every register but a0 survives getpid and yield
//   timer TOKEN SEED LOOPS    every register survives timer interrupts in a spin loop
//   spin TOKEN MS             a child spinning forever cannot keep its parent from
//                             running: the parent sleeps MS ms, then exits
// The register modes run in two processes at once (different patterns), so a
// register the trap path forgets shows the other process's value.
#include "user.h"

#include "xlen_asm.h"

uintptr_t probe_pattern[32];  // what x1..x31 hold before the trap
uintptr_t probe_after[32];    // what they held after it (a0 not kept)
uintptr_t probe_saved[32];    // the C caller's registers, put back before returning

// probe_ecall(): load every register from probe_pattern (so a7 is the system call
// number), ecall, store every register into probe_after. probe_spin(): the same, but
// count a0 down to zero (64 instructions a step) instead. Both preserve what the C caller needs.
asm(".macro PROBE_ENTER\n"
    "  la t0, probe_saved\n"
    "  .irp r, 1,2,3,4,8,9,18,19,20,21,22,23,24,25,26,27\n"
    "  " ST " x\\r, \\r*" SZ "(t0)\n"
    "  .endr\n"
    "  la x31, probe_pattern\n"
    "  .irp r, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,"
    "28,29,30\n"
    "  " LD " x\\r, \\r*" SZ "(x31)\n"
    "  .endr\n"
    "  " LD " x31, 31*" SZ "(x31)\n"
    ".endm\n"
    ".macro PROBE_LEAVE\n"
    "  la x10, probe_after\n"
    "  .irp r, 1,2,3,4,5,6,7,8,9,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,"
    "30,31\n"
    "  " ST " x\\r, \\r*" SZ "(x10)\n"
    "  .endr\n"
    "  la t0, probe_saved\n"
    "  .irp r, 1,2,3,4,8,9,18,19,20,21,22,23,24,25,26,27\n"
    "  " LD " x\\r, \\r*" SZ "(t0)\n"
    "  .endr\n"
    "  ret\n"
    ".endm\n"
    ".text\n"
    ".globl probe_ecall\n"
    "probe_ecall:\n"
    "  PROBE_ENTER\n"
    "  ecall\n"
    "  PROBE_LEAVE\n"
    ".globl probe_spin\n"
    "probe_spin:\n"
    "  PROBE_ENTER\n"
    "1: .rept 62\n nop\n .endr\n"  // one long block per iteration: cheap to emulate
    "  addi a0, a0, -1\n"
    "  bnez a0, 1b\n"
    "  PROBE_LEAVE\n");
void probe_ecall(void);
void probe_spin(void);

static const char *const regname[32] = {
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0",
    "a1", "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5",
    "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"};

static void fill(uint64_t seed) {
  srand(seed);
  for (int r = 1; r < 32; r++)
    probe_pattern[r] = (uintptr_t)rand64();
}

// How many registers (besides a0) differ after the probe; prints each.
static int compare(const char *what) {
  int wrong = 0;
  for (int r = 1; r < 32; r++) {
    if (r == 10 || probe_after[r] == probe_pattern[r])
      continue;
    printf("FAIL: x%d (%s) is %p after %s, expected %p\n", r, regname[r],
           (void *)probe_after[r], what, (void *)probe_pattern[r]);
    wrong++;
  }
  return wrong;
}

static int syscalls(uint64_t seed) {
  for (int round = 0; round < 20; round++) {
    fill(seed + round);
    probe_pattern[17] = round % 2 ? SYS_yield : SYS_getpid;  // a7: the number
    probe_ecall();
    if (compare(round % 2 ? "yield" : "getpid"))
      return 1;
  }
  return 0;
}

static int timer(uint64_t seed, long loops) {
  for (int round = 0; round < 3; round++) {
    fill(seed + round);
    probe_pattern[10] = (uintptr_t)loops;  // a0: the loop count
    probe_spin();
    if (compare("spinning through timer interrupts"))
      return 1;
  }
  return 0;
}

// Run check(seed) in this process and in a child (seed + 1000) at the same time.
static int both(int (*check)(uint64_t, long), uint64_t seed, long arg) {
  int pid = fork(), status = -1;
  if (pid == 0)
    exit(check(seed + 1000, arg));
  if (pid < 0)
    return 1;
  int mine = check(seed, arg);
  if (waitpid(pid, &status) != pid || status != 0) {
    printf("FAIL: the child's registers changed (status %d)\n", status);
    return 1;
  }
  return mine;
}

static int syscalls_check(uint64_t seed, long unused) {
  (void)unused;
  return syscalls(seed);
}

static int spin(long ms) {
  if (fork() == 0)
    asm volatile("1: .rept 200\n nop\n .endr\n j 1b");
  sleep_ms((uint64_t)ms);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    printf("FAIL: usage: lab_trap MODE TOKEN ARGS...\n");
    return 1;
  }
  const char *mode = argv[1];
  long a = argc > 3 ? atol(argv[3]) : 1, b = argc > 4 ? atol(argv[4]) : 1000000;
  int r;
  if (strcmp(mode, "syscall") == 0) {
    r = both(syscalls_check, (uint64_t)a, 0);
  } else if (strcmp(mode, "timer") == 0) {
    r = both(timer, (uint64_t)a, b);
  } else if (strcmp(mode, "spin") == 0) {
    r = spin(a);
  } else {
    printf("FAIL: unknown mode\n");
    return 1;
  }
  if (r == 0)
    printf("PASS %s\n", argv[2]);
  return r;
}
