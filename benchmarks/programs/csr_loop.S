// csr_loop.S: the CSR access benchmark. M-mode opens PMP and drops to S-mode, which
// runs ITERATIONS times the access CSR_OP selects, then ecalls to M, which powers off.
//   CSR_OP 0: csrr t1, sstatus       (the core's view of mstatus: harness/native/csrfast.c)
//   CSR_OP 1: csrc sstatus, SIE      (a write, as xv6's intr_off does around every lock)
//   CSR_OP 2: csrr t1, sscratch      (a CSR Unicorn reads itself: the reference)
#include "bench.h"

#ifndef ITERATIONS
#define ITERATIONS 1000000
#endif
#ifndef CSR_OP
#define CSR_OP 0
#endif

    START m_trap
    MRET_TO 1, supervisor

supervisor:
    li s0, ITERATIONS
    beqz s0, 2f
1:
#if CSR_OP == 0
    csrr t1, sstatus
#elif CSR_OP == 1
    csrci sstatus, 2
#else
    csrr t1, sscratch
#endif
    addi s0, s0, -1
    bnez s0, 1b
2:  ecall                   // S -> M: power off

    .align 2
m_trap:
    POWER_OFF
