// sleep [-b] [MS]: wait MS milliseconds (default 100), then say how long it took on
// get_time's clock. Without -b by yielding until get_time says so (a busy wait, as
// the courses' user libraries do); with -b in the sleep system call, which blocks:
// with nothing else to run the hart waits in wfi and the clock skips ahead.
#include "user.h"

int main(int argc, char **argv) {
  int blocking = argc > 1 && strcmp(argv[1], "-b") == 0;
  if (blocking)
    argc--, argv++;
  uint64_t ms = argc > 1 ? (uint64_t)atol(argv[1]) : 100;
  uint64_t start = time_ms();
  if (blocking)
    sleep((long)ms);
  else
    sleep_ms(ms);
  uint64_t took = time_ms() - start;
  printf("sleep: %lu ms\n", (unsigned long)took);
  return took >= ms ? 0 : 1;
}
