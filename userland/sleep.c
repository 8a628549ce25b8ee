// sleep [MS]: wait MS milliseconds (default 100) by yielding until get_time says so.
#include "user.h"

int main(int argc, char **argv) {
  uint64_t ms = argc > 1 ? (uint64_t)atol(argv[1]) : 100;
  uint64_t start = time_ms();
  sleep_ms(ms);
  uint64_t took = time_ms() - start;
  printf("sleep: %lu ms\n", (unsigned long)took);
  return took >= ms ? 0 : 1;
}
