// fscrash [STEPS]: a file-heavy workload for the crash test (tests/kernel/
// test_crash.py), which stops the machine at many instants while it runs, boots
// again on the disk as it was left, and checks the disk with fsck.
//
// Step i (from 0) makes directory d<i%4> if needed, writes file d<i%4>/f<i> with
// 1500 + 97 * i bytes of a pattern that names i (two log operations: create, then the
// data), gives it a second name l<i>, and removes the second name of step i - 2.
// After the step's last system call has returned, its effects are committed to the
// disk: it prints "step i done", so the test knows which steps must survive a stop.
#include "user.h"

static char buf[1500 + 97 * 64];

static void fill(int i, int n) {
  for (int k = 0; k < n; k++)
    buf[k] = (char)('a' + (i + k) % 26);
}

static int step(int i) {
  char dir[8], file[16], link_name[16], old[16];
  snprintf(dir, sizeof(dir), "d%d", i % 4);
  snprintf(file, sizeof(file), "d%d/f%d", i % 4, i);
  snprintf(link_name, sizeof(link_name), "l%d", i);
  if (i < 4 && mkdirat(dir, 0) < 0)
    return 1;
  int fd = openat(file, O_CREATE | O_WRONLY, 0), n = 1500 + 97 * i;
  if (fd < 0)
    return 2;
  fill(i, n);
  if (write(fd, buf, (size_t)n) != n || close(fd) < 0)
    return 3;
  if (linkat(file, link_name) < 0)
    return 4;
  if (i >= 2) {
    snprintf(old, sizeof(old), "l%d", i - 2);
    if (unlinkat(old, 0) < 0)
      return 5;
  }
  return 0;
}

int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 24;
  if (steps < 0 || steps > 64) {
    fprintf(STDERR, "fscrash: STEPS must be 0..64\n");
    return 2;
  }
  for (int i = 0; i < steps; i++) {
    int r = step(i);
    if (r != 0) {
      printf("fscrash: step %d failed at %d\n", i, r);
      return 1;
    }
    printf("step %d done\n", i);
  }
  return 0;
}
