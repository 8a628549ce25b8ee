// mkdir DIR...: make each directory. Exit status 1 if any could not be made (its
// parent is missing, the name exists, or the disk is full).
#include "user.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(STDERR, "usage: mkdir DIR...\n");
    return 1;
  }
  int status = 0;
  for (int i = 1; i < argc; i++)
    if (mkdir(argv[i]) < 0) {
      fprintf(STDERR, "mkdir: %s: cannot create\n", argv[i]);
      status = 1;
    }
  return status;
}
