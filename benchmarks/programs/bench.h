// bench.h: what every benchmark program needs around its loop: PMP opened for S and
// U (QEMU 7.2 refuses an mret to U without it), dropping from M to the loop's
// privilege, and powering off with status 0.
#include "platform.h"

#if __riscv_xlen == 64
#define PMP_ALL -1
#else
#define PMP_ALL 0xffffffff
#endif

.macro OPEN_PMP
    li t0, PMP_ALL
    csrw pmpaddr0, t0
    li t0, 0x1f             // NAPOT, R, W, X
    csrw pmpcfg0, t0
.endm

.macro START m_trap            // _start, in M: PMP opened, mtvec = \m_trap
    .section .text.entry
    .globl _start
_start:
    OPEN_PMP
    la t0, \m_trap
    csrw mtvec, t0
.endm

.macro MRET_TO priv, entry    // mret to \entry at \priv (0 U, 1 S)
    la t0, \entry
    csrw mepc, t0
    li t0, 0x1800           // MPP = \priv
    csrc mstatus, t0
    .if \priv
    li t0, \priv << 11
    csrs mstatus, t0
    .endif
    mret
.endm

.macro U_ECALLS_TO_S          // _start for a U loop whose ecalls S_ECALL_RETURNS takes:
    START m_trap              // stvec = s_trap, ecall from U (cause 8) delegated to S,
    la t0, s_trap             // then U-mode at `user`
    csrw stvec, t0
    li t0, 1 << 8
    csrw medeleg, t0
    MRET_TO 0, user
.endm

.macro S_ECALL_RETURNS        // s_trap: an ecall from U returns at once (sepc + 4); one
    .align 2                  // with a7 != 0 goes on to M as an ecall from S
s_trap:
    bnez a7, 1f
    csrr t0, sepc
    addi t0, t0, 4
    csrw sepc, t0
    sret
1:  ecall
.endm

.macro POWER_OFF
    li t0, PLATFORM_FINISHER_BASE
    li t1, FINISHER_PASS
    sw t1, 0(t0)
1:  j 1b
.endm
