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

char *strrchr(const char *s, int c) {
  const char *last = NULL;
  do
    if (*s == (char)c)
      last = s;
  while (*s++);
  return (char *)last;
}

char *strstr(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++)
    if (strncmp(hay, needle, n) == 0)
      return (char *)hay;
  return n == 0 ? (char *)hay : NULL;
}
