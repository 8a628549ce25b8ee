// lab_deadlock MODE TOKEN: the deadlock-detection lab's test program (labs/deadlock).
// Prints "PASS TOKEN" only if every check of MODE held; otherwise a FAIL line saying
// which. With detection on, a mutex_lock or semaphore_down that no order of the
// threads could ever satisfy must return -0xDEAD at once; any other must not.
//
//   self          a thread relocking the mutex it holds (blocking and spinning kinds):
//                 -0xDEAD with detection on, -1 with it off; enable's arguments
//   ab            two threads take mutexes A and B in opposite orders: the second
//                 of them to ask for its other mutex is refused, the first gets it
//   ab_spin       the same with spinning mutexes
//   mixed         the same cycle through a mutex and a semaphore
//   withdrawn     after a refusal (the refused thread still holding its mutex, the
//                 other waiting for it), an unrelated lock must not be refused: the
//                 refused request is no longer anyone's need
//   sem_cycle     three threads hold units of three semaphores (one of two units)
//                 and each asks for one the next holds: the last to ask is refused,
//                 gives back what it holds, and the other two finish; no unit is
//                 lost or made up
//   sem_safe      every semaphore empty, two threads waiting, yet a third that waits
//                 for nothing will give back the unit that lets them finish in turn:
//                 safe, nobody may be refused (and main's units of the gate count)
//   late          detection turned on while a thread already holds a mutex and a
//                 semaphore unit: what it holds counts, main's wait for them is safe
//   off           detection off (turned on, then off): a real AB/BA deadlock, and a
//                 wait for a semaphore nobody holds, just wait; relocking is -1
//   philosophers  five philosophers each take their left fork, then their right:
//                 the fifth request, which closes the circle, is refused; that
//                 philosopher puts its fork down and tries again, and all five eat
#include "user.h"

#define DEAD (-0xDEAD)

static int failed(const char *what) {
  printf("FAIL %s\n", what);
  return 1;
}

#define CHECK(cond, what)   \
  do {                      \
    if (!(cond))            \
      return failed(what);  \
  } while (0)

#define MAXT 6  // threads of a mode, by tid (1..)

// Set by the threads of a mode (tid-indexed): how far each got.
static volatile int holding[MAXT], asking[MAXT], finished[MAXT], result[MAXT],
    was_refused[MAXT];
static volatile int go;

// Wait (sleeping, a millisecond at a time: a sleeping thread waits for no mutex or
// semaphore) until flags[from..to] are all set, at most ms milliseconds. 1 if they were.
static int wait_flags(volatile int *flags, int from, int to, int ms) {
  for (int t = 0; t <= ms; t++) {
    int all = 1;
    for (int i = from; i <= to; i++)
      all = all && flags[i];
    if (all)
      return 1;
    sleep(1);
  }
  return 0;
}

static int enable(int on) { return enable_deadlock_detect(on) == 0; }

// ---- one thread relocking -----------------------------------------------------------

static int self(void) {
  int m = mutex_create(1), s = mutex_create(0);
  CHECK(m >= 0 && s >= 0, "mutex_create");
  CHECK(mutex_lock(m) == 0 && mutex_lock(m) == -1 && mutex_unlock(m) == 0,
        "detection is off at first: relocking a mutex the caller holds must be -1");
  CHECK(enable_deadlock_detect(2) == -1 && enable_deadlock_detect(-1) == -1,
        "enable_deadlock_detect must refuse anything but 0 and 1 with -1");
  CHECK(enable_deadlock_detect(1) == 0, "enable_deadlock_detect(1) did not return 0");
  CHECK(mutex_lock(m) == 0, "locking a free mutex with detection on");
  CHECK(mutex_lock(m) == DEAD, "relocking a held blocking mutex did not return -0xDEAD");
  CHECK(mutex_unlock(m) == 0, "after -0xDEAD the caller should still hold the mutex");
  CHECK(mutex_unlock(m) == -1, "the refused lock took the mutex a second time");
  CHECK(mutex_lock(m) == 0 && mutex_unlock(m) == 0, "locking it again once free");
  CHECK(mutex_lock(s) == 0, "locking a free spinning mutex with detection on");
  CHECK(mutex_lock(s) == DEAD, "relocking a held spinning mutex did not return -0xDEAD");
  CHECK(mutex_unlock(s) == 0, "after -0xDEAD the caller should still hold the spin mutex");
  CHECK(enable_deadlock_detect(0) == 0, "enable_deadlock_detect(0) did not return 0");
  CHECK(mutex_lock(m) == 0 && mutex_lock(m) == -1 && mutex_unlock(m) == 0,
        "with detection off again, relocking must be -1 as before");
  return 0;
}

// ---- two threads, two resources, opposite orders ------------------------------------

// What the two threads of ab/mixed/withdrawn take: first[t], then second[t].
static int kind_first[3], first_id[3], kind_second[3], second_id[3];
static int wait_for_go;  // withdrawn: a refused thread keeps its first until main says go

enum { MUTEX, SEM };

static int take(int kind, int id) {
  return kind == MUTEX ? mutex_lock(id) : semaphore_down(id);
}
static int give(int kind, int id) {
  return kind == MUTEX ? mutex_unlock(id) : semaphore_up(id);
}

static void opposite(void *arg) {
  int me = (int)(uintptr_t)arg, other = 3 - me;
  if (take(kind_first[me], first_id[me]) != 0)
    exit(10);
  holding[me] = 1;
  while (!holding[other])
    sleep(1);
  if (me == 2) {  // ask second, once thread 1 is waiting (the usual order; either works)
    while (!asking[other])
      sleep(1);
    sleep(3);
  }
  asking[me] = 1;
  int r = take(kind_second[me], second_id[me]);
  result[me] = r;
  was_refused[me] = r == DEAD;
  if (r == DEAD && wait_for_go)
    while (!go)
      sleep(1);
  if (r == 0 && give(kind_second[me], second_id[me]) != 0)
    exit(11);
  if (give(kind_first[me], first_id[me]) != 0)
    exit(12);
  finished[me] = 1;
  exit(r == 0 ? 0 : r == DEAD ? 1 : 13);
}

// Run the two threads (detection on): exactly one is refused, the other gets both.
static int opposite_orders(int kind1, int id1, int kind2, int id2) {
  kind_first[1] = kind1, first_id[1] = id1, kind_second[1] = kind2, second_id[1] = id2;
  kind_first[2] = kind2, first_id[2] = id2, kind_second[2] = kind1, second_id[2] = id1;
  CHECK(enable(1), "enable_deadlock_detect(1) did not return 0");
  int t1 = thread_create(opposite, (void *)1), t2 = thread_create(opposite, (void *)2);
  CHECK(t1 == 1 && t2 == 2, "thread_create");
  if (wait_for_go) {
    // Once one is refused (it keeps its first) and the other waits for that:
    for (int t = 0; !was_refused[1] && !was_refused[2]; t++) {
      if (t == 1000 || finished[1] || finished[2])
        return failed("neither second request was refused");
      sleep(1);
    }
    sleep(3);
    int c = mutex_create(1), s = semaphore_create(1);
    CHECK(c >= 0 && s >= 0, "mutex_create or semaphore_create");
    CHECK(mutex_lock(c) != DEAD, "a lock of a free mutex nobody waits for was refused "
                                 "after a refusal: was the refused request left as a need?");
    CHECK(semaphore_down(s) != DEAD, "a down of a free semaphore was refused after a "
                                     "refusal: was the refused request left as a need?");
    CHECK(mutex_unlock(c) == 0 && semaphore_up(s) == 0, "unlock or up");
    go = 1;
  }
  if (!wait_flags(finished, 1, 2, 1000))
    return failed("the two threads deadlocked: neither request was refused");
  int s1 = waittid(t1), s2 = waittid(t2);
  CHECK(s1 < 10 && s2 < 10, "a thread's other calls failed");
  CHECK(s1 + s2 == 1, "exactly one of the two second requests should be refused, "
                      "the other granted");
  // Nothing is held now: both are free for main, once each (it is the only thread).
  CHECK(take(kind1, id1) == 0 && take(kind2, id2) == 0,
        "main could not take both once the threads were done");
  CHECK(give(kind1, id1) == 0 && give(kind2, id2) == 0, "giving them back");
  return 0;
}

static int ab(int blocking) {
  int a = mutex_create(blocking), b = mutex_create(blocking);
  CHECK(a >= 0 && b >= 0, "mutex_create");
  return opposite_orders(MUTEX, a, MUTEX, b);
}

static int mixed(void) {
  int m = mutex_create(1), s = semaphore_create(1);
  CHECK(m >= 0 && s >= 0, "mutex_create or semaphore_create");
  return opposite_orders(MUTEX, m, SEM, s);
}

static int withdrawn(void) {
  wait_for_go = 1;
  return ab(1);
}

// ---- semaphores ------------------------------------------------------------------------

static int gate;  // main holds all its units until every thread has what it holds
static int sem[3];
static const int *hold_list[MAXT];
static int want[MAXT], released_early;

// Thread t takes the semaphore units in hold_list[t] (ending with -1), waits at the
// gate, then asks for one unit of sem want[t] (if >= 0); refused, it gives back what
// it holds. Exit: 0 granted (or nothing asked), 1 refused.
static void sem_thread(void *arg) {
  int t = (int)(uintptr_t)arg;
  for (const int *h = hold_list[t]; *h >= 0; h++)
    if (semaphore_down(sem[*h]) != 0)
      exit(10);
  holding[t] = 1;
  if (semaphore_down(gate) != 0)
    exit(11);
  int r = 0;
  if (want[t] >= 0) {
    asking[t] = 1;
    r = semaphore_down(sem[want[t]]);
    result[t] = r;
    if (r == 0 && semaphore_up(sem[want[t]]) != 0)
      exit(12);
  } else if (released_early) {  // sem_safe: hold until the others wait, then give back
    while (!asking[1] || !asking[2])
      sleep(1);
    sleep(5);
  }
  if (r != 0 && r != DEAD)
    exit(13);
  for (const int *h = hold_list[t]; *h >= 0; h++)
    if (semaphore_up(sem[*h]) != 0)
      exit(14);
  if (semaphore_up(gate) != 0)
    exit(15);
  finished[t] = 1;
  exit(r == DEAD ? 1 : 0);
}

// Main takes every unit of the gate, starts threads 1..n, lets them through the gate
// once each holds its units and waits there, and collects how many were refused (or
// -1 if they deadlocked, -2 if a call failed).
static int run_sem_threads(int n) {
  CHECK(enable(1), "enable_deadlock_detect(1) did not return 0");
  gate = semaphore_create(n);
  CHECK(gate >= 0, "semaphore_create");
  for (int i = 0; i < n; i++)
    CHECK(semaphore_down(gate) == 0, "main taking the gate's units (it is the only "
                                     "thread: nothing can deadlock)");
  for (int t = 1; t <= n; t++)
    CHECK(thread_create(sem_thread, (void *)(uintptr_t)t) == t, "thread_create");
  // Waiting at the gate is safe: main holds its units and waits for nothing.
  if (!wait_flags(holding, 1, n, 500))
    return -2;
  sleep(5);
  for (int i = 0; i < n; i++)
    if (semaphore_up(gate) != 0)
      return -2;
  if (!wait_flags(finished, 1, n, 1000))
    return -1;
  int refused = 0;
  for (int t = 1; t <= n; t++) {
    int status = waittid(t);
    if (status != 0 && status != 1)
      return -2;
    refused += status;
  }
  return refused;
}

// Semaphore id holds exactly `units` free units: main (the only thread left) takes
// them all without waiting, and one more is a deadlock (nobody could ever give it).
static int exactly(int id, int units) {
  for (int i = 0; i < units; i++)
    if (semaphore_down(id) != 0)
      return 0;
  return semaphore_down(id) == DEAD;
}

static int sem_cycle(void) {
  static const int h1[] = {0, -1}, h2[] = {1, -1}, h3[] = {2, 0, -1};
  sem[0] = semaphore_create(2), sem[1] = semaphore_create(1), sem[2] = semaphore_create(1);
  hold_list[1] = h1, hold_list[2] = h2, hold_list[3] = h3;
  want[1] = 1, want[2] = 2, want[3] = 0;  // 1 waits for 2, 2 for 3, 3 for 1 (and 3)
  int refused = run_sem_threads(3);
  CHECK(refused != -2, "a semaphore call failed");
  CHECK(refused != -1, "the threads deadlocked: no request was refused");
  CHECK(refused == 1, "exactly one request (the one that closed the circle) should be "
                      "refused");
  CHECK(exactly(sem[0], 2) && exactly(sem[1], 1) && exactly(sem[2], 1) && exactly(gate, 3),
        "afterwards a semaphore does not have its units back (or a down that could "
        "never be satisfied was not refused)");
  return 0;
}

static int sem_safe(void) {
  // 1 holds a unit of 0 and one of 2's two, and waits for 1, which 2 holds; 2 waits
  // for 2, whose units 1 and 3 hold; 3 waits for nothing and gives its unit back:
  // 3 can finish, then 2, then 1. (Waits-for has a cycle 1 -> 2 -> 1: not enough.)
  static const int h1[] = {0, 2, -1}, h2[] = {1, -1}, h3[] = {2, -1};
  sem[0] = semaphore_create(1), sem[1] = semaphore_create(1), sem[2] = semaphore_create(2);
  hold_list[1] = h1, hold_list[2] = h2, hold_list[3] = h3;
  want[1] = 1, want[2] = 2, want[3] = -1;
  released_early = 1;
  int refused = run_sem_threads(3);
  CHECK(refused != -2, "a semaphore call failed");
  CHECK(refused != -1, "the threads deadlocked");
  CHECK(refused == 0, "a safe request was refused with -0xDEAD: thread 3 waits for "
                      "nothing and its unit lets 2, then 1, finish");
  CHECK(exactly(sem[0], 1) && exactly(sem[1], 1) && exactly(sem[2], 2) && exactly(gate, 3),
        "afterwards a semaphore does not have its units back");
  return 0;
}

// ---- detection turned on late, and turned off --------------------------------------

static int late_m, late_s;

static void hold_then_give(void *arg) {
  (void)arg;
  if (mutex_lock(late_m) != 0 || semaphore_down(late_s) != 0)
    exit(10);
  holding[1] = 1;
  while (!go)
    sleep(1);
  sleep(10);  // main is waiting for both by now
  if (semaphore_up(late_s) != 0 || mutex_unlock(late_m) != 0)
    exit(11);
  exit(0);
}

static int late(void) {
  late_m = mutex_create(1), late_s = semaphore_create(1);
  CHECK(late_m >= 0 && late_s >= 0, "mutex_create or semaphore_create");
  CHECK(thread_create(hold_then_give, 0) == 1, "thread_create");
  CHECK(wait_flags(holding, 1, 1, 500), "the thread did not take the mutex and the unit");
  CHECK(enable(1), "enable_deadlock_detect(1) did not return 0");
  go = 1;
  CHECK(semaphore_down(late_s) == 0, "waiting for the unit thread 1 took before detection "
                                     "was on is safe (it will give it back)");
  CHECK(mutex_lock(late_m) == 0, "waiting for the mutex thread 1 took before detection "
                                 "was on is safe");
  CHECK(waittid(1) == 0, "thread 1's calls failed");
  CHECK(mutex_unlock(late_m) == 0 && semaphore_up(late_s) == 0, "giving them back");
  return 0;
}

static int off_a, off_b, off_empty;
static volatile int returned[MAXT];

static void off_thread(void *arg) {
  int me = (int)(uintptr_t)arg, other = 3 - me;
  if (me == 3) {
    asking[3] = 1;
    result[3] = semaphore_down(off_empty);  // nobody will ever up it
    returned[3] = 1;
    exit(0);
  }
  mutex_lock(me == 1 ? off_a : off_b);
  holding[me] = 1;
  while (!holding[other])
    sleep(1);
  asking[me] = 1;
  result[me] = mutex_lock(me == 1 ? off_b : off_a);
  returned[me] = 1;
  exit(0);
}

static int off(void) {
  int m = mutex_create(1);
  CHECK(enable(1) && enable(0), "enable_deadlock_detect(1) or (0) did not return 0");
  CHECK(mutex_lock(m) == 0 && mutex_lock(m) == -1 && mutex_unlock(m) == 0,
        "with detection off, relocking a mutex the caller holds must be -1");
  off_a = mutex_create(1), off_b = mutex_create(1), off_empty = semaphore_create(0);
  for (int t = 1; t <= 3; t++)
    CHECK(thread_create(off_thread, (void *)(uintptr_t)t) == t, "thread_create");
  CHECK(wait_flags(asking, 1, 3, 500), "the threads did not get to their requests");
  sleep(30);
  for (int t = 1; t <= 3; t++)
    if (returned[t])
      return failed(result[t] == DEAD ? "with detection off, a request returned -0xDEAD"
                                      : "with detection off, a deadlocked request returned");
  return 0;  // the process ends, and its deadlocked threads with it
}

// ---- the dining philosophers ----------------------------------------------------------

#define PHILS 5
static int forks[PHILS];
static volatile int first_try[PHILS + 1], others_waiting[PHILS + 1], ate[PHILS + 1];

static void philosopher(void *arg) {
  int t = (int)(uintptr_t)arg, i = t - 1;  // tid t is philosopher i
  int left = forks[i], right = forks[(i + 1) % PHILS];
  if (mutex_lock(left) != 0)
    exit(10);
  holding[t] = 1;
  while (!wait_flags(holding, 1, PHILS, 0))
    sleep(1);
  asking[t] = 1;
  int r = mutex_lock(right);
  first_try[t] = r;
  if (r == DEAD) {  // was everybody else waiting for their right fork?
    int n = 0;
    for (int u = 1; u <= PHILS; u++)
      n += u != t && asking[u] && !ate[u];
    others_waiting[t] = n;
  }
  while (r == DEAD) {  // put the left fork down, let the neighbour eat, try again
    if (mutex_unlock(left) != 0)
      exit(11);
    sleep(5);
    if (mutex_lock(left) != 0)
      exit(12);
    r = mutex_lock(right);
  }
  if (r != 0)
    exit(13);
  ate[t] = 1;
  sleep(1);
  if (mutex_unlock(right) != 0 || mutex_unlock(left) != 0)
    exit(14);
  finished[t] = 1;
  exit(0);
}

static int philosophers(void) {
  CHECK(enable(1), "enable_deadlock_detect(1) did not return 0");
  for (int i = 0; i < PHILS; i++)
    CHECK((forks[i] = mutex_create(1)) >= 0, "mutex_create");
  for (int t = 1; t <= PHILS; t++)
    CHECK(thread_create(philosopher, (void *)(uintptr_t)t) == t, "thread_create");
  if (!wait_flags(finished, 1, PHILS, 2000))
    return failed("the philosophers did not all eat: deadlocked, no request refused?");
  int refused = 0, waiting = 0;
  for (int t = 1; t <= PHILS; t++) {
    CHECK(waittid(t) == 0, "a philosopher's call failed");
    CHECK(first_try[t] == 0 || first_try[t] == DEAD, "a first try returned neither 0 "
                                                     "nor -0xDEAD");
    if (first_try[t] == DEAD)
      refused++, waiting = others_waiting[t];
  }
  CHECK(refused == 1, "exactly one first try (the one closing the circle) should be "
                      "refused");
  CHECK(waiting == PHILS - 1, "the refusal came before the other four were all waiting "
                              "for their right forks: that state was safe");
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    printf("usage: lab_deadlock self|ab|ab_spin|mixed|withdrawn|sem_cycle|sem_safe|late|"
           "off|philosophers TOKEN\n");
    return 2;
  }
  const char *mode = argv[1], *token = argv[2];
  int r = strcmp(mode, "self") == 0           ? self()
          : strcmp(mode, "ab") == 0           ? ab(1)
          : strcmp(mode, "ab_spin") == 0      ? ab(0)
          : strcmp(mode, "mixed") == 0        ? mixed()
          : strcmp(mode, "withdrawn") == 0    ? withdrawn()
          : strcmp(mode, "sem_cycle") == 0    ? sem_cycle()
          : strcmp(mode, "sem_safe") == 0     ? sem_safe()
          : strcmp(mode, "late") == 0         ? late()
          : strcmp(mode, "off") == 0          ? off()
          : strcmp(mode, "philosophers") == 0 ? philosophers()
                                              : failed("unknown mode");
  if (r == 0)
    printf("PASS %s\n", token);
  return r;
}
