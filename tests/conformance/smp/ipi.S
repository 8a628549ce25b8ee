// ipi.S: hart ids, per-hart CSRs and an IPI through the CLINT's msip, on two harts.
// Each hart stores its mhartid in ids[mhartid] and its own mscratch value. Hart 1
// enables MSIE and waits in wfi; hart 0 raises hart 1's msip; hart 1 takes the machine
// software interrupt (mcause 0x8000...03), records it, clears its msip and reports
// back. Hart 0 prints ids[0], ids[1], hart 1's mcause, hart 1's msip after the clear,
// hart 0's mscratch and hart 1's, then powers off. Harts past the second wait in wfi.
#include "common.h"

    .section .text.entry
    .globl _start
_start:
    csrr s0, mhartid
    li t0, 2
    bgeu s0, t0, park
    la t0, ids
    slli t1, s0, 2
    add t0, t0, t1
    sw s0, 0(t0)
    addi t1, s0, 0x100        // mscratch is each hart's own
    csrw mscratch, t1
    bnez s0, hart1
    // hart 0: wait until hart 1 is ready, send the IPI, wait for the report.
    la t0, ready
1:  lw t1, 0(t0)
    beqz t1, 1b
    li t0, PLATFORM_CLINT_BASE + CLINT_MSIP + 4
    li t1, 1
    sw t1, 0(t0)
    la t0, reported
1:  lw t1, 0(t0)
    beqz t1, 1b
    lw a0, ids
    PRINT_HEX
    lw a0, ids + 4
    PRINT_HEX
    lw a0, cause1
    PRINT_HEX
    lw a0, msip1
    PRINT_HEX
    csrr a0, mscratch
    PRINT_HEX
    lw a0, scratch1
    PRINT_HEX
    PASS

hart1:
    la t0, handler
    csrw mtvec, t0
    li t0, 1 << 3             // MSIE
    csrw mie, t0
    csrsi mstatus, 8          // MIE
    la t0, ready
    li t1, 1
    sw t1, 0(t0)
1:  wfi
    lw t1, seen
    beqz t1, 1b
    csrr t1, mscratch
    sw t1, scratch1, t0
    li t1, PLATFORM_CLINT_BASE + CLINT_MSIP + 4
    lw t1, 0(t1)
    sw t1, msip1, t0
    fence
    la t0, reported
    li t1, 1
    sw t1, 0(t0)
park:
    wfi
    j park

    .align 2
handler:
    csrr t2, mcause
    sw t2, cause1, t3
    li t2, PLATFORM_CLINT_BASE + CLINT_MSIP + 4
    sw zero, 0(t2)
    li t2, 1
    sw t2, seen, t3
    mret

    .data
    .align 3
ids:      .word 0, 0
cause1:   .word 0
msip1:    .word 0
scratch1: .word 0
ready:    .word 0
seen:     .word 0
reported: .word 0
