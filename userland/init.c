// init: the first process (unless bootargs name another with init=). Starts the
// shell, reaps orphaned processes the kernel hands it, and exits with the shell's
// status when the shell exits, which powers the machine off (kernel/proc.c exit).
#include "user.h"

int main(void) {
  char *argv[] = {"sh", NULL};
  int sh = fork();
  if (sh < 0) {
    printf("init: fork failed\n");
    return 1;
  }
  if (sh == 0) {
    exec("sh", argv);
    printf("init: cannot exec sh\n");
    exit(127);
  }
  for (;;) {
    int status = 0;
    int pid = wait(&status);
    if (pid == sh)
      return status;
    if (pid < 0)
      return 1;  // cannot happen: the shell is our child until it exits
  }
}
