// smc.S: hart 1 rewrites code that hart 0 has already run, and hart 0 runs it again
// without a fence.i of its own. QEMU invalidates translated code on every store, by
// any hart, so hart 0 sees the new code there; xv6 relies on that (a program exec'd
// on one hart is loaded into pages whose old code another hart ran). Hart 0 prints
// what `get` returned before (1) and after (2) the rewrite, then powers off.
#include "common.h"

    .section .text.entry
    .globl _start
_start:
    csrr s0, mhartid
    bnez s0, writer
    li s1, 10                // run `get` often enough that it is translated, cached
1:  call get
    addi s1, s1, -1
    bnez s1, 1b
    sw a0, before, t0
    li t0, 1
    sw t0, asked, t1
2:  lw t0, patched           // wait for hart 1: no fence.i follows
    beqz t0, 2b
    call get
    sw a0, after, t0
    lw a0, before
    PRINT_HEX
    lw a0, after
    PRINT_HEX
    PASS

writer:
    li t0, 1
    bne s0, t0, park
1:  lw t0, asked
    beqz t0, 1b
    la t0, get
    li t1, 0x00200513        // li a0, 2 (addi a0, zero, 2)
    sw t1, 0(t0)
    fence.i                  // hart 1's own fence: it orders nothing for hart 0
    li t0, 1
    sw t0, patched, t1
park:
    wfi
    j park

    .section .text.get, "ax"
    .align 12                // a page of its own: only hart 1 writes it
    .globl get
get:
    .option push
    .option norvc
    li a0, 1
    .option pop
    ret

    .data
    .align 3
    .globl before, after
before:  .word 0
after:   .word 0
asked:   .word 0
patched: .word 0
