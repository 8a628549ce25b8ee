// threadtests [PREFIX...]: the thread and synchronisation tests (kernel/thread.c,
// kernel/sync.c, sleep in kernel/clock.c), in usertests' form: each case runs in its
// own child process, prints "PASS name" or "FAIL name", and the last line gives the
// totals; the exit status is the number of failures. With arguments, runs only the
// cases whose names start with one of them.
#include "user.h"

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      printf("  check failed, line %d: %s\n", __LINE__, #cond);              \
      return 1;                                                              \
    }                                                                        \
  } while (0)

// A child that runs fn and exits with its result; returns that exit status.
static int in_child(int (*fn)(void)) {
  int pid = fork(), status = -100;
  if (pid == 0)
    exit(fn());
  if (pid < 0 || waitpid(pid, &status) != pid)
    return -101;
  return status;
}

static void spin(long n) {
  for (volatile long i = 0; i < n; i++)
    ;
}

// ---- creation, ids, exit --------------------------------------------------------

static volatile int seen_pid[8], seen_tid[8];

static void report_ids(void *arg) {
  int i = (int)(uintptr_t)arg;
  seen_pid[i] = getpid();
  seen_tid[i] = gettid();
  exit(10 + i);
}

static int ids_and_exit_codes(void) {
  CHECK(gettid() == 0);
  int tids[3];
  for (int i = 0; i < 3; i++)
    tids[i] = thread_create(report_ids, (void *)(uintptr_t)i);
  for (int i = 0; i < 3; i++) {
    CHECK(tids[i] == i + 1);  // the lowest free ids, in order
    CHECK(waittid(tids[i]) == 10 + i);
    CHECK(seen_pid[i] == getpid());
    CHECK(seen_tid[i] == tids[i]);
  }
  return 0;
}

static int returns_its_value(void *arg) { return (int)(uintptr_t)arg * 3; }

static int thread_function_may_return(void) {
  int tid = thread_create(returns_its_value, (void *)14);
  CHECK(tid == 1);
  CHECK(waittid(tid) == 42);
  return 0;
}

static volatile int waiter_result = -100;

static void wait_for_main(void *arg) {
  (void)arg;
  waiter_result = waittid(gettid());  // itself
  exit(0);
}

static int waittid_errors(void) {
  CHECK(waittid(0) == -1);   // the caller itself
  CHECK(waittid(1) == -1);   // no such thread
  CHECK(waittid(-1) == -1);
  CHECK(waittid(NTHREAD) == -1);
  int tid = thread_create(wait_for_main, 0);
  CHECK(waittid(tid) == 0);
  CHECK(waiter_result == -1);
  CHECK(waittid(tid) == -1);  // collected already
  return 0;
}

static int create_errors(void) {
  CHECK(thread_create(0, 0) == -1);                       // not user text
  CHECK(thread_create((void *)KERNEL_ADDR, 0) == -1);
  CHECK(thread_create((void *)&seen_pid[0], 0) == -1);    // data, not executable
  return 0;
}

static void park(void *arg) {
  (void)arg;
  for (;;)
    sleep(1000);
}

static int at_most_nthread(void) {
  for (int i = 1; i < NTHREAD; i++)
    CHECK(thread_create(park, 0) == i);
  CHECK(thread_create(park, 0) == -1);  // every tid in use
  return 0;                             // exiting ends the parked threads
}

static void quick(void *arg) { exit((int)(uintptr_t)arg); }

static int tids_are_reused_after_waittid(void) {
  for (int round = 0; round < 3 * NTHREAD; round++) {
    int tid = thread_create(quick, (void *)(uintptr_t)round);
    CHECK(tid == 1);
    CHECK(waittid(tid) == round);
  }
  return 0;
}

// ---- threads share the address space and files; the process ends with main -------

static volatile long shared_counter;
static int pipe_fds[2];

static void write_and_count(void *arg) {
  shared_counter += (long)(uintptr_t)arg;
  exit(write(pipe_fds[1], "t", 1) == 1 ? 0 : 1);  // a descriptor opened by main
}

static int threads_share_memory_and_files(void) {
  CHECK(pipe(pipe_fds) == 0);
  int a = thread_create(write_and_count, (void *)5), b = thread_create(write_and_count, (void *)7);
  CHECK(waittid(a) == 0 && waittid(b) == 0);
  CHECK(shared_counter == 12);
  char buf[4];
  CHECK(read(pipe_fds[0], buf, 2) == 2 && buf[0] == 't' && buf[1] == 't');
  return 0;
}

static void block_in_pipe(void *arg) {
  (void)arg;
  char c;
  read(pipe_fds[0], &c, 1);  // nobody writes: only the process's end stops this
  exit(1);
}

static void spin_forever(void *arg) {
  (void)arg;
  for (;;)
    spin(1000);
}

static int main_exit_ends_every_thread_body(void) {
  CHECK(pipe(pipe_fds) == 0);
  CHECK(thread_create(block_in_pipe, 0) == 1);
  CHECK(thread_create(spin_forever, 0) == 2);
  CHECK(thread_create(park, 0) == 3);
  yield();
  sleep(5);  // let them reach their waits
  return 7;  // main returns: the process ends with 7, whatever its threads do
}

static int main_exit_ends_every_thread(void) {
  CHECK(in_child(main_exit_ends_every_thread_body) == 7);
  return 0;
}

static void fault_in_thread(void *arg) {
  (void)arg;
  *(volatile int *)16 = 1;  // no page there
  exit(0);
}

static int fault_in_thread_body(void) {
  CHECK(thread_create(park, 0) == 1);
  CHECK(thread_create(fault_in_thread, 0) == 2);
  waittid(1);  // cut short when thread 2's fault ends the process
  return 0;    // not reached
}

static int a_fault_in_a_thread_kills_the_process(void) {
  CHECK(in_child(fault_in_thread_body) == EXIT_KILLED);
  return 0;
}

static int sigkill_body(void) {
  CHECK(thread_create(spin_forever, 0) == 1);
  CHECK(thread_create(park, 0) == 2);
  CHECK(write(pipe_fds[1], "r", 1) == 1);  // ready
  waittid(2);
  return 0;
}

static int sigkill_ends_every_thread(void) {
  CHECK(pipe(pipe_fds) == 0);
  int pid = fork(), status = 0;
  if (pid == 0)
    exit(sigkill_body());
  char c;
  CHECK(read(pipe_fds[0], &c, 1) == 1);
  CHECK(kill(pid, SIGKILL) == 0);
  CHECK(waitpid(pid, &status) == pid);
  CHECK(status == EXIT_SIGNALED(SIGKILL));
  return 0;
}

static int exec_refused_with_threads(void) {
  CHECK(thread_create(park, 0) == 1);
  char *argv[] = {"hello", 0};
  CHECK(exec("hello", argv) == -1);
  return 0;
}

static volatile int forked_child_tid = -1;

static void fork_from_thread(void *arg) {
  (void)arg;
  int pid = fork();
  if (pid == 0)
    exit(gettid() == 0 && waittid(1) == -1 ? 33 : 34);  // the child has one thread
  int status = 0;
  forked_child_tid = waitpid(pid, &status) == pid ? status : -1;
  exit(0);
}

static int fork_in_a_thread_copies_that_thread(void) {
  CHECK(waittid(thread_create(fork_from_thread, 0)) == 0);
  CHECK(forked_child_tid == 33);
  return 0;
}

// ---- mutexes ----------------------------------------------------------------------

static int mutex_id;
static volatile long racy;

// Read, wait, write: without the mutex, another thread's update in between is lost.
static void add_with_mutex(void *arg) {
  for (int i = 0; i < 20; i++) {
    mutex_lock(mutex_id);
    long v = racy;
    yield();
    racy = v + 1;
    mutex_unlock(mutex_id);
  }
  exit((int)(uintptr_t)arg);
}

static int mutex_excludes(int blocking) {
  CHECK((mutex_id = mutex_create(blocking)) == 0);
  int tids[4];
  for (int i = 0; i < 4; i++)
    tids[i] = thread_create(add_with_mutex, (void *)(uintptr_t)i);
  for (int i = 0; i < 4; i++)
    CHECK(waittid(tids[i]) == i);
  CHECK(racy == 80);
  return 0;
}

static int blocking_mutex_excludes(void) { return mutex_excludes(1); }
static int spin_mutex_excludes(void) { return mutex_excludes(0); }

static void add_without_mutex(void *arg) {
  (void)arg;
  for (int i = 0; i < 20; i++) {
    long v = racy;
    yield();
    racy = v + 1;
  }
  exit(0);
}

static int without_a_mutex_updates_are_lost(void) {
  int a = thread_create(add_without_mutex, 0), b = thread_create(add_without_mutex, 0);
  CHECK(waittid(a) == 0 && waittid(b) == 0);
  CHECK(racy < 40);  // the test above means something
  return 0;
}

static int mutex_errors(void) {
  int m = mutex_create(1);
  CHECK(m == 0 && mutex_create(0) == 1);
  CHECK(mutex_lock(5) == -1 && mutex_unlock(5) == -1 && mutex_lock(-1) == -1);
  CHECK(mutex_unlock(m) == -1);  // not held
  CHECK(mutex_lock(m) == 0);
  CHECK(mutex_lock(m) == -1);    // held by the caller: error-checking, no deadlock
  CHECK(mutex_unlock(m) == 0);
  for (int i = 2; i < NMUTEX; i++)
    CHECK(mutex_create(1) == i);
  CHECK(mutex_create(1) == -1);
  return 0;
}

static void lock_and_exit(void *arg) {
  (void)arg;
  mutex_lock(mutex_id);
  exit(0);  // still holding it
}

static int exiting_thread_releases_its_mutex(void) {
  mutex_id = mutex_create(1);
  CHECK(waittid(thread_create(lock_and_exit, 0)) == 0);
  CHECK(mutex_lock(mutex_id) == 0);
  return 0;
}

static void unlock_foreign(void *arg) {
  (void)arg;
  exit(mutex_unlock(mutex_id) == -1 ? 0 : 1);
}

static int only_the_owner_unlocks(void) {
  mutex_id = mutex_create(1);
  CHECK(mutex_lock(mutex_id) == 0);
  CHECK(waittid(thread_create(unlock_foreign, 0)) == 0);
  CHECK(mutex_unlock(mutex_id) == 0);
  return 0;
}

static void hold_while_sleeping(void *arg) {
  (void)arg;
  mutex_lock(mutex_id);
  racy = 1;
  sleep(5);  // the tick that ends this sleep must come while main spins for the mutex
  mutex_unlock(mutex_id);
  exit(0);
}

static int spin_waiter_lets_a_sleeping_holder_wake(void) {
  mutex_id = mutex_create(0);
  int tid = thread_create(hold_while_sleeping, 0);
  while (!racy)
    yield();
  CHECK(mutex_lock(mutex_id) == 0);  // spins in the kernel until the holder is back
  CHECK(waittid(tid) == 0);
  return 0;
}

// ---- semaphores ---------------------------------------------------------------------

#define SLOTS 4
#define ITEMS 40
static int sem_empty, sem_full, sem_lock;
static volatile int ring[SLOTS], head, tail;

static void producer(void *arg) {
  int base = (int)(uintptr_t)arg;
  for (int i = 0; i < ITEMS / 2; i++) {
    semaphore_down(sem_empty);
    semaphore_down(sem_lock);
    ring[head++ % SLOTS] = base + i;
    semaphore_up(sem_lock);
    semaphore_up(sem_full);
  }
  exit(0);
}

static int bounded_buffer_with_semaphores(void) {
  CHECK((sem_empty = semaphore_create(SLOTS)) == 0);
  CHECK((sem_full = semaphore_create(0)) == 1);
  CHECK((sem_lock = semaphore_create(1)) == 2);
  int a = thread_create(producer, (void *)0), b = thread_create(producer, (void *)1000);
  long sum = 0;
  for (int i = 0; i < ITEMS; i++) {
    CHECK(semaphore_down(sem_full) == 0);
    CHECK(head - tail >= 1 && head - tail <= SLOTS);
    sum += ring[tail++ % SLOTS];
    semaphore_up(sem_empty);
  }
  CHECK(waittid(a) == 0 && waittid(b) == 0);
  CHECK(sum == 2 * (19 * 20 / 2) + 20 * 1000);
  return 0;
}

static int semaphore_errors(void) {
  CHECK(semaphore_create(-1) == -1);
  CHECK(semaphore_up(0) == -1 && semaphore_down(0) == -1 && semaphore_up(-3) == -1);
  int s = semaphore_create(2);
  CHECK(semaphore_down(s) == 0 && semaphore_down(s) == 0);
  CHECK(semaphore_up(s) == 0 && semaphore_down(s) == 0);
  return 0;
}

// ---- condition variables --------------------------------------------------------------

static int cv, cv_mutex;
static volatile int ready_flag, order[3], order_n;

static void wait_for_flag(void *arg) {
  mutex_lock(cv_mutex);
  while (!ready_flag)
    condvar_wait(cv, cv_mutex);
  order[order_n++] = (int)(uintptr_t)arg;
  ready_flag = 0;
  mutex_unlock(cv_mutex);
  exit(0);
}

static int condvar_signal_wakes_the_longest_waiter(void) {
  CHECK((cv = condvar_create()) == 0);
  cv_mutex = mutex_create(1);
  int tids[3];
  for (int i = 0; i < 3; i++) {
    tids[i] = thread_create(wait_for_flag, (void *)(uintptr_t)(i + 1));
    sleep(2);  // thread i is waiting before thread i+1 starts
  }
  for (int i = 0; i < 3; i++) {
    mutex_lock(cv_mutex);
    ready_flag = 1;
    CHECK(condvar_signal(cv) == 0);
    mutex_unlock(cv_mutex);
    sleep(2);
  }
  for (int i = 0; i < 3; i++)
    CHECK(waittid(tids[i]) == 0);
  CHECK(order_n == 3 && order[0] == 1 && order[1] == 2 && order[2] == 3);
  return 0;
}

static int condvar_errors(void) {
  int c = condvar_create(), m = mutex_create(1);
  CHECK(condvar_signal(7) == -1 && condvar_wait(7, m) == -1);
  CHECK(condvar_wait(c, m) == -1);      // mutex not held
  CHECK(condvar_wait(c, 9) == -1);
  CHECK(condvar_signal(c) == 0);        // nobody waits: nothing happens
  return 0;
}

// ---- sleep ----------------------------------------------------------------------------

static int sleep_blocks_for_the_time_asked(void) {
  CHECK(sleep(-1) == -1);
  uint64_t t0 = time_ms();
  CHECK(sleep(30) == 0);
  uint64_t took = time_ms() - t0;
  CHECK(took >= 30 && took < 45);
  CHECK(sleep(0) == 0);
  return 0;
}

static volatile uint64_t woke_at[2];

static void sleeper(void *arg) {
  int i = (int)(uintptr_t)arg;
  sleep(10 * (i + 1));
  woke_at[i] = time_ms();
  exit(0);
}

static int sleepers_wake_in_order(void) {
  uint64_t t0 = time_ms();
  int b = thread_create(sleeper, (void *)1), a = thread_create(sleeper, (void *)0);
  CHECK(waittid(a) == 0 && waittid(b) == 0);
  CHECK(woke_at[0] >= t0 + 10 && woke_at[1] >= t0 + 20 && woke_at[0] < woke_at[1]);
  return 0;
}

static const struct {
  const char *name;
  int (*fn)(void);
} tests[] = {
    {"ids_and_exit_codes", ids_and_exit_codes},
    {"thread_function_may_return", thread_function_may_return},
    {"waittid_errors", waittid_errors},
    {"create_errors", create_errors},
    {"at_most_nthread", at_most_nthread},
    {"tids_are_reused_after_waittid", tids_are_reused_after_waittid},
    {"threads_share_memory_and_files", threads_share_memory_and_files},
    {"main_exit_ends_every_thread", main_exit_ends_every_thread},
    {"a_fault_in_a_thread_kills_the_process", a_fault_in_a_thread_kills_the_process},
    {"sigkill_ends_every_thread", sigkill_ends_every_thread},
    {"exec_refused_with_threads", exec_refused_with_threads},
    {"fork_in_a_thread_copies_that_thread", fork_in_a_thread_copies_that_thread},
    {"blocking_mutex_excludes", blocking_mutex_excludes},
    {"spin_mutex_excludes", spin_mutex_excludes},
    {"without_a_mutex_updates_are_lost", without_a_mutex_updates_are_lost},
    {"mutex_errors", mutex_errors},
    {"exiting_thread_releases_its_mutex", exiting_thread_releases_its_mutex},
    {"only_the_owner_unlocks", only_the_owner_unlocks},
    {"spin_waiter_lets_a_sleeping_holder_wake", spin_waiter_lets_a_sleeping_holder_wake},
    {"bounded_buffer_with_semaphores", bounded_buffer_with_semaphores},
    {"semaphore_errors", semaphore_errors},
    {"condvar_signal_wakes_the_longest_waiter", condvar_signal_wakes_the_longest_waiter},
    {"condvar_errors", condvar_errors},
    {"sleep_blocks_for_the_time_asked", sleep_blocks_for_the_time_asked},
    {"sleepers_wake_in_order", sleepers_wake_in_order},
};

static const char *case_name(unsigned i) {
  return tests[i].name;
}

int main(int argc, char **argv) {
  if (refuse_unknown_cases("threadtests", argc, argv, case_name,
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
  printf("threadtests: %d passed, %d failed\n", passed, failed);
  return failed;
}
