// hsm.S: an S-mode program (at the kernel base, under privlab's firmware or OpenSBI)
// that starts hart 1 through SBI HSM, interrupts it with SBI IPI, sends remote fences
// (RFENCE) and waits for it to stop itself. Hart 0 prints, one hex word a line:
//   get_status(1) before: error, value (0, 1 = STOPPED)
//   hart_start(1): error (0); hart_start(1) again once it runs: error (-6,
//   ALREADY_AVAILABLE)
//   get_status(5), a hart that does not exist: error (-3, INVALID_PARAM)
//   send_ipi(hart 1): error (0); remote_fence_i(all harts): 0; remote_sfence_vma(1): 0
//   get_status(1) once hart 1 has called hart_stop: value (1 = STOPPED)
//   what hart 1 got: a0 (its hart id, 1), a1 (the opaque value), scause of the IPI
// then powers off with SBI SRST. The same ELF runs on QEMU -smp 2 with OpenSBI.
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
_start:
    bnez a0, 9f                // the firmware enters here on hart 0 only
    la sp, __stack_top
    li a0, 1
    SBI EXT_HSM, 2             // hart_get_status(1)
    RESULT 0
    RESULT 1, a1
    li a0, 1
    la a1, hart1
    li a2, 0x1234
    SBI EXT_HSM, 0             // hart_start(1, hart1, 0x1234)
    RESULT 2
1:  lw t0, h1_ready
    beqz t0, 1b
    li a0, 1
    la a1, hart1
    li a2, 0
    SBI EXT_HSM, 0             // again, once it runs: it is started already
    RESULT 3
    li a0, 5
    SBI EXT_HSM, 2             // hart_get_status(5): no such hart
    RESULT 4
    li a0, 2
    li a1, 0
    SBI EXT_IPI, 0             // send_ipi(mask 0b10, base 0)
    RESULT 5
1:  lw t0, h1_ssi
    beqz t0, 1b
    li a0, 0
    li a1, -1
    SBI EXT_RFENCE, 0          // remote_fence_i(every hart)
    RESULT 6
    li a0, 2
    li a1, 0
    li a2, 0
    li a3, -1
    SBI EXT_RFENCE, 1          // remote_sfence_vma(hart 1, everything)
    RESULT 7
    li t0, 1
    sw t0, go_stop, t1
1:  li a0, 1
    SBI EXT_HSM, 2             // until hart 1 has stopped itself
    li t0, 1
    bne a1, t0, 1b
    RESULT 8, a1
    la s0, res
    li s1, 12
2:  ld s2, 0(s0)
    PUTHEX s2
    addi s0, s0, 8
    addi s1, s1, -1
    bnez s1, 2b
    li a0, 0                   // shutdown
    li a1, 0                   // no reason: exit status 0
    SBI EXT_SRST, 0
9:  wfi
    j 9b

// Hart 1, started by hart_start: a0 = 1, a1 = the opaque value, satp = 0, SIE = 0.
hart1:
    la t6, res
    sd a0, 8*9(t6)
    sd a1, 8*10(t6)
    la t0, s_trap
    csrw stvec, t0
    li t0, 2                   // SSIE
    csrs sie, t0
    csrsi sstatus, 2           // SIE
    li t0, 1
    sw t0, h1_ready, t1
1:  wfi
    lw t0, h1_ssi
    beqz t0, 1b
1:  lw t0, go_stop
    beqz t0, 1b
    SBI EXT_HSM, 1             // hart_stop: does not return
    j .

    .align 2
s_trap:
    csrr t0, scause
    la t6, res
    sd t0, 8*11(t6)
    li t0, 2
    csrc sip, t0               // SSIP
    li t0, 1
    sw t0, h1_ssi, t1
    sret

    .data
    .align 3
res:      .dword 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
h1_ready: .word 0
h1_ssi:   .word 0
go_stop:  .word 0
