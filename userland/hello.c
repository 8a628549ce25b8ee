// hello: the smallest user program. Prints a greeting and its arguments.
#include "user.h"

int main(int argc, char **argv) {
  printf("Hello, world!\n");
  for (int i = 1; i < argc; i++)
    printf("argv[%d] = %s\n", i, argv[i]);
  return 0;
}
