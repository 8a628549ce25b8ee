// finisher.c: power off through the sifive_test device at PLATFORM_FINISHER_BASE.
// QEMU and privlab exit with status 0 on FINISHER_PASS and `code` on
// FINISHER_FAIL | code << 16.
#include "fw.h"
#include "platform.h"

static volatile uint32_t *const finisher = (volatile uint32_t *)PLATFORM_FINISHER_BASE;

void finisher_exit(uint32_t status) {
  finisher[0] = status == 0 ? FINISHER_PASS : (FINISHER_FAIL | (status << 16));
  for (;;)
    ;  // the store above ends the machine
}

void finisher_reset(void) {
  finisher[0] = FINISHER_RESET;
  for (;;)
    ;
}
