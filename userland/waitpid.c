// waitpid: start three children with different exit statuses, collect them in the
// opposite order, and check what waitpid reports on the way. waitpid blocks until
// the child asked for has exited; each child checks that getppid() names us.
#include "user.h"

int main(void) {
  int pids[3], bad = 0, me = getpid();
  printf("waitpid: pid %d, parent %d\n", me, getppid());
  for (int i = 0; i < 3; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {
      sleep_ms(10 * (i + 1));
      exit(getppid() == me ? 10 + i : 99);
    }
  }
  for (int i = 2; i >= 0; i--) {
    int status = -1;
    int pid = waitpid(pids[i], &status);
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
