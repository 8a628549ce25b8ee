// sigtests [PREFIX...]: the signal tests (kernel/signal.c), in usertests' form: each
// case runs in its own child, prints "PASS name" or "FAIL name", and the last line
// gives the totals; the exit status is the number of failures. With arguments, runs
// only the cases whose names start with one of them.
#include "user.h"

#include "xlen_asm.h"

static volatile int caught;       // the signal number the last handler saw
static volatile int deliveries;   // how many times a handler ran

static void record(int signum) {
  caught = signum;
  deliveries++;
  sigreturn();
}

static int on(int signum, void (*handler)(int), uint32_t mask) {
  struct sigaction act = {.handler = (uintptr_t)handler, .mask = mask};
  return sigaction(signum, &act, NULL);
}

// A child that runs fn and exits with its result; returns that exit status.
static int in_child(int (*fn)(void)) {
  int pid = fork(), status = -100;
  if (pid == 0)
    exit(fn());
  if (pid < 0 || waitpid(pid, &status) != pid)
    return -101;
  return status;
}

// ---- every register, exactly ---------------------------------------------------------
//
// probe_kill(): save what the C caller needs, load x1 and x5..x31 from regs_before (so
// a0, a1, a7 make the call kill(pid, SIGUSR1)), ecall, and store x1..x31 into
// regs_after. The signal is delivered on the way back from that ecall, so whatever the
// handler does, the registers after the ecall must be regs_before's (a0: kill's 0).
uintptr_t regs_before[32], regs_after[32], regs_caller[32];

asm(".text\n"
    ".globl probe_kill\n"
    "probe_kill:\n"
    "  la t0, regs_caller\n"
    "  .irp r, 1,2,3,4,8,9,18,19,20,21,22,23,24,25,26,27\n"
    "  " ST " x\\r, \\r*" SZ "(t0)\n"
    "  .endr\n"
    "  la t0, regs_before\n"
    "  .irp r, 2,3,4\n"              // sp, gp, tp keep their values: expect those
    "  " ST " x\\r, \\r*" SZ "(t0)\n"
    "  .endr\n"
    "  la x31, regs_before\n"
    "  .irp r, 1,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,"
    "29,30\n"
    "  " LD " x\\r, \\r*" SZ "(x31)\n"
    "  .endr\n"
    "  " LD " x31, 31*" SZ "(x31)\n"
    "  ecall\n"
    "  addi sp, sp, -16\n"
    "  " ST " a0, 0(sp)\n"
    "  la a0, regs_after\n"
    "  .irp r, 1,3,4,5,6,7,8,9,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,"
    "29,30,31\n"
    "  " ST " x\\r, \\r*" SZ "(a0)\n"
    "  .endr\n"
    "  " LD " t0, 0(sp)\n"
    "  " ST " t0, 10*" SZ "(a0)\n"
    "  addi sp, sp, 16\n"
    "  " ST " sp, 2*" SZ "(a0)\n"
    "  la t0, regs_caller\n"
    "  .irp r, 1,2,3,4,8,9,18,19,20,21,22,23,24,25,26,27\n"
    "  " LD " x\\r, \\r*" SZ "(t0)\n"
    "  .endr\n"
    "  ret\n");
void probe_kill(void);

// Patterns in every register, kill ourselves with SIGUSR1 handled by handler, and
// count the registers that came back different.
static int registers_survive(void (*handler)(int), uint64_t seed) {
  if (on(SIGUSR1, handler, 0) < 0)
    return 100;
  srand(seed);
  for (int r = 1; r < 32; r++)
    regs_before[r] = (uintptr_t)rand64();
  regs_before[10] = (uintptr_t)getpid();
  regs_before[11] = SIGUSR1;
  regs_before[17] = SYS_kill;
  deliveries = 0;
  probe_kill();
  int wrong = deliveries == 1 ? 0 : 50;
  for (int r = 1; r < 32; r++)
    if (r != 10 && regs_after[r] != regs_before[r]) {
      printf("  x%d is %p, was %p\n", r, (void *)regs_after[r], (void *)regs_before[r]);
      wrong++;
    }
  return wrong + (regs_after[10] != 0);
}

// Clobbers every register it may, then sigreturn()s from inside the mess.
static void clobbering_handler(int signum) {
  deliveries++;
  asm volatile("li t0, -1\n li t1, -1\n li t2, -1\n li t3, -1\n li t4, -1\n li t5, -1\n"
               "li t6, -1\n li a2, -1\n li a3, -1\n li a4, -1\n li a5, -1\n li a6, -1\n"
               "li s1, -1\n li s2, -1\n li s3, -1\n li s4, -1\n li s5, -1\n li s6, -1\n"
               "li s7, -1\n li s8, -1\n li s9, -1\n li s10, -1\n li s11, -1\n"
               ::: "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a2", "a3", "a4", "a5", "a6",
               "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11");
  (void)signum;
  sigreturn();
}

static int registers_after_a_handler(void) { return registers_survive(clobbering_handler, 1); }

// A handler that returns, rather than calling sigreturn(): its ra leads back too.
static void returning_handler(int signum) {
  deliveries++;
  caught = signum;
}

static int handler_may_return(void) { return registers_survive(returning_handler, 2); }

// Hostile: overwrite the 2 KiB below the interrupted sp (the handler's own frame, and
// where a kernel that kept its saved registers on the user stack would keep them),
// put junk in every register, sp included, and sigreturn. The kernel's copy is out of
// reach, so the probe still sees every register exactly.
static void smashing_handler(int signum) {
  (void)signum;
  deliveries++;
  asm volatile("la t0, regs_before\n"
               LD " t1, 2*" SZ "(t0)\n"
               "addi t2, t1, -2048\n"
               "li t3, 0x5a5a5a5a\n"
               "1: " ST " t3, 0(t2)\n"
               "addi t2, t2, " SZ "\n"
               "bltu t2, t1, 1b\n"
               ".irp r, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,18,19,20,21,22,23,24,25,"
               "26,27,28,29,30,31\n"
               "li x\\r, 0x5a5a5a5a\n"
               ".endr\n"
               "li a7, %0\n"
               "ecall\n" ::"i"(SYS_sigreturn));
  __builtin_unreachable();
}

static int handler_smashes_stack(void) { return registers_survive(smashing_handler, 3); }

// Signals arrive at whatever instruction a timer interrupt stopped: a loop that keeps
// everything in registers must give the same result as without them. The parent
// sends SIGUSR1 three times, once per time slice of ours.
static uint64_t mix(uint64_t n) {
  uint64_t x = 1, y = 7;
  for (uint64_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ull + i;
    y ^= x >> 7;
    asm volatile("" : "+r"(x), "+r"(y));  // keep the loop, in registers
  }
  return x ^ y;
}

// Loop until `signals` handlers have run, telling fd of each one (after the handler,
// between two steps of the loop, which a system call there does not disturb): the
// parent sends the next signal only then, since signals sent before the last one was
// delivered would merge with it. (On one hart the parent's yield() gives us our time
// slice; on several we run meanwhile, and kill() interrupts our hart.)
static uint64_t mix_until(int signals, uint64_t *n, int fd) {
  uint64_t x = 1, y = 7, i = 0;
  int seen = 0;
  for (; seen < signals; i++) {
    x = x * 6364136223846793005ull + i;
    y ^= x >> 7;
    asm volatile("" : "+r"(x), "+r"(y));
    if (deliveries != seen) {
      seen = deliveries;
      write(fd, "d", 1);
    }
  }
  *n = i;
  return x ^ y;
}

static int interrupted_loop_continues(void) {
  int fds[2];
  if (pipe(fds) < 0)
    return 1;
  int pid = fork();
  if (pid == 0) {
    on(SIGUSR1, clobbering_handler, 0);
    write(fds[1], "r", 1);
    uint64_t n, got = mix_until(3, &n, fds[1]);
    sigprocmask(SIGBIT(SIGUSR1));  // nothing may interrupt the reference run
    exit(got == mix(n) ? 0 : 1);
  }
  char c;
  if (pid < 0 || read(fds[0], &c, 1) != 1)
    return 2;
  for (int k = 0; k < 3; k++) {
    kill(pid, SIGUSR1);
    yield();  // on one hart: the child runs a time slice, entering the handler first
    if (read(fds[0], &c, 1) != 1)  // the handler has run
      return 4;
  }
  int status = -1;
  return waitpid(pid, &status) == pid ? status : 3;
}

// ---- delivery ------------------------------------------------------------------------

static int handler_gets_signum(void) {
  caught = 0;
  if (on(SIGUSR2, record, 0) < 0 || kill(getpid(), SIGUSR2) != 0)
    return 1;
  return caught == SIGUSR2 ? 0 : 2;  // delivered before kill() returned to us
}

static int mask_blocks_until_unmasked(void) {
  caught = 0;
  on(SIGUSR1, record, 0);
  if (sigprocmask(SIGBIT(SIGUSR1)) != 0 || kill(getpid(), SIGUSR1) != 0)
    return 1;
  if (caught != 0)
    return 2;  // delivered although blocked
  if (sigprocmask(0) != SIGBIT(SIGUSR1))
    return 3;
  return caught == SIGUSR1 ? 0 : 4;  // delivered as the unblocking call returned
}

static int sigprocmask_returns_old_mask(void) {
  if (sigprocmask(0xffffffffu) != 0)
    return 1;
  long all = sigprocmask(0);  // every signal but 0, SIGKILL and SIGSTOP was blocked
  return all == (long)(0xfffffffeu & ~(SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))) ? 0 : 2;
}

// While a handler runs, its signal waits, and so do those in the action's mask: the
// handler sends itself SIGUSR1 and SIGTERM, reports "1", and sigreturns; the second
// SIGUSR1 then runs the handler again ("2"), and only after that sigreturn does
// SIGTERM end the process.
static int report_fd = -1;

static void nests_nothing(int signum) {
  deliveries++;
  write(report_fd, deliveries == 1 ? "1" : "2", 1);
  if (deliveries == 1) {
    kill(getpid(), signum);   // waits: this handler's own signal
    kill(getpid(), SIGTERM);  // waits: the action's mask
  }
  sigreturn();
}

static int handler_blocks_its_signal(void) {
  int fds[2], status = -1;
  if (pipe(fds) < 0)
    return 1;
  int pid = fork();
  if (pid == 0) {
    report_fd = fds[1];
    on(SIGUSR1, nests_nothing, SIGBIT(SIGTERM));
    kill(getpid(), SIGUSR1);
    exit(1);  // not reached: SIGTERM ends us first
  }
  close(fds[1]);
  char got[4] = {0};
  int n = 0, r;
  while (n < 3 && (r = read(fds[0], got + n, 1)) == 1)
    n++;
  if (waitpid(pid, &status) != pid || status != EXIT_SIGNALED(SIGTERM))
    return 2;
  return strcmp(got, "12") == 0 ? 0 : 3;
}

static int ignored_and_default_ignored(void) {
  struct sigaction ign = {.handler = SIG_IGN};
  if (sigaction(SIGUSR1, &ign, NULL) != 0 || kill(getpid(), SIGUSR1) != 0)
    return 1;
  return kill(getpid(), SIGCHLD) == 0 && kill(getpid(), SIGWINCH) == 0 ? 0 : 2;
}

static int term_self(void) {
  kill(getpid(), SIGTERM);
  return 1;  // not reached
}

static int default_terminates(void) {
  return in_child(term_self) == EXIT_SIGNALED(SIGTERM) ? 0 : 1;
}

static int fork_keeps_handlers(void) {
  caught = 0;
  on(SIGUSR2, record, 0);
  int pid = fork(), status = -1;
  if (pid == 0) {
    kill(getpid(), SIGUSR2);
    exit(caught == SIGUSR2 ? 0 : 1);
  }
  return waitpid(pid, &status) == pid && status == 0 && caught == 0 ? 0 : 1;
}

// exec resets caught signals to SIG_DFL and keeps ignored ones: checked by
// `sigtests --after-exec` (main).
static int exec_resets_handlers(void) {
  struct sigaction ign = {.handler = SIG_IGN};
  on(SIGUSR1, record, 0);
  sigaction(SIGUSR2, &ign, NULL);
  char *argv[] = {"sigtests", "--after-exec", NULL};
  exec("sigtests", argv);
  return 1;
}

static int after_exec(void) {
  struct sigaction usr1, usr2;
  if (sigaction(SIGUSR1, NULL, &usr1) != 0 || sigaction(SIGUSR2, NULL, &usr2) != 0)
    return 1;
  return usr1.handler == SIG_DFL && usr2.handler == SIG_IGN ? 0 : 2;
}

// ---- between processes -----------------------------------------------------------------

static void exit_from_handler(int signum) { exit(signum); }

static int kill_another_process(void) {
  int fds[2], status = -1;
  if (pipe(fds) < 0)
    return 1;
  int pid = fork();
  if (pid == 0) {
    on(SIGUSR1, exit_from_handler, 0);
    write(fds[1], "r", 1);
    for (;;)
      yield();
  }
  char c;
  if (read(fds[0], &c, 1) != 1 || kill(pid, SIGUSR1) != 0)
    return 2;
  return waitpid(pid, &status) == pid && status == SIGUSR1 ? 0 : 3;
}

// A child that blocks in read() on a pipe nobody writes: SIGKILL must end the wait.
static int sigkill_ends_pipe_read(void) {
  int fds[2], status = -1;
  if (pipe(fds) < 0)
    return 1;
  int pid = fork();
  if (pid == 0) {
    char c;
    read(fds[0], &c, 1);
    exit(2);
  }
  sleep_ms(20);  // long enough to be asleep in piperead
  if (kill(pid, SIGKILL) != 0)
    return 3;
  return waitpid(pid, &status) == pid && status == EXIT_SIGNALED(SIGKILL) ? 0 : 4;
}

// A child asleep in waitpid() for a grandchild that waits on a pipe: SIGKILL ends the
// child's wait; its exit closes the pipe's last write end, and the grandchild sees
// end of file and exits too.
static int sigkill_ends_waitpid(void) {
  int ready[2], status = -1;
  if (pipe(ready) < 0)
    return 1;
  int pid = fork();
  if (pid == 0) {
    int hold[2];
    pipe(hold);
    if (fork() == 0) {
      char c;
      close(hold[1]);
      exit(read(hold[0], &c, 1) == 0 ? 0 : 1);
    }
    write(ready[1], "r", 1);
    waitpid(-1, NULL);
    exit(2);
  }
  char c;
  if (read(ready[0], &c, 1) != 1)
    return 3;
  sleep_ms(20);
  if (kill(pid, SIGKILL) != 0)
    return 4;
  return waitpid(pid, &status) == pid && status == EXIT_SIGNALED(SIGKILL) ? 0 : 5;
}

// SIGSTOP stops a child until SIGCONT: it sees at least the time its parent waited.
static int stop_and_continue(void) {
  int status = -1, pid = fork();
  if (pid == 0) {
    uint64_t before = time_ms();
    kill(getpid(), SIGSTOP);
    exit(time_ms() - before >= 30 ? 0 : 1);
  }
  sleep_ms(40);
  if (kill(pid, SIGCONT) != 0)
    return 2;
  return waitpid(pid, &status) == pid ? status : 3;
}

static int sigkill_ends_stopped(void) {
  int status = -1, pid = fork();
  if (pid == 0) {
    kill(getpid(), SIGSTOP);
    exit(1);
  }
  sleep_ms(10);
  kill(pid, SIGKILL);
  return waitpid(pid, &status) == pid && status == EXIT_SIGNALED(SIGKILL) ? 0 : 1;
}

// ---- what must fail ------------------------------------------------------------------

static int kill_errors(void) {
  int me = getpid(), bad = 0;
  bad += kill(123456, SIGUSR1) != -1;
  bad += kill(-1, SIGUSR1) != -1;
  bad += kill(me, NSIG) != -1;
  bad += kill(me, -1) != -1;
  bad += kill(me, 0) != 0;        // only asks whether we exist
  bad += kill(123456, 0) != -1;
  return bad;
}

static int sigaction_errors(void) {
  struct sigaction act = {.handler = (uintptr_t)record}, old;
  int bad = 0;
  bad += sigaction(SIGKILL, &act, &old) != -1;
  bad += sigaction(SIGSTOP, &act, NULL) != -1;
  bad += sigaction(SIGKILL, NULL, &old) != -1;
  bad += sigaction(0, &act, &old) != -1;
  bad += sigaction(NSIG, &act, &old) != -1;
  bad += sigaction(SIGUSR1, (struct sigaction *)KERNEL_ADDR, &old) != -1;
  bad += sigaction(SIGUSR1, &act, (struct sigaction *)KERNEL_ADDR) != -1;
  bad += sigaction(SIGUSR1, (struct sigaction *)TRAPFRAME_ADDR, NULL) != -1;
  // The failed calls changed nothing: the action is still the default.
  bad += sigaction(SIGUSR1, NULL, &old) != 0 || old.handler != SIG_DFL;
  // rCore's user_sig_test_restore: set, then put the old one back and get ours.
  struct sigaction mine;
  bad += sigaction(SIGUSR1, &act, &old) != 0 || sigaction(SIGUSR1, &old, &mine) != 0;
  bad += mine.handler != act.handler;
  return bad;
}

static int sigreturn_without_signal(void) { return sigreturn() == -1 ? 0 : 1; }

// ---- the table -------------------------------------------------------------------------

struct test {
  const char *name;
  int (*fn)(void);  // 0 is a pass
};

static const struct test tests[] = {
    {"handler_gets_signum", handler_gets_signum},
    {"registers_after_a_handler", registers_after_a_handler},
    {"handler_may_return", handler_may_return},
    {"handler_smashes_stack", handler_smashes_stack},
    {"interrupted_loop_continues", interrupted_loop_continues},
    {"mask_blocks_until_unmasked", mask_blocks_until_unmasked},
    {"sigprocmask_returns_old_mask", sigprocmask_returns_old_mask},
    {"handler_blocks_its_signal", handler_blocks_its_signal},
    {"ignored_signals", ignored_and_default_ignored},
    {"default_terminates", default_terminates},
    {"fork_keeps_handlers", fork_keeps_handlers},
    {"exec_resets_handlers", exec_resets_handlers},
    {"kill_another_process", kill_another_process},
    {"sigkill_ends_pipe_read", sigkill_ends_pipe_read},
    {"sigkill_ends_waitpid", sigkill_ends_waitpid},
    {"stop_and_continue", stop_and_continue},
    {"sigkill_ends_stopped", sigkill_ends_stopped},
    {"kill_errors", kill_errors},
    {"sigaction_errors", sigaction_errors},
    {"sigreturn_without_signal", sigreturn_without_signal},
};

static const char *case_name(unsigned i) {
  return tests[i].name;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--after-exec") == 0)
    return after_exec();
  if (refuse_unknown_cases("sigtests", argc, argv, case_name,
                           sizeof(tests) / sizeof(tests[0])))
    return 2;
  int passed = 0, failed = 0;
  for (unsigned i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
    if (!test_selected(tests[i].name, argc, argv))
      continue;
    int status = in_child(tests[i].fn);
    printf("%s %s\n", status == 0 ? "PASS" : "FAIL", tests[i].name);
    status == 0 ? passed++ : failed++;
  }
  printf("sigtests: %d passed, %d failed\n", passed, failed);
  return failed;
}
