// ln OLD NEW: give the file OLD a second name NEW (a hard link; no directories).
#include "user.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(STDERR, "usage: ln OLD NEW\n");
    return 1;
  }
  if (link(argv[1], argv[2]) < 0) {
    fprintf(STDERR, "ln: %s: cannot link to %s\n", argv[2], argv[1]);
    return 1;
  }
  return 0;
}
