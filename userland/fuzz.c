// fuzz [SEED] [COUNT]: the system-call fuzzer. Makes COUNT (default 3000) system
// calls with random numbers and arguments from a seeded PRNG (same seed, same calls),
// in a child process, then checks the kernel still forks, execs and schedules.
//
// A few calls would end the experiment rather than test the kernel, so they are
// tamed: exit is skipped; the fuzzing child closes its console descriptors first
// (a read would wait for input, a write would print garbage); read and write skip
// pipes (with both ends ours, an empty or full pipe would wait forever); munmap and
// negative sbrk leave our own image alone; and a forked child exits at once. Signals
// stay inside the fuzzing child: kill's pid, unless 0, becomes the child's own, and
// SIGKILL and SIGSTOP are never sent; every other signal is caught (by a handler that
// just returns) or ignored, since sigaction only ever gets one of those two actions,
// so no signal ends or stops the child. sigalarm only ever installs a handler that
// calls sigreturn, with a small tick count half the time. Files it creates land on the
// run's disk, which `privlab run` keeps in memory. Threads: a thread_create whose entry
// is in our own image starts a thread that exits at once instead (a thread running the
// fuzzer's code from a random place would fuzz without these rules); half the waittids
// ask for the last thread created (a random tid is almost never one); sleep sleeps at
// most 5 ms; a semaphore_down first ups the semaphore and a condvar_wait gets a mutex we
// cannot hold, since nothing else would ever wake them. Half the enable_deadlock_detect
// calls turn detection on or off, so mutex_lock and semaphore_down run the deadlock
// check on whatever state the fuzzer left.
#include "fs_gen.h"  // DIRSIZ
#include "user.h"

static uint8_t scratch[4096] __attribute__((aligned(4096)));

extern char _start[];  // the first byte of our text (userland/user.ld puts it first)
#define USER_TEXT ((long)(uintptr_t)_start)

// One byte longer than a directory entry holds (DIRSIZ, fs_gen.h).
#define TOO_LONG_NAME "a_name_one_byte_longer_than_any_directory_entry_can_hold_it_is_"
_Static_assert(sizeof(TOO_LONG_NAME) - 1 == DIRSIZ + 1, "TOO_LONG_NAME is DIRSIZ + 1 bytes");

// Paths the file-system calls can do something with (or must refuse: too long), none
// naming a program the check after fuzzing runs.
static const char *paths[] = {"f", "d", "d/f", "d/d2", "/", ".", "..", "../d",
                              "/d/../f", TOO_LONG_NAME, ""};

// Argument values likely to reach interesting kernel paths.
static long random_arg(void) {
  uint64_t r = rand64();
  switch (r % 12) {
  case 10: return (long)(uintptr_t)paths[(r >> 8) % (sizeof(paths) / sizeof(paths[0]))];
  case 11: return (long)((r >> 8) % 20);                       // a descriptor, or flags
  case 0: return 0;
  case 1: return -1;
  case 2: return (long)(r >> 8) % 4096;
  case 3: return (long)(uintptr_t)scratch + (long)((r >> 8) % 4096);
  case 4: return (long)KERNEL_ADDR + (long)((r >> 8) % 0x10000);
  case 5: return (long)TRAPFRAME_ADDR;
  case 6: return 0x10000000 + (long)((r >> 8) % 16) * 4096;  // mmap-able, page-aligned
  case 7: return (long)(r >> 1);
  case 8: return USER_TEXT;                                    // our text
  default: return (long)r;
  }
}

static const long known[] = SYSCALL_NUMBERS_INIT;  // from kernel/syscall.tbl

// Would read or write on fd wait for ever? (A pipe whose other end we hold.)
static int is_pipe(long fd) {
  struct stat st;
  return fstat((int)fd, &st) == 0 && (st.mode & S_IFMT) == S_IFIFO;
}

static long random_number(void) {
  uint64_t r = rand64();
  if (r % 2)
    return known[(r >> 1) % (sizeof(known) / sizeof(known[0]))];
  return (long)((r >> 1) % 600) - 50;
}

// What a thread the fuzzer creates does: exit with its argument.
static void thread_body(void *arg) { exit((int)(uintptr_t)arg); }

// The one handler the fuzzer installs: returning is as good as sigreturn.
static void on_signal(int signum) { (void)signum; }

// The one alarm handler it installs (kernel/alarm.c): it ends as an alarm handler must.
static void on_alarm(void) { sigreturn(); }

// The actions sigaction may install, for any signal: catch or ignore, any mask.
static struct sigaction tame_action;

static long tame_sigaction(long action) {
  if (action == 0)
    return 0;  // a query: harmless
  uint64_t r = rand64();
  tame_action.handler = r % 2 ? (uintptr_t)on_signal : SIG_IGN;
  tame_action.mask = (uint32_t)(r >> 8);
  return (long)(uintptr_t)&tame_action;
}

static int fuzz(uint64_t seed, int count) {
  srand(seed);
  long last_tid = 1;
  long image_end = sbrk(0);
  for (int fd = 0; fd < 3; fd++)
    close(fd);
  struct sigaction catch = {.handler = (uintptr_t)on_signal};
  for (int sig = 1; sig < NSIG; sig++)
    sigaction(sig, &catch, NULL);  // -1 for SIGKILL and SIGSTOP, which we never send
  for (int i = 0; i < count; i++) {
    long n = random_number(), a[6];
    for (int j = 0; j < 6; j++)
      a[j] = random_arg();
    if (n == SYS_exit || ((n == SYS_read || n == SYS_write) && is_pipe(a[0])))
      continue;
    if (n == SYS_kill) {
      if (rand64() % 2)
        a[1] = (long)(rand64() % NSIG);  // a signal number, half the time
      if ((int)a[1] == SIGKILL || (int)a[1] == SIGSTOP)
        continue;
      if (a[0] != 0)
        a[0] = getpid();  // no other process: ourselves, with the signal drawn
    }
    if (n == SYS_sigaction) {
      if (rand64() % 2)
        a[0] = (long)(rand64() % NSIG);
      a[1] = tame_sigaction(a[1]);
    }
    if (n == SYS_sigalarm) {
      if (rand64() % 2)
        a[0] = (long)(rand64() % 4);  // a tick count that fires, half the time
      a[1] = (long)(uintptr_t)on_alarm;
    }
    if (n == SYS_munmap && a[0] < 0x10000000)
      continue;
    if (n == SYS_thread_create && a[0] >= USER_TEXT && a[0] < image_end)
      a[0] = (long)(uintptr_t)thread_body;
    if (n == SYS_waittid && rand64() % 2)
      a[0] = last_tid;
    if (n == SYS_enable_deadlock_detect && rand64() % 2)
      a[0] = (long)(rand64() % 2);
    if (n == SYS_sleep)
      a[0] %= 6;
    if (n == SYS_semaphore_down)
      semaphore_up((int)a[0]);
    if (n == SYS_condvar_wait)
      a[1] = NMUTEX + (a[1] & 7);
    if (n == SYS_sbrk && a[0] < 0 && sbrk(0) + a[0] < image_end + 4096)
      continue;
    long r = syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
    if ((n == SYS_fork || n == SYS_spawn) && r == 0)
      exit(0);  // the fork child (spawn never returns 0 to us)
    if (n == SYS_fork && r > 0)
      waitpid((int)r, NULL);
    if (n == SYS_thread_create && r > 0)
      last_tid = r;
  }
  while (wait(NULL) > 0)  // spawned children
    ;
  return 0;
}

int main(int argc, char **argv) {
  uint64_t seed = argc > 1 ? (uint64_t)atol(argv[1]) : 1;
  int count = argc > 2 ? atoi(argv[2]) : 3000;
  int pid = fork(), status = -100;
  if (pid == 0)
    exit(fuzz(seed, count));
  waitpid(pid, &status);
  printf("fuzz: seed %lu, %d calls, fuzzer exited with %d\n", (unsigned long)seed, count, status);
  char *argv2[] = {"hello", "after", "fuzzing", NULL};
  int child = fork();
  if (child == 0) {
    exec("hello", argv2);
    exit(99);
  }
  int st = -1;
  waitpid(child, &st);
  printf("fuzz: kernel %s\n", st == 0 ? "survived" : "is broken");
  return st == 0 ? 0 : 1;
}
