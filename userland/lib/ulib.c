// ulib.c: small helpers built on the system calls.
#include "user.h"

// Any child: waitpid() blocks until one has exited.
int wait(int *status) { return waitpid(-1, status); }

int getchar(void) {
  char c;
  return read(STDIN, &c, 1) == 1 ? (unsigned char)c : -1;
}

// Read a line (keeping the newline) into buf, at most max-1 bytes.
char *gets(char *buf, int max) {
  int i = 0;
  while (i + 1 < max) {
    int c = getchar();
    if (c < 0)
      break;
    buf[i++] = (char)c;
    if (c == '\n' || c == '\r')
      break;
  }
  buf[i] = 0;
  return buf;
}

uint64_t time_ms(void) {
  struct timeval tv;
  if (get_time(&tv, 0) < 0)
    return 0;
  return (uint64_t)tv.sec * 1000 + tv.usec / 1000;
}

void sleep_ms(uint64_t ms) {
  uint64_t end = time_ms() + ms;
  while (time_ms() < end)
    yield();
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

void srand(uint64_t seed) { rng_state = seed ? seed : 0x9E3779B97F4A7C15ull; }

uint64_t rand64(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1Dull;
}

// A raw system call with any number and arguments (for tests and the fuzzer).
long syscall(long n, long a0, long a1, long a2, long a3, long a4, long a5) {
  register long r0 asm("a0") = a0;
  register long r1 asm("a1") = a1;
  register long r2 asm("a2") = a2;
  register long r3 asm("a3") = a3;
  register long r4 asm("a4") = a4;
  register long r5 asm("a5") = a5;
  register long r7 asm("a7") = n;
  asm volatile("ecall" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r7)
               : "memory");
  return r0;
}
