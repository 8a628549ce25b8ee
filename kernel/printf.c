// printf.c: formatted output to the console, and panic().
//
// Supports %d %i %u %x %p %s %c %% with the length modifiers l, ll and z. Output is
// gathered in a small buffer so a line reaches the firmware in one DBCN call.
#include <stdarg.h>

#include "defs.h"

struct out {
  char buf[128];
  size_t n;
};

static void flush(struct out *o) {
  console_write(o->buf, o->n);
  o->n = 0;
}

static void put(struct out *o, char c) {
  if (o->n == sizeof(o->buf))
    flush(o);
  o->buf[o->n++] = c;
}

static void putnum(struct out *o, uint64_t x, int base, int is_signed) {
  char digits[24];
  int i = 0, negative = is_signed && (int64_t)x < 0;
  if (negative)
    x = -x;
  do {
    digits[i++] = "0123456789abcdef"[x % base];
    x /= base;
  } while (x != 0);
  if (negative)
    put(o, '-');
  while (i > 0)
    put(o, digits[--i]);
}

// The next integer argument, widened to 64 bits according to the length modifier.
#define NEXT_INT(ap, longs, is_signed)                                                 \
  ((longs) >= 2   ? (is_signed ? (uint64_t)va_arg(ap, long long) : va_arg(ap, unsigned long long)) \
   : (longs) == 1 ? (is_signed ? (uint64_t)va_arg(ap, long) : va_arg(ap, unsigned long))           \
                  : (is_signed ? (uint64_t)va_arg(ap, int) : va_arg(ap, unsigned int)))

static void vprintf(struct out *o, const char *fmt, va_list ap) {
  for (; *fmt; fmt++) {
    if (*fmt != '%') {
      put(o, *fmt);
      continue;
    }
    int longs = 0;
    while (fmt[1] == 'l' || fmt[1] == 'z') {
      longs += fmt[1] == 'z' ? (sizeof(size_t) == 8 ? 2 : 1) : 1;
      fmt++;
    }
    switch (*++fmt) {
    case 'd': case 'i': putnum(o, NEXT_INT(ap, longs, 1), 10, 1); break;
    case 'u': putnum(o, NEXT_INT(ap, longs, 0), 10, 0); break;
    case 'x': putnum(o, NEXT_INT(ap, longs, 0), 16, 0); break;
    case 'p':
      put(o, '0');
      put(o, 'x');
      putnum(o, (uintptr_t)va_arg(ap, void *), 16, 0);
      break;
    case 'c': put(o, (char)va_arg(ap, int)); break;
    case 's': {
      const char *s = va_arg(ap, const char *);
      for (s = s ? s : "(null)"; *s; s++)
        put(o, *s);
      break;
    }
    case '%': put(o, '%'); break;
    case 0: return;
    default: put(o, '%'); put(o, *fmt); break;
    }
  }
}

void printf(const char *fmt, ...) {
  struct out o = {.n = 0};
  va_list ap;
  va_start(ap, fmt);
  vprintf(&o, fmt, ap);
  va_end(ap);
  flush(&o);
}

// A kernel bug: report it with a backtrace and power off with "system failure".
void panic(const char *fmt, ...) {
  struct out o = {.n = 0};
  va_list ap;
  va_start(ap, fmt);
  printf("panic: ");
  vprintf(&o, fmt, ap);
  va_end(ap);
  put(&o, '\n');
  flush(&o);
  backtrace();
  sbi_system_failure();
}
