// clint.c: the machine timer, forwarded to S-mode.
//
// The kernel asks for a timer interrupt with SBI set_timer (sbicalls.c -> timer_set); when
// mtime reaches mtimecmp the hart takes a machine timer interrupt (mtrap.S ->
// timer_interrupt), which raises the *supervisor* timer interrupt (mip.STIP) and masks
// MTIE so it does not fire again. The kernel's next set_timer clears STIP and re-arms.
#include "fw.h"
#include "platform.h"
#include "riscv.h"

static volatile uint32_t *const mtimecmp =
    (volatile uint32_t *)(PLATFORM_CLINT_BASE + CLINT_MTIMECMP);  // hart 0

void timer_set(uint64_t when) {
  // Written as two 32-bit halves (works for RV32 too); the high half first goes to
  // all-ones so no spurious compare happens between the two stores.
  mtimecmp[1] = 0xffffffff;
  mtimecmp[0] = (uint32_t)when;
  mtimecmp[1] = (uint32_t)(when >> 32);
  mip_clear(MIP_STIP);
  mie_set(MIE_MTIE);
}

void timer_interrupt(void) {
  mie_clear(MIE_MTIE);
  mip_set(MIP_STIP);  // the kernel takes it as a supervisor timer interrupt
}
