// lab_alarm MODE TOKEN ARGS...: the graded checks of lab 12 (alarm: sigalarm and
// sigreturn, kernel/alarm.c). Prints "PASS TOKEN" only if every check of MODE held
// (labs/alarm/). The first four are MIT 6.1810's alarmtest, test0..test3, written anew.
//   once TOKEN TICKS          the handler runs at all (test0)
//   many TOKEN TICKS N        it runs N times, and the loop it interrupts, which calls
//                             a function that counts its calls, loses none (test1)
//   slow TOKEN TICKS MS       a handler that runs MS ms, through many ticks, is not
//                             entered again meanwhile (test2; in a child)
//   a0 TOKEN TICKS            sigreturn does not clobber the interrupted a0 (test3)
//   keep TOKEN TICKS MS N     the first time, the handler runs MS ms (more ticks than
//                             the interval) and keeps the alarm: N alarms all the same
//   regs TOKEN SEED TICKS LOOPS MIN
//                             every register survives the alarms that stop a spin of
//                             LOOPS x 64 instructions (at least MIN of them), whatever
//                             the handler does to them
//   count TOKEN TICKS LOOPS   alarms while spinning LOOPS x 64 instructions, then
//                             none after sigalarm(0, 0); prints "alarms N"
//   signals TOKEN TICKS MS    the alarm handler and signal handlers take turns: a
//                             signal sent while the alarm handler runs waits for its
//                             sigreturn, and an alarm due while a signal's handler
//                             runs (MS ms) waits for that one's
//   bad TOKEN ADDR            a handler at ADDR, which U cannot execute: the first
//                             alarm kills the process (a child) with a fault
//   refuse TOKEN              the calls that must fail: sigreturn with no handler
//                             running, negative ticks, an odd handler address
//   exec TOKEN TICKS MS       a handler that execs: the new image (mode afterexec,
//                             spinning MS ms) has no alarm and no handler frame
// Spins give up at a deadline, so a kernel whose alarm never fires fails, not hangs.
#include "user.h"

#include "xlen_asm.h"

static volatile long count;  // how many times a handler ran

static void fail(const char *what) { printf("FAIL: %s\n", what); }

// Spin loops * 64 instructions (one long block per iteration: cheap to emulate).
static void spin(long loops) {
  if (loops > 0)
    asm volatile("1: .rept 62\n nop\n .endr\n addi %0, %0, -1\n bnez %0, 1b"
                 : "+r"(loops));
}

// Spin for ms milliseconds of the clock (get_time's), a system call per 64,000
// instructions.
static void spin_ms(long ms) {
  uint64_t end = time_ms() + (uint64_t)ms;
  while (time_ms() < end)
    spin(1000);
}

// Wait, spinning, until count reaches n; 0 if it did before the deadline.
static int wait_count(long n, long ms) {
  uint64_t end = time_ms() + (uint64_t)ms;
  while (count < n) {
    if (time_ms() > end)
      return -1;
    spin(100);
  }
  return 0;
}

// Time to allow for n alarms of `ticks` ticks: ticks are 1 ms when graded
// (timer_hz=1000); ten times that, for a run at another rate.
static long allow_ms(long ticks, long n) { return 100 + 10 * ticks * n; }

static int set_alarm(long ticks, void (*handler)(void)) {
  int r = sigalarm((int)ticks, (void *)handler);
  if (r != 0)
    printf("FAIL: sigalarm(%ld, handler) returned %d\n", ticks, r);
  return r;
}

// The handler of most modes: count, print nothing, and resume.
static void periodic(void) {
  count++;
  sigreturn();
}

// ---- 6.1810's four ------------------------------------------------------------------

static void loud(void) {
  count++;
  printf("alarm!\n");
  sigreturn();
}

static int once(long ticks) {
  if (set_alarm(ticks, loud) != 0)
    return 1;
  int late = wait_count(1, allow_ms(ticks, 1));
  sigalarm(0, 0);
  if (late) {
    fail("the kernel never called the alarm handler");
    return 1;
  }
  return 0;
}

// Counts its calls through a pointer: if the handler returned anywhere but the
// interrupted instruction, or with a register changed, calls and count disagree.
static void __attribute__((noinline)) step(long i, long *calls) {
  if ((i & 0xffff) == 0)
    asm volatile("" ::: "memory");
  *calls += 1;
}

static int many(long ticks, long n) {
  long i, calls = 0;
  if (set_alarm(ticks, periodic) != 0)
    return 1;
  uint64_t end = time_ms() + (uint64_t)allow_ms(ticks, n);
  for (i = 0; count < n; i++) {
    if ((i & 0x3fff) == 0 && time_ms() > end)
      break;
    step(i, &calls);
  }
  sigalarm(0, 0);
  if (count < n) {
    printf("FAIL: the handler ran %ld times, not %ld\n", (long)count, n);
    return 1;
  }
  if (i != calls) {
    printf("FAIL: the loop called step() %ld times, but it counted %ld\n", i, calls);
    return 1;
  }
  return 0;
}

static long slow_ms;

static void slow_handler(void) {
  count++;
  if (count > 1) {
    fail("the alarm handler was entered again while it ran");
    exit(1);
  }
  spin_ms(slow_ms);  // many ticks, each of them due for an alarm
  sigalarm(0, 0);
  sigreturn();
}

static int slow(long ticks, long ms) {
  slow_ms = ms;
  int pid = fork(), status = -100;
  if (pid == 0) {
    if (set_alarm(ticks, slow_handler) != 0)
      exit(1);
    if (wait_count(1, allow_ms(ticks, 1) + 10 * ms)) {
      fail("the kernel never called the alarm handler");
      exit(1);
    }
    spin_ms(ms);  // still no second alarm: sigalarm(0, 0) stopped it
    exit(count == 1 ? 0 : 1);
  }
  if (pid < 0 || waitpid(pid, &status) != pid || status != 0) {
    printf("FAIL: the child failed (status %d)\n", status);
    return 1;
  }
  return 0;
}

// The first time, through many ticks; then quickly. The alarm stays set throughout.
static void keeping(void) {
  count++;
  if (count == 1)
    spin_ms(slow_ms);
  sigreturn();
}

static int keep(long ticks, long ms, long n) {
  slow_ms = ms;
  if (set_alarm(ticks, keeping) != 0)
    return 1;
  int late = wait_count(n, allow_ms(ticks, n) + 10 * ms);
  sigalarm(0, 0);
  if (late) {
    printf("FAIL: the handler ran %ld times, not %ld: did a slow handler stop the alarm?\n",
           (long)count, n);
    return 1;
  }
  return 0;
}

static volatile int stop_now;

static void stopping(void) {
  count++;
  sigalarm(0, 0);
  stop_now = 1;
  sigreturn();
}

static int a0_kept(long ticks) {
  uintptr_t a0, left = (uintptr_t)allow_ms(ticks, 1) * 20000;  // ~1 ms per 20,000
  if (set_alarm(ticks, stopping) != 0)
    return 1;
  // Nothing but the alarm changes stop_now; a0 must hold 0xac all along.
  asm volatile("li a0, 0xac\n"
               "1: lw t0, 0(%2)\n"
               "bnez t0, 2f\n"
               ".rept 40\n nop\n .endr\n"
               "addi %1, %1, -1\n"
               "bnez %1, 1b\n"
               "2: mv %0, a0\n"
               : "=&r"(a0), "+r"(left)
               : "r"(&stop_now)
               : "a0", "t0", "memory");
  if (!stop_now) {
    fail("the kernel never called the alarm handler");
    return 1;
  }
  if (a0 != 0xac) {
    printf("FAIL: a0 is %p after the alarm, expected 0xac\n", (void *)a0);
    return 1;
  }
  return 0;
}

// ---- every register ---------------------------------------------------------------

uintptr_t probe_pattern[32];  // what x1..x31 hold during the spin (a0: the count)
uintptr_t probe_after[32];    // what they held after it
uintptr_t probe_saved[32];    // the C caller's registers, put back before returning

// probe_alarm(loops): save what the C caller needs, load every register but sp, gp
// and tp (which keep their values: the handler needs a stack) from probe_pattern,
// count a0 down from loops, 64 instructions a step, then store every register into
// probe_after and return.
asm(".text\n"
    ".globl probe_alarm\n"
    "probe_alarm:\n"
    "  la t0, probe_saved\n"
    "  .irp r, 1,2,3,4,8,9,18,19,20,21,22,23,24,25,26,27\n"
    "  " ST " x\\r, \\r*" SZ "(t0)\n"
    "  .endr\n"
    "  la t0, probe_pattern\n"
    "  .irp r, 2,3,4\n"
    "  " ST " x\\r, \\r*" SZ "(t0)\n"
    "  .endr\n"
    "  la x31, probe_pattern\n"
    "  .irp r, 1,5,6,7,8,9,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30\n"
    "  " LD " x\\r, \\r*" SZ "(x31)\n"
    "  .endr\n"
    "  " LD " x31, 31*" SZ "(x31)\n"
    "1: .rept 62\n nop\n .endr\n"
    "  addi a0, a0, -1\n"
    "  bnez a0, 1b\n"
    "  la a0, probe_after\n"
    "  .irp r, 1,2,3,4,5,6,7,8,9,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,"
    "30,31\n"
    "  " ST " x\\r, \\r*" SZ "(a0)\n"
    "  .endr\n"
    "  la t0, probe_saved\n"
    "  .irp r, 1,2,3,4,8,9,18,19,20,21,22,23,24,25,26,27\n"
    "  " LD " x\\r, \\r*" SZ "(t0)\n"
    "  .endr\n"
    "  ret\n");
void probe_alarm(long loops);

static const char *const regname[32] = {
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0",
    "a1", "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5",
    "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"};

// Counts, then puts junk in every register it may before sigreturn: the kernel's
// saved copy must be what comes back.
static void clobbering(void) {
  count++;
  asm volatile("li t0, -1\n li t1, -1\n li t2, -1\n li t3, -1\n li t4, -1\n li t5, -1\n"
               "li t6, -1\n li a0, -1\n li a1, -1\n li a2, -1\n li a3, -1\n li a4, -1\n"
               "li a5, -1\n li a6, -1\n li a7, -1\n li s1, -1\n li s2, -1\n li s3, -1\n"
               "li s4, -1\n li s5, -1\n li s6, -1\n li s7, -1\n li s8, -1\n li s9, -1\n"
               "li s10, -1\n li s11, -1\n"
               ::: "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1", "a2", "a3", "a4",
               "a5", "a6", "a7", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",
               "s10", "s11");
  sigreturn();
}

static int regs(uint64_t seed, long ticks, long loops, long min) {
  srand(seed);
  for (int r = 1; r < 32; r++)
    probe_pattern[r] = (uintptr_t)rand64();
  if (set_alarm(ticks, clobbering) != 0)
    return 1;
  probe_alarm(loops);
  sigalarm(0, 0);
  int wrong = 0;
  for (int r = 1; r < 32; r++) {
    if (r == 10 || probe_after[r] == probe_pattern[r])
      continue;
    printf("FAIL: x%d (%s) is %p after the alarms, expected %p\n", r, regname[r],
           (void *)probe_after[r], (void *)probe_pattern[r]);
    wrong++;
  }
  if (probe_after[10] != 0) {
    printf("FAIL: the spin ended with a0 = %p, not 0\n", (void *)probe_after[10]);
    wrong++;
  }
  if (count < min) {
    printf("FAIL: the handler ran %ld times during the spin, expected at least %ld\n",
           (long)count, min);
    wrong++;
  }
  return wrong;
}

// ---- counting, and stopping --------------------------------------------------------

static int counted(long ticks, long loops) {
  if (set_alarm(ticks, periodic) != 0)
    return 1;
  spin(loops);
  if (sigalarm(0, 0) != 0) {
    fail("sigalarm(0, 0) did not return 0");
    return 1;
  }
  long seen = count;
  printf("alarms %ld\n", seen);
  spin(loops);  // as long again, with the alarm off
  if (count != seen) {
    printf("FAIL: %ld more alarms after sigalarm(0, 0)\n", (long)count - seen);
    return 1;
  }
  if (seen == 0) {
    fail("the kernel never called the alarm handler");
    return 1;
  }
  return 0;
}

// ---- alarms and signals ---------------------------------------------------------------

static volatile char order[16];  // what happened, a letter each
static volatile int events;
static long signal_ms;

static void note(char what) {
  if (events < (int)sizeof(order) - 1)
    order[events++] = what;
}

static void on_usr1(int signum) {
  (void)signum;
  note('U');
  sigreturn();
}

// The alarm handler sends itself SIGUSR1, which is caught: it must wait.
static void alarm_sends_usr1(void) {
  note('A');
  kill(getpid(), SIGUSR1);
  note('k');  // kill returned into this handler, not into on_usr1
  sigalarm(0, 0);
  sigreturn();  // on_usr1 runs on the way back, before the interrupted code goes on
}

static void alarm_after_signal(void) {
  note('B');
  sigalarm(0, 0);
  sigreturn();
}

// A signal's handler arms the alarm for every tick and runs through several.
static void on_usr2(int signum) {
  (void)signum;
  note('S');
  sigalarm(1, (void *)alarm_after_signal);
  spin_ms(signal_ms);
  note('s');
  sigreturn();  // the next tick enters alarm_after_signal
}

static int wait_events(int n, long ms) {
  uint64_t end = time_ms() + (uint64_t)ms;
  while (events < n && time_ms() <= end)
    spin(100);
  return events < n;
}

static int signals(long ticks, long ms) {
  struct sigaction usr1 = {.handler = (uintptr_t)on_usr1};
  struct sigaction usr2 = {.handler = (uintptr_t)on_usr2};
  signal_ms = ms;
  if (sigaction(SIGUSR1, &usr1, NULL) < 0 || sigaction(SIGUSR2, &usr2, NULL) < 0) {
    fail("sigaction");
    return 1;
  }
  if (set_alarm(ticks, alarm_sends_usr1) != 0)
    return 1;
  wait_events(3, allow_ms(ticks, 1));
  kill(getpid(), SIGUSR2);
  wait_events(6, allow_ms(1, 1) + 10 * ms);
  order[events] = 0;
  if (strcmp((const char *)order, "AkUSsB") != 0) {
    printf("FAIL: the handlers ran in the order %s, expected AkUSsB (A alarm, k its "
           "kill returned, U SIGUSR1, S SIGUSR2 entered, s left, B the alarm)\n",
           (const char *)order);
    return 1;
  }
  return 0;
}

// ---- hostile -------------------------------------------------------------------------

// A number, decimal, possibly negative, as an address (all 64 bits of it on RV64).
static uintptr_t address(const char *s) {
  int negative = *s == '-';
  uint64_t n = 0;
  for (s += negative; *s >= '0' && *s <= '9'; s++)
    n = n * 10 + (uint64_t)(*s - '0');
  return (uintptr_t)(negative ? -n : n);
}

static int bad(uintptr_t handler) {
  int pid = fork(), status = -100;
  if (pid == 0) {
    int r = sigalarm(1, (void *)handler);
    if (r != 0) {
      printf("FAIL: sigalarm(1, %p) returned %d\n", (void *)handler, r);
      exit(3);
    }
    spin_ms(allow_ms(1, 1));
    fail("the alarm never fired");
    exit(2);
  }
  if (pid < 0 || waitpid(pid, &status) != pid || status != EXIT_KILLED) {
    printf("FAIL: the child's status is %d, expected %d (killed)\n", status, EXIT_KILLED);
    return 1;
  }
  return 0;
}

static int refuse(void) {
  long r;
  if ((r = sigreturn()) != -1) {
    printf("FAIL: sigreturn() with no handler running returned %ld\n", r);
    return 1;
  }
  if (set_alarm(1, periodic) != 0)
    return 1;
  if (wait_count(1, allow_ms(1, 1))) {
    fail("the kernel never called the alarm handler");
    return 1;
  }
  // An alarm is set, its handler done: still nothing for sigreturn to end.
  if ((r = sigreturn()) != -1) {
    printf("FAIL: sigreturn() outside the handler returned %ld\n", r);
    return 1;
  }
  if ((r = sigalarm(-1, (void *)periodic)) != -1) {
    printf("FAIL: sigalarm(-1, handler) returned %ld\n", r);
    return 1;
  }
  if ((r = sigalarm(1, (void *)((uintptr_t)periodic + 1))) != -1) {
    printf("FAIL: sigalarm(1, an odd address) returned %ld\n", r);
    return 1;
  }
  if ((r = sigalarm(0, 0)) != 0) {
    printf("FAIL: sigalarm(0, 0) returned %ld\n", r);
    return 1;
  }
  if ((r = sigreturn()) != -1) {
    printf("FAIL: sigreturn() after sigalarm(0, 0) returned %ld\n", r);
    return 1;
  }
  return 0;
}

// ---- exec ------------------------------------------------------------------------------

static char *exec_argv[5];

static void execing(void) {
  count++;
  exec("lab_alarm", exec_argv);
  fail("exec from the alarm handler");
  exit(1);
}

static int exec_mode(long ticks, char *token, char *ms) {
  char *argv[] = {"lab_alarm", "afterexec", token, ms, NULL};
  memcpy(exec_argv, argv, sizeof(argv));
  if (set_alarm(ticks, execing) != 0)
    return 1;
  wait_count(1, allow_ms(ticks, 1));
  fail("the kernel never called the alarm handler");
  return 1;
}

// The new image: no alarm may arrive (the old one's handler is this program's
// execing(), at the same address), and no handler frame is left to return to.
static int afterexec(long ms) {
  spin_ms(ms);
  long r = sigreturn();
  if (count != 0 || r != -1) {
    printf("FAIL: after exec, %ld alarms and sigreturn() returned %ld\n", (long)count, r);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    printf("FAIL: usage: lab_alarm MODE TOKEN ARGS...\n");
    return 1;
  }
  const char *mode = argv[1];
  long a = argc > 3 ? atol(argv[3]) : 2, b = argc > 4 ? atol(argv[4]) : 10;
  long c = argc > 5 ? atol(argv[5]) : 100000, d = argc > 6 ? atol(argv[6]) : 1;
  int r;
  if (strcmp(mode, "once") == 0)
    r = once(a);
  else if (strcmp(mode, "many") == 0)
    r = many(a, b);
  else if (strcmp(mode, "slow") == 0)
    r = slow(a, b);
  else if (strcmp(mode, "a0") == 0)
    r = a0_kept(a);
  else if (strcmp(mode, "keep") == 0)
    r = keep(a, b, c);
  else if (strcmp(mode, "regs") == 0)
    r = regs((uint64_t)a, b, c, d);
  else if (strcmp(mode, "count") == 0)
    r = counted(a, b);
  else if (strcmp(mode, "signals") == 0)
    r = signals(a, b);
  else if (strcmp(mode, "bad") == 0 && argc > 3)
    r = bad(address(argv[3]));
  else if (strcmp(mode, "refuse") == 0)
    r = refuse();
  else if (strcmp(mode, "exec") == 0 && argc > 4)
    r = exec_mode(a, argv[2], argv[4]);
  else if (strcmp(mode, "afterexec") == 0)
    r = afterexec(a);
  else {
    printf("FAIL: unknown mode\n");
    return 1;
  }
  if (r == 0)
    printf("PASS %s\n", argv[2]);
  return r;
}
