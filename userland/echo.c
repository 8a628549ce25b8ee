// echo ARGS...: print the arguments separated by spaces, then a newline. The line
// goes out in one write(), so echoes into one pipe or file from several processes
// never interleave within a line.
#include "user.h"

int main(int argc, char **argv) {
  size_t len = 1;
  for (int i = 1; i < argc; i++)
    len += strlen(argv[i]) + 1;
  char *line = malloc(len), *p = line;
  if (line == NULL) {
    fprintf(STDERR, "echo: out of memory\n");
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    if (i > 1)
      *p++ = ' ';
    strcpy(p, argv[i]);
    p += strlen(argv[i]);
  }
  *p++ = '\n';
  if (write(STDOUT, line, (size_t)(p - line)) != p - line) {
    fprintf(STDERR, "echo: write error\n");
    return 1;
  }
  return 0;
}
