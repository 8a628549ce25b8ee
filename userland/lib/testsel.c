// testsel.c: which cases a test program (usertests, fstests, sigtests) runs.
#include "user.h"

// With no arguments every case runs; otherwise those whose names start with one of
// argv[1..].
int test_selected(const char *name, int argc, char **argv) {
  if (argc <= 1)
    return 1;
  for (int i = 1; i < argc; i++)
    if (strncmp(name, argv[i], strlen(argv[i])) == 0)
      return 1;
  return 0;
}
