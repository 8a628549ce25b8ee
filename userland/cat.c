// cat [FILE...]: copy each file, or standard input when none is named, to standard
// output. A file that cannot be opened, or a directory (whose raw entries read()
// would hand out), is reported and skipped; the exit status is then 1.
#include "user.h"

// Copy fd to standard output: 0, or -1 after saying what failed.
static int copy(int fd, const char *name) {
  char buf[512];
  long n;
  while ((n = read(fd, buf, sizeof(buf))) > 0)
    if (write(STDOUT, buf, (size_t)n) != n) {
      fprintf(STDERR, "cat: write error\n");  // e.g. a pipe whose reader has gone
      return -1;
    }
  if (n < 0) {
    fprintf(STDERR, "cat: %s: read error\n", name);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return copy(STDIN, "stdin") < 0;
  int status = 0;
  for (int i = 1; i < argc; i++) {
    int fd = open_for_reading("cat", argv[i]);
    if (fd < 0) {
      status = 1;
      continue;
    }
    if (copy(fd, argv[i]) < 0)
      status = 1;
    close(fd);
  }
  return status;
}
