// div64.c: 64-bit division for RV32, where the compiler turns `uint64_t / uint64_t`
// into calls to __udivdi3/__umoddi3 (normally from libgcc/compiler-rt, which
// freestanding code does not link). Shift-and-subtract: slow, but rare here (the
// timer and get_time). Empty on RV64, which divides 64-bit values in hardware.
// The user library is linked with this same file (harness/build/images.py).
#include <stdint.h>

#if __riscv_xlen == 32
static uint64_t divmod(uint64_t n, uint64_t d, uint64_t *rem) {
  uint64_t q = 0, r = 0;
  for (int bit = 63; bit >= 0; bit--) {
    r = (r << 1) | ((n >> bit) & 1);
    if (r >= d) {
      r -= d;
      q |= (uint64_t)1 << bit;
    }
  }
  *rem = r;
  return q;
}

uint64_t __udivdi3(uint64_t n, uint64_t d) {
  uint64_t r;
  return divmod(n, d, &r);
}

uint64_t __umoddi3(uint64_t n, uint64_t d) {
  uint64_t r;
  divmod(n, d, &r);
  return r;
}

int64_t __divdi3(int64_t n, int64_t d) {
  uint64_t q = __udivdi3(n < 0 ? -(uint64_t)n : (uint64_t)n, d < 0 ? -(uint64_t)d : (uint64_t)d);
  return (n < 0) != (d < 0) ? -(int64_t)q : (int64_t)q;
}

int64_t __moddi3(int64_t n, int64_t d) {
  uint64_t r = __umoddi3(n < 0 ? -(uint64_t)n : (uint64_t)n, d < 0 ? -(uint64_t)d : (uint64_t)d);
  return n < 0 ? -(int64_t)r : (int64_t)r;
}
#endif
