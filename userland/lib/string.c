// string.c: memory and string helpers for user programs.
#include "user.h"

void *memset(void *dst, int c, size_t n) {
  unsigned char *d = dst;
  while (n-- > 0)
    *d++ = (unsigned char)c;
  return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  if (s < d && s + n > d)
    while (n-- > 0)
      d[n] = s[n];
  else
    while (n-- > 0)
      *d++ = *s++;
  return dst;
}

void *memcpy(void *dst, const void *src, size_t n) { return memmove(dst, src, n); }

int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (; n > 0; n--, x++, y++)
    if (*x != *y)
      return *x - *y;
  return 0;
}

size_t strlen(const char *s) {
  size_t n = 0;
  while (s[n])
    n++;
  return n;
}

int strncmp(const char *a, const char *b, size_t n) {
  for (; n > 0 && *a && *a == *b; n--, a++, b++)
    ;
  return n == 0 ? 0 : (unsigned char)*a - (unsigned char)*b;
}

int strcmp(const char *a, const char *b) { return strncmp(a, b, (size_t)-1); }

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
