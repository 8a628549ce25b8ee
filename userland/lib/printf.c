// printf.c: formatted output for user programs: %d %i %u %x %p %s %c %% with the
// l, ll and z length modifiers, and a field width (%5d, %-8s, %08x). Each printf
// formats into a buffer and makes one write() call.
#include "user.h"

struct out {
  char *buf;
  size_t size, n;  // n counts every byte, even those that did not fit
};

static void put(struct out *o, char c) {
  if (o->n + 1 < o->size)
    o->buf[o->n] = c;
  o->n++;
}

static void pad(struct out *o, int count, char c) {
  while (count-- > 0)
    put(o, c);
}

static void number(struct out *o, uint64_t x, int base, int negative, int width, int left,
                   char padc) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[x % base];
    x /= base;
  } while (x);
  int len = n + negative;
  if (!left && padc == ' ')
    pad(o, width - len, ' ');
  if (negative)
    put(o, '-');
  if (!left && padc == '0')
    pad(o, width - len, '0');
  while (n > 0)
    put(o, digits[--n]);
  if (left)
    pad(o, width - len, ' ');
}

static uint64_t next_int(va_list *ap, int longs, int is_signed) {
  if (longs >= 2)
    return is_signed ? (uint64_t)va_arg(*ap, long long) : va_arg(*ap, unsigned long long);
  if (longs == 1)
    return is_signed ? (uint64_t)va_arg(*ap, long) : va_arg(*ap, unsigned long);
  return is_signed ? (uint64_t)(int64_t)va_arg(*ap, int) : va_arg(*ap, unsigned int);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap0) {
  struct out o = {buf, size, 0};
  va_list ap;
  va_copy(ap, ap0);
  for (; *fmt; fmt++) {
    if (*fmt != '%') {
      put(&o, *fmt);
      continue;
    }
    int left = 0, width = 0, longs = 0;
    char padc = ' ';
    if (*++fmt == '-')
      left = 1, fmt++;
    if (*fmt == '0')
      padc = '0', fmt++;
    while (*fmt >= '0' && *fmt <= '9')
      width = width * 10 + (*fmt++ - '0');
    for (; *fmt == 'l' || *fmt == 'z'; fmt++)
      longs += *fmt == 'z' ? (sizeof(size_t) == 8 ? 2 : 1) : 1;
    switch (*fmt) {
    case 'd': case 'i': {
      int64_t v = (int64_t)next_int(&ap, longs, 1);
      number(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, v < 0, width, left, padc);
      break;
    }
    case 'u': number(&o, next_int(&ap, longs, 0), 10, 0, width, left, padc); break;
    case 'x': number(&o, next_int(&ap, longs, 0), 16, 0, width, left, padc); break;
    case 'p':
      put(&o, '0'), put(&o, 'x');
      number(&o, (uintptr_t)va_arg(ap, void *), 16, 0, 0, 0, ' ');
      break;
    case 'c': put(&o, (char)va_arg(ap, int)); break;
    case 's': {
      const char *s = va_arg(ap, const char *);
      s = s ? s : "(null)";
      int len = (int)strlen(s);
      if (!left)
        pad(&o, width - len, ' ');
      while (*s)
        put(&o, *s++);
      if (left)
        pad(&o, width - len, ' ');
      break;
    }
    case 0: fmt--; break;
    default: put(&o, '%'); put(&o, *fmt); break;
    }
  }
  va_end(ap);
  if (size > 0)
    buf[o.n < size ? o.n : size - 1] = 0;
  return (int)o.n;
}

int snprintf(char *buf, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  return n;
}

static int vfprintf(int fd, const char *fmt, va_list ap) {
  char buf[512];
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  write(fd, buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
  return n;
}

int fprintf(int fd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vfprintf(fd, fmt, ap);
  va_end(ap);
  return n;
}

int printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vfprintf(STDOUT, fmt, ap);
  va_end(ap);
  return n;
}
