// waitpid: start three children with different exit statuses, collect them in the
// opposite order, and check what waitpid reports on the way.
#include "user.h"

int main(void) {
  int pids[3], bad = 0;
  for (int i = 0; i < 3; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {
      sleep_ms(10 * (i + 1));
      exit(10 + i);
    }
  }
  if (waitpid(pids[2], NULL) != WAIT_STILL_RUNS) {
    printf("waitpid: a running child should give -2\n");
    bad++;
  }
  for (int i = 2; i >= 0; i--) {
    int status = -1;
    int pid = waitpid_blocking(pids[i], &status);
    printf("waitpid: child %d exited with %d\n", pid, status);
    bad += pid != pids[i] || status != 10 + i;
  }
  if (waitpid(-1, NULL) != WAIT_NO_CHILD) {
    printf("waitpid: no children left should give -1\n");
    bad++;
  }
  printf("waitpid: %s\n", bad ? "FAILED" : "ok");
  return bad != 0;
}
