// setup.h: the M-mode state every hart sets before its first mret to S (fwmain.c for
// hart 0, hsm.c for a hart that hart_start starts).
#ifndef SETUP_H
#define SETUP_H

#include "riscv.h"

void mtrap_vector(void);  // mtrap.S

// Exceptions the S-mode kernel handles itself (see kernel/trap.c).
#define DELEGATED_EXCEPTIONS                                                    \
  (BIT(CAUSE_MISALIGNED_FETCH) | BIT(CAUSE_FAULT_FETCH) |                      \
   BIT(CAUSE_ILLEGAL_INSTRUCTION) | BIT(CAUSE_BREAKPOINT) |                     \
   BIT(CAUSE_MISALIGNED_LOAD) | BIT(CAUSE_FAULT_LOAD) |                        \
   BIT(CAUSE_MISALIGNED_STORE) | BIT(CAUSE_FAULT_STORE) |                      \
   BIT(CAUSE_USER_ECALL) | BIT(CAUSE_EXEC_PAGE_FAULT) |                        \
   BIT(CAUSE_LOAD_PAGE_FAULT) | BIT(CAUSE_STORE_PAGE_FAULT))
#define DELEGATED_INTERRUPTS (MIP_SSIP | MIP_STIP | MIP_SEIP)

// Always inlined: hart 0's boot path is the same code as before there were harts.
__attribute__((always_inline)) static inline void machine_setup(void) {
  // One TOR entry up to the top of the address space: S and U may access everything.
  w_pmpaddr0(~(uintptr_t)0);
  w_pmpcfg0(PMP_A_TOR | PMP_R | PMP_W | PMP_X);

  w_medeleg(DELEGATED_EXCEPTIONS);
  w_mideleg(DELEGATED_INTERRUPTS);
  w_mcounteren(COUNTEREN_CY | COUNTEREN_TM | COUNTEREN_IR);

  // mret will drop to S with interrupts as the kernel sets them; M interrupts (the
  // timer) are always taken from S, whatever mstatus.MIE says.
  w_mstatus((r_mstatus() & ~MSTATUS_MPP) | MSTATUS_MPP_S);
  w_satp(0);
}

#endif // SETUP_H
