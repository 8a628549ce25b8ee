// compute [LOOPS] [COPIES]: CPU-bound work. Runs LOOPS iterations of an integer
// hash (default 2,000,000) and prints progress ten times. With COPIES > 1 it forks
// that many copies, tagged A, B, C...; their progress lines interleave only if the
// timer preempts them (nothing here yields). Used by the benchmarks too.
#include "user.h"

static uint64_t work(long loops, char tag) {
  uint64_t h = 1469598103934665603ull;
  long step = loops / 10 > 0 ? loops / 10 : 1;
  for (long i = 1; i <= loops; i++) {
    h = (h ^ (uint64_t)i) * 1099511628211ull;
    if (i % step == 0)
      printf("%c %ld\n", tag, i / step);
  }
  return h;
}

int main(int argc, char **argv) {
  long loops = argc > 1 ? atol(argv[1]) : 2000000;
  int copies = argc > 2 ? atoi(argv[2]) : 1;
  if (copies <= 1) {
    printf("compute: %lx\n", (unsigned long)work(loops, 'A'));
    return 0;
  }
  for (int c = 0; c < copies && c < 26; c++)
    if (fork() == 0) {
      work(loops, (char)('A' + c));
      exit(0);
    }
  int status, bad = 0;
  while (wait(&status) > 0)
    bad += status != 0;
  printf("compute: %d copies done\n", copies);
  return bad;
}
