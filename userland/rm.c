// rm PATH...: remove each name: a file's (its data goes with its last name and last
// open descriptor) or an empty directory's (the kernel's unlinkat takes both). Exit
// status 1 if any could not be removed.
#include "user.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(STDERR, "usage: rm PATH...\n");
    return 1;
  }
  int status = 0;
  for (int i = 1; i < argc; i++)
    if (unlink(argv[i]) < 0) {
      fprintf(STDERR, "rm: %s: cannot remove\n", argv[i]);
      status = 1;
    }
  return status;
}
