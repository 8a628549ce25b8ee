// testsel.c: which cases a test program (usertests, fstests, sigtests, threadtests,
// abitests) runs, and the refusal of a word that names none of them.
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

// A word that selects no case is a mistake (a misspelt name, or an option meant for
// whoever started the program): say so and return 1, before anything has run, so the
// program can exit non-zero rather than report "0 passed, 0 failed". `name(i)` is case
// i's name, for i < n.
int refuse_unknown_cases(const char *prog, int argc, char **argv,
                         const char *(*name)(unsigned), unsigned n) {
  for (int i = 1; i < argc; i++) {
    int known = 0;
    for (unsigned k = 0; k < n && !known; k++)
      known = strncmp(name(k), argv[i], strlen(argv[i])) == 0;
    if (!known) {
      printf("%s: no test named '%s' (run %s with no argument for all of them)\n", prog,
             argv[i], prog);
      return 1;
    }
  }
  return 0;
}
