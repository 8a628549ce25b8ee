// vm_permissions.S: PTE permission checks (U, R, W, X, SUM, MXR) and the A/D bits.
//
// S may not touch a U page unless sstatus.SUM = 1, and may never execute one. U may
// not touch a page without U. A store needs W, a fetch X, a load R (or X with
// sstatus.MXR = 1). Every refusal is a page fault with tval = the virtual address:
// fetch 12, load 13, store 15. The pages, all 4 KiB at TEST_VA + n * 0x1000:
//
//   VA_USER  +0x0  U R W A D      VA_RO   +0x1000  R A        VA_XONLY +0x2000  X A
//   VA_NX    +0x3000  R W A D     VA_UCODE +0x4000  U R X A (this file's U code)
//   VA_NOA   +0x5000  R W (A = D = 0)                VA_NOD   +0x6000  R W A (D = 0)
//   VA_URO   +0x7000  U R A
//
// A and D: QEMU 7.2 sets them in the PTE itself (no fault): a load sets A, a store sets
// A and D. An AMO on a read-only page is a store page fault (15).
//
// Expected traps, in order (nothing delegated: all to M):
//   1: load_page_fault  from S, lw from VA_USER + 8 with SUM = 0
//   2: store_page_fault from S, sw to VA_USER + 12 with SUM = 0
//   4: fetch_page_fault from S, jump to VA_UCODE (SUM = 1 does not help)
//   5: load_page_fault  from S, lw from VA_XONLY + 0x10 with MXR = 0
//   7: store_page_fault from S, sw to VA_RO + 0x20;  8: store_page_fault, amoadd.w on VA_RO + 0x28
//   9: fetch_page_fault from S, jump to VA_NX + 0x40;  10: fetch_page_fault, jump to VA_RO
//  11: supervisor_ecall to M (then M checks A/D: 12, 13, clears them again)
//  14: supervisor_ecall to M (after a store to VA_NOA set A and D: 20)
//  15: load_page_fault  from U, lw from VA_RO + 0x30 (no U)
//  16: store_page_fault from U, sw to VA_NX + 0x38 (no U)
//  17: fetch_page_fault from U, jump to VA_XONLY (no U)
//  18: store_page_fault from U, sw to VA_URO + 4 (U, read-only)
//  19: user_ecall to M
#include "conformance.h"

#define VA_USER  (TEST_VA + 0x0000)
#define VA_RO    (TEST_VA + 0x1000)
#define VA_XONLY (TEST_VA + 0x2000)
#define VA_NX    (TEST_VA + 0x3000)
#define VA_UCODE (TEST_VA + 0x4000)
#define VA_NOA   (TEST_VA + 0x5000)
#define VA_NOD   (TEST_VA + 0x6000)
#define VA_URO   (TEST_VA + 0x7000)

.macro FAULT check, from, cause, tval, insn:vararg
    EXPECT_FAULT \check, PRV_M, \from, \cause, \tval, \insn
.endm

// A jump to `va` that must fail to fetch (epc = tval = va); resumes after the jump.
.macro FETCH_FAULT check, from, va
    li t0, \va
    EXPECT \check, PRV_M, \from, CAUSE_EXEC_PAGE_FAULT, \va, \va, RESUME_AT, .Lnext\@
    jalr t0
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

// Fail `check` unless the PTE of `va` has exactly the A/D bits `ad` (M-mode).
.macro CHECK_AD check, va, ad
    li a0, \va
    call vm_pte
    LREG t0, 0(a0)
    andi t0, t0, PTE_A | PTE_D
    CHECK_REG \check, t0, \ad
.endm

TEST_MAIN vm_permissions
    call vm_init
    mv s11, a0
    VM_MAP VA_USER, pages + 0 * PAGE_SIZE, PTE_U | PTE_R | PTE_W | PTE_A | PTE_D
    VM_MAP VA_RO, pages + 1 * PAGE_SIZE, PTE_R | PTE_A
    VM_MAP VA_XONLY, pages + 2 * PAGE_SIZE, PTE_X | PTE_A
    VM_MAP VA_NX, pages + 3 * PAGE_SIZE, PTE_R | PTE_W | PTE_A | PTE_D
    VM_MAP VA_UCODE, u_page, PTE_U | PTE_R | PTE_X | PTE_A
    VM_MAP VA_NOA, pages + 4 * PAGE_SIZE, PTE_R | PTE_W
    VM_MAP VA_NOD, pages + 5 * PAGE_SIZE, PTE_R | PTE_W | PTE_A
    VM_MAP VA_URO, pages + 6 * PAGE_SIZE, PTE_U | PTE_R | PTE_A
    // The word at pages + 2 pages + 0x10 (VA_XONLY + 0x10) holds a known value.
    la t0, pages + 2 * PAGE_SIZE
    li t1, 0x1234
    sw t1, 0x10(t0)
    csrw satp, s11
    sfence.vma
    MRET_TO PRV_S, in_s
in_s:
    // SUM.
    li s0, VA_USER
    FAULT 1, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_USER + 8, lw a0, 8(s0)
    FAULT 2, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_USER + 12, sw a0, 12(s0)
    li t0, SSTATUS_SUM
    csrs sstatus, t0
    li t1, 77
    sw t1, 12(s0)
    lw a0, 12(s0)
    CHECK_REG 3, a0, 77
    FETCH_FAULT 4, PRV_S, VA_UCODE
    li t0, SSTATUS_SUM
    csrc sstatus, t0

    // MXR: execute-only pages are readable only with MXR.
    li s0, VA_XONLY
    FAULT 5, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_XONLY + 0x10, lw a0, 0x10(s0)
    li t0, SSTATUS_MXR
    csrs sstatus, t0
    lw a0, 0x10(s0)
    CHECK_REG 6, a0, 0x1234
    li t0, SSTATUS_MXR
    csrc sstatus, t0

    // W and X.
    li s0, VA_RO
    lw a0, 0x20(s0)
    FAULT 7, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_RO + 0x20, sw a0, 0x20(s0)
    addi a2, s0, 0x28
    FAULT 8, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_RO + 0x28, amoadd.w a0, a1, (a2)
    FETCH_FAULT 9, PRV_S, VA_NX + 0x40
    FETCH_FAULT 10, PRV_S, VA_RO

    // A and D: set by the hardware, no fault.
    li s0, VA_NOA
    lw a0, 0(s0)
    li s1, VA_NOD
    sw a0, 0(s1)
    ECALL_TO_M 11, PRV_S
    CHECK_AD 12, VA_NOA, PTE_A
    CHECK_AD 13, VA_NOD, PTE_A | PTE_D
    li a0, VA_NOA
    call vm_pte                         // (a call: t0 and t1 are the callee's)
    li t0, PTE_V | PTE_R | PTE_W        // A = D = 0 again: a store sets both
    la t1, pages + 4 * PAGE_SIZE
    srli t1, t1, 12
    slli t1, t1, 10
    or t0, t0, t1
    SREG t0, 0(a0)
    sfence.vma
    MRET_TO PRV_S, 1f
1:  li s0, VA_NOA
    sw zero, 4(s0)
    ECALL_TO_M 14, PRV_S
    CHECK_AD 20, VA_NOA, PTE_A | PTE_D

    // U: pages without U, and a read-only U page.
    // Into the U code, at its virtual address.
    la t0, u_page
    la t1, VA_UCODE
    sub t1, t1, t0
    la t0, u_entry
    add t0, t0, t1
    csrw mepc, t0
    li t0, MSTATUS_MPP
    csrc mstatus, t0
    mret

    .pushsection .text.upage, "ax"
    .balign PAGE_SIZE
u_page:
u_entry:
    li s0, VA_RO
    EXPECT 15, PRV_M, PRV_U, CAUSE_LOAD_PAGE_FAULT, VA_UCODE + (1f - u_page), VA_RO + 0x30, RESUME_AT, VA_UCODE + (2f - u_page)
1:  lw a0, 0x30(s0)
    FAIL_NO_TRAP 15
2:  li s0, VA_NX
    EXPECT 16, PRV_M, PRV_U, CAUSE_STORE_PAGE_FAULT, VA_UCODE + (1f - u_page), VA_NX + 0x38, RESUME_AT, VA_UCODE + (2f - u_page)
1:  sw a0, 0x38(s0)
    FAIL_NO_TRAP 16
2:  li t0, VA_XONLY
    EXPECT 17, PRV_M, PRV_U, CAUSE_EXEC_PAGE_FAULT, VA_XONLY, VA_XONLY, RESUME_AT, VA_UCODE + (2f - u_page)
    jalr t0
    FAIL_NO_TRAP 17
2:  li s0, VA_URO
    lw a0, 4(s0)
    EXPECT 18, PRV_M, PRV_U, CAUSE_STORE_PAGE_FAULT, VA_UCODE + (1f - u_page), VA_URO + 4, RESUME_AT, VA_UCODE + (2f - u_page)
1:  sw a0, 4(s0)
    FAIL_NO_TRAP 18
2:  li s1, VA_USER
    sw a0, 0(s1)
    EXPECT 19, PRV_M, PRV_U, CAUSE_USER_ECALL, VA_UCODE + (1f - u_page), 0, RESUME_JUMP, back_in_m
1:  ecall
    FAIL_NO_TRAP 19
    .popsection

back_in_m:
    csrw satp, zero
    sfence.vma
    TEST_PASS

    .data
    .balign PAGE_SIZE
pages:
    .space 7 * PAGE_SIZE
