// ecall_loop.S: the trap round-trip benchmark. M-mode opens PMP, delegates ecall from
// U (cause 8) to S and drops to U-mode, which runs ITERATIONS ecalls. The S handler
// advances sepc past the ecall and srets, so each iteration is one U->S trap and one
// sret back. Then U stops the loop with an ecall that M handles: delegation is turned
// off (by S through an SBI-like ecall) and M powers off through the finisher.
#include "bench.h"

#ifndef ITERATIONS
#define ITERATIONS 1000000
#endif

    U_ECALLS_TO_S

user:
    li s0, ITERATIONS
    beqz s0, 2f
1:  ecall                   // U -> S, and sret back
    addi s0, s0, -1
    bnez s0, 1b
2:  li a7, 1                // tell S to finish
    ecall

    S_ECALL_RETURNS         // a7 = 1: to M, which powers off

    .align 2
m_trap:
    POWER_OFF
