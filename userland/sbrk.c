// sbrk: grow the heap, use it, shrink it, and check the errors sbrk must give.
#include "user.h"

#define GROW (3 * 4096 + 100)

int main(void) {
  long start = sbrk(0);
  long old = sbrk(GROW);
  if (old != start) {
    printf("sbrk: grow returned %lx, expected %lx\n", old, start);
    return 1;
  }
  char *p = (char *)old;
  for (int i = 0; i < GROW; i++)
    p[i] = (char)i;
  for (int i = 0; i < GROW; i++)
    if (p[i] != (char)i) {
      printf("sbrk: heap byte %d lost\n", i);
      return 1;
    }
  if (sbrk(-GROW) != start + GROW || sbrk(0) != start) {
    printf("sbrk: shrink failed\n");
    return 1;
  }
  if (sbrk(-(start + 1)) != -1) {
    printf("sbrk: shrinking below the program image must fail\n");
    return 1;
  }
  printf("sbrk: heap at %lx, grew and shrank by %d bytes: ok\n", start, GROW);
  return 0;
}
