// forktree [DEPTH]: every process down to DEPTH forks two children, which do the
// same. Each process's exit status is the size of its subtree, so the root can
// check that every one of the 2^(DEPTH+1) - 1 processes ran and was reaped.
#include "user.h"

static int grow(int depth) {
  int total = 1;
  if (depth == 0)
    return total;
  int kids[2];
  for (int i = 0; i < 2; i++) {
    kids[i] = fork();
    if (kids[i] == 0)
      exit(grow(depth - 1));
  }
  for (int i = 0; i < 2; i++) {
    int status = 0;
    if (kids[i] < 0 || waitpid(kids[i], &status) != kids[i])
      return -1000;
    total += status;
  }
  return total;
}

int main(int argc, char **argv) {
  int depth = argc > 1 ? atoi(argv[1]) : 3;
  if (depth < 0 || depth > 5) {
    printf("forktree: depth must be 0..5\n");
    return 2;
  }
  int total = grow(depth), expected = (1 << (depth + 1)) - 1;
  printf("forktree: %d of %d processes\n", total, expected);
  return total == expected ? 0 : 1;
}
