// clock_pace.S: how much work a guest does in a fixed span of its own time. M-mode
// opens PMP, delegates ecall from U (cause 8) to S and drops to U-mode, which makes
// U->S->U ecall round trips until the CLINT's mtime has advanced by TICKS (at 10 MHz;
// the default 1,000,000 is 100 ms, one xv6 timer tick). Then M prints the number of
// round trips (a multiple of 64) in decimal on UART0 and powers off through the finisher.
//
// On a deterministic clock (privlab, QEMU -icount shift=0) the count depends only on
// the instructions per round trip; on QEMU's host clock it is the number QEMU manages
// in 100 ms of the host's time. A kernel paced by its timer (xv6's sleep, kill and
// preemption) does that much more or less work per tick: benchmarks/clock_pace.py.
#include "bench.h"

#ifndef TICKS
#define TICKS 1000000
#endif
#define BATCH 64

    U_ECALLS_TO_S

user:
    li s1, PLATFORM_CLINT_BASE + CLINT_MTIME
    ld s2, 0(s1)
1:  ld t1, 0(s1)            // wait for mtime to move, so the span starts on an edge
    beq t1, s2, 1b
    li t0, TICKS
    add s2, t1, t0          // the end of the span
    li s0, 0
2:  li t2, BATCH            // BATCH round trips between two reads of mtime (a device
3:  ecall                   // read costs far more than a round trip on privlab)
    addi t2, t2, -1
    bnez t2, 3b
    addi s0, s0, BATCH
    ld t1, 0(s1)
    bltu t1, s2, 2b
    li a7, 1                // tell S to finish: S hands the count to M
    ecall

    S_ECALL_RETURNS         // a7 = 1: to M, with the count in s0

    .align 2
m_trap:                     // print s0 in decimal, then a newline, then power off
    la t2, digits_end
    li t3, 10
3:  remu t4, s0, t3
    addi t4, t4, '0'
    addi t2, t2, -1
    sb t4, 0(t2)
    divu s0, s0, t3
    bnez s0, 3b
    li t5, PLATFORM_UART0_BASE
4:  lbu a0, 0(t2)
5:  lbu t6, 5(t5)           // LSR: wait for THRE (bit 5)
    andi t6, t6, 0x20
    beqz t6, 5b
    sb a0, 0(t5)
    addi t2, t2, 1
    la t6, digits_end + 1
    bltu t2, t6, 4b
    POWER_OFF

    .data
digits:
    .skip 24
digits_end:
    .byte '\n'
