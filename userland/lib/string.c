// string.c: the string helpers only user programs need. memset, memmove, memcpy,
// memcmp, strlen, strcmp and strncmp are the kernel's own kernel/string.c, which the
// user library links too (harness/build/images.py): one copy of each.
#include "user.h"

char *strcpy(char *dst, const char *src) {
  char *d = dst;
  while ((*d++ = *src++))
    ;
  return dst;
}

char *strchr(const char *s, int c) {
  for (; *s; s++)
    if (*s == (char)c)
      return (char *)s;
  return c == 0 ? (char *)s : NULL;
}

long atol(const char *s) {
  long n = 0, sign = 1;
  if (*s == '-')
    sign = -1, s++;
  while (*s >= '0' && *s <= '9')
    n = n * 10 + (*s++ - '0');
  return sign * n;
}

int atoi(const char *s) { return (int)atol(s); }
