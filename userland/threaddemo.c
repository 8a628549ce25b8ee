// threaddemo: two threads and a blocking mutex, for `privlab trace --user threaddemo`.
// The main thread takes the mutex and starts thread 1, which blocks on it; main
// releases it, thread 1 runs its critical section and exits with 7; main collects it.
#include "user.h"

static int mutex;
static volatile int counter;

static void worker(void *arg) {
  mutex_lock(mutex);        // main holds it: thread 1 sleeps until the unlock
  counter++;
  mutex_unlock(mutex);
  exit((int)(uintptr_t)arg);
}

int main(void) {
  mutex = mutex_create(1);
  mutex_lock(mutex);
  int tid = thread_create(worker, (void *)7);
  yield();                  // thread 1 runs and blocks in mutex_lock
  printf("threaddemo: main holds the mutex, thread %d waits for it\n", tid);
  mutex_unlock(mutex);
  int status = waittid(tid);
  printf("threaddemo: thread %d exited with %d, counter %d\n", tid, status, counter);
  return status == 7 && counter == 1 ? 0 : 1;
}
