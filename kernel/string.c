// string.c: the few C library string and memory functions the kernel uses. The
// compiler may also call memset/memcpy itself, for struct copies and zeroing. The
// user library is linked with this same file (harness/build/images.py).
#include "defs.h"

#define WORD sizeof(uintptr_t)
#define ALIGNED(p) (((uintptr_t)(p) % WORD) == 0)

// Pages are cleared and copied a word at a time: the byte loop alone would make
// kalloc() and fork() several times slower.
void *memset(void *dst, int c, size_t n) {
  uint8_t *d = dst;
  if (ALIGNED(d) && n % WORD == 0) {
    uintptr_t w = (uint8_t)c;
    w *= (uintptr_t)-1 / 0xff;  // the byte in every lane
    for (uintptr_t *wd = dst; n > 0; n -= WORD)
      *wd++ = w;
    return dst;
  }
  while (n-- > 0)
    *d++ = (uint8_t)c;
  return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
  uint8_t *d = dst;
  const uint8_t *s = src;
  if (s < d && s + n > d) {  // overlapping, source below: copy backwards
    while (n-- > 0)
      d[n] = s[n];
  } else if (ALIGNED(d) && ALIGNED(s) && n % WORD == 0) {
    uintptr_t *wd = dst;
    const uintptr_t *ws = src;
    for (; n > 0; n -= WORD)
      *wd++ = *ws++;
  } else {
    while (n-- > 0)
      *d++ = *s++;
  }
  return dst;
}

void *memcpy(void *dst, const void *src, size_t n) { return memmove(dst, src, n); }

int memcmp(const void *a, const void *b, size_t n) {
  const uint8_t *x = a, *y = b;
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
  return n == 0 ? 0 : (uint8_t)*a - (uint8_t)*b;
}

int strcmp(const char *a, const char *b) { return strncmp(a, b, (size_t)-1); }

// Like strncpy, but always NUL-terminates (n > 0).
char *safestrcpy(char *dst, const char *src, size_t n) {
  size_t i = 0;
  for (; i + 1 < n && src[i]; i++)
    dst[i] = src[i];
  dst[i] = 0;
  return dst;
}

// Copy at most n bytes of src into dst and fill the rest of the n with zeros: a
// fixed-size name field (a directory entry's), not terminated when src fills it.
void strncpy_pad(char *dst, const char *src, size_t n) {
  size_t i = 0;
  for (; i < n && src[i]; i++)
    dst[i] = src[i];
  for (; i < n; i++)
    dst[i] = 0;
}
