// exec [PROG ARGS...]: replace this process with PROG (default: hello from exec).
// If exec returns, it failed.
#include "user.h"

int main(int argc, char **argv) {
  char *fallback[] = {"hello", "from", "exec", NULL};
  char **args = argc > 1 ? argv + 1 : fallback;
  printf("exec: running %s\n", args[0]);
  exec(args[0], args);
  printf("exec: %s: failed\n", args[0]);
  return 1;
}
