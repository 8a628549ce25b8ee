// gdb_target.c: what `make qemu-gdb` debugs, reduced: kmain calls middle, which calls
// leaf (each kept a real call, with a frame) DEPTH times, then the finisher powers off
// with status 0. gdb breaks at leaf, continues, and reads the call chain.
#include "platform.h"

#define DEPTH 3

volatile int calls;

__attribute__((noinline)) void leaf(int n) {
  calls += n;
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void middle(int n) {
  leaf(n);
  asm volatile("" ::: "memory");      // keeps the call from being a tail call
}

void kmain(void) {
  for (int i = 1; i <= DEPTH; i++)
    middle(i);
  *(volatile unsigned *)PLATFORM_FINISHER_BASE = FINISHER_PASS;
  for (;;)
    ;
}

__attribute__((naked, section(".text.entry"))) void _start(void) {
  asm volatile("la sp, __stack_top\n  j kmain");
}
