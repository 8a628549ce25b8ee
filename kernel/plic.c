// plic.c: the platform-level interrupt controller, from the kernel's side: the boot
// hart's S-mode context takes the devices we drive (OpenSBI may boot the kernel on any
// hart; the other harts enable no source). The firmware delegated
// SEIP (mideleg), so a claimable source raises a supervisor external interrupt.
#include "defs.h"
#include "platform.h"
#include "riscv.h"

#define PLIC_REG(off) (*(volatile uint32_t *)(uintptr_t)(PLATFORM_PLIC_BASE + (off)))
#define S_CTX         (boot.hartid * PLIC_NUM_CONTEXTS + PLIC_CONTEXT_S)
#define S_ENABLE(src) PLIC_REG(PLIC_ENABLE + S_CTX * PLIC_ENABLE_STRIDE + (src) / 32 * 4)
#define S_CONTEXT(r)  PLIC_REG(PLIC_CONTEXT + S_CTX * PLIC_CONTEXT_STRIDE + (r))

// Let source src interrupt S-mode: priority 1 (0 would mean "never"), enabled in our
// context, threshold 0 so every priority above it gets through.
void plic_enable(int src) {
  PLIC_REG(PLIC_PRIORITY + 4 * src) = 1;
  S_ENABLE(src) |= 1u << (src % 32);
  S_CONTEXT(PLIC_THRESHOLD) = 0;
  w_sie(r_sie() | SIE_SEIE);
}

// The highest-priority pending source, now in service; 0 if none.
int plic_claim(void) { return (int)S_CONTEXT(PLIC_CLAIM); }

// Source src was serviced: it may interrupt again.
void plic_complete(int src) { S_CONTEXT(PLIC_CLAIM) = (uint32_t)src; }
