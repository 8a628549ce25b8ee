// pmp_paged.S: PMP decides a translated access by its own physical address, so entries
// finer than a page divide a page that S reaches through the page tables.
//
// Two data pages are mapped for S at VA_A = TEST_VA and VA_B = TEST_VA + 0x1000 (R W A D).
// PMP entry 0 (NA4, no permissions) covers the word at offset 0x100 of page A, entry 1
// (NA4, no permissions) the first word of page B, and entry 2 (NAPOT, RWX) all memory.
// From S, with satp on:
//   lw VA_A + 0      passes (the page's first word, though entry 0 divides the page)
//   lw VA_A + 0x100  load access fault, tval = VA_A + 0x100
//   sw VA_A + 0x104  passes (the next word)
//   sw VA_A + 0x100  store access fault, tval = VA_A + 0x100
//   lw VA_B + 8      passes, though the page's first word is denied
//   lw VA_B + 0      load access fault, tval = VA_B
//
// Unicorn 2.1.4 hands its PMP check only the page of a translated access
// (docs/unicorn.md#pmp-check-gets-the-page-under-translation), which would decide all
// six at the page's first bytes; QEMU 7.2 checks the access's own address.
//
// Expected traps, in order (nothing delegated: all to M):
//   1: load_access  from S, lw VA_A + 0x100
//   2: store_access from S, sw VA_A + 0x100
//   3: load_access  from S, lw VA_B
//   4: supervisor_ecall to M
#include "conformance.h"

#define VA_A (TEST_VA + 0x0000)
#define VA_B (TEST_VA + 0x1000)
#define DENY_NA4 PMP_A_NA4
#define ALLOW_ALL (PMP_A_NAPOT | PMP_R | PMP_W | PMP_X)

.macro FAULT check, cause, tval, insn:vararg
    EXPECT_FAULT \check, PRV_M, PRV_S, \cause, \tval, \insn
.endm

TEST_MAIN pmp_paged
    call vm_init
    mv s11, a0
    li a0, VA_A
    la a1, pages
    li a2, PTE_R | PTE_W | PTE_A | PTE_D
    call vm_map
    li a0, VA_B
    la a1, pages + PAGE_SIZE
    li a2, PTE_R | PTE_W | PTE_A | PTE_D
    call vm_map
    la t0, pages + 0x100
    srli t0, t0, 2
    csrw pmpaddr0, t0
    la t0, pages + PAGE_SIZE
    srli t0, t0, 2
    csrw pmpaddr1, t0
    li t0, -1
    csrw pmpaddr2, t0
    li t0, (ALLOW_ALL << 16) | (DENY_NA4 << 8) | DENY_NA4
    csrw pmpcfg0, t0
    csrw satp, s11
    sfence.vma
    MRET_TO PRV_S, in_s
in_s:
    li s0, VA_A
    li s1, VA_B
    lw a0, 0(s0)
    FAULT 1, CAUSE_FAULT_LOAD, VA_A + 0x100, lw a0, 0x100(s0)
    sw a0, 0x104(s0)
    FAULT 2, CAUSE_FAULT_STORE, VA_A + 0x100, sw a0, 0x100(s0)
    lw a0, 8(s1)
    FAULT 3, CAUSE_FAULT_LOAD, VA_B, lw a0, 0(s1)
    ECALL_TO_M 4, PRV_S
    csrw satp, zero
    sfence.vma
    csrw pmpcfg0, zero
    TEST_PASS

    .data
    .balign PAGE_SIZE
pages:
    .space 2 * PAGE_SIZE
