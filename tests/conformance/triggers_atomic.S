// triggers_atomic.S: load and store triggers on atomic accesses, as QEMU 7.2 fires
// them: an AMO both reads and writes, so a load trigger and a store trigger on its
// word each fire; LR fires only a load trigger, SC only a store trigger. A trigger
// fires before the access, so nothing is written, and an SC after an LR that never ran
// fails (rd = 1) without trapping; an LR/SC pair or an AMO on the next word neither
// fires nor fails, and a store to the watched word right after that AMO fires. The same holds in M without translation and in S through the page tables
// (the trigger on the virtual address VA = TEST_VA, mapped to `page`).
//
// Expected traps, in order (breakpoint to M, tval 0; first from M, then from S):
//  1/11: amoadd.w, load trigger        2/12: lr.w, load trigger
//  4/14: amoswap.w, store trigger      5/15: sc.w (after an lr.w), store trigger
//  8/18: sw to the watched word right after an amoadd.w on the next word
//  20, 21: supervisor_ecall (M arms the store trigger; then M ends the test)
#include "conformance.h"

#define TYPE(t) ((t) << (__riscv_xlen - MCONTROL_TYPE_FROM_TOP))
#define MC TYPE(2)
#define VA TEST_VA

// tdata1 := an mcontrol trigger with these enables (from M only).
.macro ARM bits
    li t0, MC | \bits
    csrw tdata1, t0
.endm

.macro FIRES check, from, insn:vararg
    EXPECT \check, PRV_M, \from, CAUSE_BREAKPOINT, .Linsn\@, 0, RESUME_AT, .Lnext\@
.Linsn\@:
    \insn
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

// With a load trigger on the word at s0: checks c..c+2, traps from `from`.
.macro ATOMICS_LOAD c, from
    li t1, 1
    FIRES \c, \from, amoadd.w t2, t1, (s0)
    FIRES \c + 1, \from, lr.w t2, (s0)
    sc.w t2, t1, (s0)
    CHECK_REG \c + 2, t2, 1             // the lr never ran: no reservation
.endm

// With a store trigger on the word at s0 (s1: the next word): checks c..c+4.
.macro ATOMICS_STORE c, from
    li t1, 1
    FIRES \c, \from, amoswap.w t2, t1, (s0)
    lr.w t2, (s0)
    FIRES \c + 1, \from, sc.w t2, t1, (s0)
    lr.w t2, (s1)
    sc.w t2, t1, (s1)
    CHECK_REG \c + 2, t2, 0             // no trigger there: it succeeds
    lw t2, 0(s0)
    CHECK_REG \c + 3, t2, 0             // no AMO or SC on the watched word wrote
    amoadd.w t2, t1, (s1)               // no trigger; then, in the same block, a store
    FIRES \c + 4, \from, sw t1, 0(s0)   // to the watched word still fires
.endm

TEST_MAIN triggers_atomic
    la s0, page
    addi s1, s0, 8
    csrw tselect, zero
    csrw tdata2, s0
    ARM MCONTROL_M | MCONTROL_LOAD
    ATOMICS_LOAD 1, PRV_M
    ARM MCONTROL_M | MCONTROL_STORE
    ATOMICS_STORE 4, PRV_M
    sw zero, 8(s0)

    call vm_init
    mv s11, a0
    li a0, VA
    la a1, page
    li a2, PTE_R | PTE_W | PTE_A | PTE_D
    call vm_map
    li t0, VA
    csrw tdata2, t0
    ARM MCONTROL_S | MCONTROL_LOAD
    csrw satp, s11
    sfence.vma
    MRET_TO PRV_S, in_s
in_s:
    li s0, VA
    addi s1, s0, 8
    ATOMICS_LOAD 11, PRV_S
    ECALL_TO_M 20, PRV_S
    ARM MCONTROL_S | MCONTROL_STORE
    MRET_TO PRV_S, in_s2
in_s2:
    ATOMICS_STORE 14, PRV_S
    ECALL_TO_M 21, PRV_S
    li t0, MC
    csrw tdata1, t0
    csrw satp, zero
    sfence.vma
    TEST_PASS

    .data
    .balign PAGE_SIZE
page:
    .space PAGE_SIZE
