// sigdemo: one signal's whole trip, for `privlab trace --user sigdemo`. main installs
// a handler for SIGUSR1 and sends the signal to itself. On the way back from kill()
// the kernel enters the handler instead (kernel/signal.c); the handler prints and
// calls sigreturn(), and main goes on after its kill() as if nothing had happened.
#include "user.h"

static void on_usr1(int signum) {
  printf("sigdemo: in the handler for signal %d\n", signum);
  sigreturn();  // never returns: main resumes, registers as they were
}

int main(void) {
  struct sigaction act = {.handler = (uintptr_t)on_usr1};
  sigaction(SIGUSR1, &act, NULL);
  int r = kill(getpid(), SIGUSR1);
  printf("sigdemo: back in main, kill returned %d\n", r);
  return 0;
}
