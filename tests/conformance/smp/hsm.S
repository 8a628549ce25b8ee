// hsm.S: an S-mode program (at the kernel base, under privlab's firmware or OpenSBI)
// that starts the other hart through SBI HSM, interrupts it with SBI IPI, sends remote
// fences (RFENCE) and waits for it to stop itself. It runs on two harts, or on one.
//
// The firmware enters _start on one hart, the boot hart, with a0 = its id; every other
// hart waits in the firmware, STOPPED, until a hart_start names it. Which hart boots is
// the firmware's choice: privlab's boots hart 0; OpenSBI 1.1 (Debian's, QEMU's
// default) takes whichever hart first reaches its cold-boot lottery in sbi_init, and on
// a loaded host that is now and then hart 1. So nothing here assumes the boot hart is
// hart 0: "the other hart" is hart (boot hart id) xor 1.
//
// The boot hart prints, one hex word a line:
//   its own hart id
//   get_status(other) before: error, value (0, 1 = STOPPED)
//   hart_start(other): error (0); hart_start(other) again once it runs: error (-6,
//   ALREADY_AVAILABLE)
//   get_status(5), a hart that does not exist: error (-3, INVALID_PARAM)
//   send_ipi(other): error (0); remote_fence_i(all harts): 0; remote_sfence_vma(other): 0
//   get_status(other) once it has called hart_stop: value (1 = STOPPED)
//   what the other hart got: a0 (its hart id), a1 (the opaque value), scause of the IPI
// then powers off with SBI SRST (exit status 0). If hart_start(other) fails (one hart:
// INVALID_PARAM), or a get_status while waiting for it to stop does, it prints the
// words it has so far and shuts down for a system failure (exit status 1) instead of
// waiting for a hart that will not come. The same ELF runs on QEMU -smp 2 with OpenSBI.
#include "platform.h"

#define EXT_HSM 0x48534D
#define EXT_IPI 0x735049
#define EXT_RFENCE 0x52464E43
#define EXT_SRST 0x53525354

.macro SBI eid, fid
    li a7, \eid
    li a6, \fid
    ecall
.endm

// Store a0 (with `reg`: that register) in res[n].
.macro RESULT n, reg=a0
    la t6, res
    sd \reg, 8*\n(t6)
.endm

.macro PUTHEX reg              // print reg as 16 hex digits and a newline (clobbers t0-t3, a0-a7)
    mv t3, \reg
    li t1, 60
98: srl t2, t3, t1
    andi t2, t2, 15
    li t0, 10
    blt t2, t0, 97f
    addi t2, t2, 'a' - 10 - '0'
97: addi a0, t2, '0'
    li a7, 1                   // legacy console_putchar
    ecall
    addi t1, t1, -4
    bgez t1, 98b
    li a0, '\n'
    li a7, 1
    ecall
.endm

    .section .text.entry
    .globl _start
// The boot hart, from the firmware: a0 = its hart id. s3 = that id, s4 = the other
// hart's, s5 = the other hart's bit in a hart mask (SBI preserves all but a0 and a1).
_start:
    mv s3, a0
    xori s4, a0, 1
    li s5, 1
    sll s5, s5, s4
    RESULT 0
    mv a0, s4
    SBI EXT_HSM, 2             // hart_get_status(other)
    RESULT 1
    RESULT 2, a1
    mv a0, s4
    la a1, other_hart
    li a2, 0x1234
    SBI EXT_HSM, 0             // hart_start(other, other_hart, 0x1234)
    RESULT 3
    li s1, 4                   // the words so far, if that failed
    bnez a0, failed
1:  lw t0, other_ready
    beqz t0, 1b
    mv a0, s4
    la a1, other_hart
    li a2, 0
    SBI EXT_HSM, 0             // again, once it runs: it is started already
    RESULT 4
    li a0, 5
    SBI EXT_HSM, 2             // hart_get_status(5): no such hart
    RESULT 5
    mv a0, s5
    li a1, 0
    SBI EXT_IPI, 0             // send_ipi(the other hart's bit, base 0)
    RESULT 6
1:  lw t0, other_ssi
    beqz t0, 1b
    li a0, 0
    li a1, -1
    SBI EXT_RFENCE, 0          // remote_fence_i(every hart)
    RESULT 7
    mv a0, s5
    li a1, 0
    li a2, 0
    li a3, -1
    SBI EXT_RFENCE, 1          // remote_sfence_vma(the other hart, everything)
    RESULT 8
    li t0, 1
    sw t0, go_stop, t1
    li s1, 9                   // the words so far, if a get_status fails
1:  mv a0, s4
    SBI EXT_HSM, 2             // until the other hart has stopped itself
    bnez a0, failed
    li t0, 1
    bne a1, t0, 1b
    RESULT 9, a1
    li s1, 13
    jal print
    li a0, 0                   // shutdown
    li a1, 0                   // no reason: exit status 0
    SBI EXT_SRST, 0
    j .

failed:                        // s1 words are in res
    jal print
    li a0, 0                   // shutdown
    li a1, 1                   // system failure: exit status 1 on privlab's firmware
    SBI EXT_SRST, 0
    j .

// Print res[0 .. s1-1] (clobbers s0-s2, t0-t3, a0-a7).
print:
    mv s7, ra
    la s0, res
2:  ld s2, 0(s0)
    PUTHEX s2
    addi s0, s0, 8
    addi s1, s1, -1
    bnez s1, 2b
    mv ra, s7
    ret

// The other hart, started by hart_start: a0 = its id, a1 = the opaque value, satp = 0,
// SIE = 0.
other_hart:
    la t6, res
    sd a0, 8*10(t6)
    sd a1, 8*11(t6)
    la t0, s_trap
    csrw stvec, t0
    li t0, 2                   // SSIE
    csrs sie, t0
    csrsi sstatus, 2           // SIE
    li t0, 1
    sw t0, other_ready, t1
1:  wfi
    lw t0, other_ssi
    beqz t0, 1b
1:  lw t0, go_stop
    beqz t0, 1b
    SBI EXT_HSM, 1             // hart_stop: does not return
    j .

    .align 2
s_trap:
    csrr t0, scause
    la t6, res
    sd t0, 8*12(t6)
    li t0, 2
    csrc sip, t0               // SSIP
    li t0, 1
    sw t0, other_ssi, t1
    sret

    .data
    .align 3
res:         .dword 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
other_ready: .word 0
other_ssi:   .word 0
go_stop:     .word 0
