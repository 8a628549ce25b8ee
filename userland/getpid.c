// getpid [N]: N getpid() calls (default 100000), the smallest system-call round trip
// through the kernel (benchmarks/syscall_roundtrip.py times it). Prints its pid.
#include "user.h"

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  int pid = 0;
  for (long i = 0; i < n; i++)
    pid = getpid();
  printf("getpid: %ld calls, pid %d\n", n, n ? pid : getpid());
  return 0;
}
