// vm_deeper.S: Sv48 and Sv57 on RV64, the schemes one and two levels deeper than Sv39
// (spec 4.5, 4.6), as QEMU 7.2's default cpu walks them.
//
// satp MODE 9 (Sv48) walks four levels, MODE 10 (Sv57) five; a 1 GiB page is a
// level-2 entry in each. Bits 63:48 of a virtual address must all equal bit 47 under
// Sv48, bits 63:57 bit 56 under Sv57: else the access is a page fault with tval = the
// address, before any table is read. The entries' bits 63:54 are reserved as under
// Sv39 (vm_reserved_bits). lib/runtime.c vm_init_levels builds the tables, RAM and MMIO
// identity-mapped with 1 GiB pages; data_page's first dword is 0x5a.
//
//   VA_48   0x0000_7fff_fff0_0000  the top of Sv48's lower half     -> data_page
//   VA_NEG  0xffff_8000_0000_0000  the bottom of Sv48's upper half  -> data_page
//   VA_57   0x00ff_0000_0000_0000  a Sv57 address, not sign-extended from bit 47
//   VA_BAD  0x0100_0000_0000_0000  bit 56 set, bits 63:57 clear
//
// Expected traps, in order (S runs with nothing delegated):
//   1: load_page_fault   S->M  ld at VA_57 + 0x10 under Sv48, tval = VA_57 + 0x10
//   2: store_page_fault  S->M  sd at VA_48 + 0x1008 (canonical, no entry)
//   3: supervisor_ecall  S->M
//   4: load_page_fault   S->M  ld at VA_BAD + 0x18 under Sv57, tval = VA_BAD + 0x18
//   5: load_page_fault   S->M  lw at VA_57 + 0x1004, its leaf with bit 63 set
//   7: illegal_instruction S->M  at VA_57 + 0x2000 (code_page: csrr a0 of M's CSR 0x7c0),
//      tval = its bits, read through the Sv57 walk
//   6: supervisor_ecall  S->M
// and the loads through VA_48, VA_NEG and (under Sv57) VA_57 read 0x5a (checks 20-23).
//
// RV32 has Sv32 alone (satp's MODE is one bit): one trap, 10: supervisor_ecall S->M.
#include "conformance.h"

#define VA_48  0x00007ffffff00000
#define VA_NEG 0xffff800000000000
#define VA_57  0x00ff000000000000
#define VA_BAD 0x0100000000000000
#define RW_AD  (PTE_R | PTE_W | PTE_A | PTE_D)
#define CSRR_A0_7C0 0x7c002573     // csrr a0, 0x7c0: a custom M CSR, illegal from S

// Paging on with the satp in s11, then S at `target`.
.macro PAGED_S target
    csrw satp, s11
    sfence.vma
    MRET_TO PRV_S, \target
.endm

// `reg` := `va`, whose dword (through the page tables) must be data_page's 0x5a.
.macro READS_5A check, reg, va
    li \reg, \va
    ld a0, 0(\reg)
    CHECK_REG \check, a0, 0x5a
.endm

// Back in M after an ecall from S: paging off.
.macro PAGING_OFF
    csrw satp, zero
    sfence.vma
.endm

TEST_MAIN vm_deeper
    li t0, 0x5a
    la t1, data_page
    SREG t0, 0(t1)
#if __riscv_xlen == 64
    li a0, 4
    call vm_init_levels
    mv s11, a0
    VM_MAP VA_48, data_page, RW_AD
    VM_MAP VA_NEG, data_page, RW_AD
    PAGED_S in_sv48
in_sv48:
    READS_5A 20, s0, VA_48
    READS_5A 21, s1, VA_NEG
    li s2, VA_57
    EXPECT_FAULT 1, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_57 + 0x10, ld a0, 0x10(s2)
    li s3, VA_48 + 0x1000
    EXPECT_FAULT 2, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_48 + 0x1008, sd a0, 8(s3)
    ECALL_TO_M 3, PRV_S
    PAGING_OFF

    li a0, 5
    call vm_init_levels
    mv s11, a0
    VM_MAP VA_57, data_page, RW_AD
    VM_MAP VA_57 + 0x1000, data_page, RW_AD
    li a0, VA_57 + 0x1000         // that leaf with reserved bit 63 set
    li a1, 0
    call vm_entry
    li t0, 1
    slli t0, t0, 63
    ld t1, 0(a0)
    or t1, t1, t0
    sd t1, 0(a0)
    VM_MAP VA_48, data_page, RW_AD
    VM_MAP VA_57 + 0x2000, code_page, PTE_R | PTE_X | PTE_A
    PAGED_S in_sv57
in_sv57:
    READS_5A 22, s2, VA_57
    READS_5A 23, s0, VA_48
    li s3, VA_BAD
    EXPECT_FAULT 4, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_BAD + 0x18, ld a0, 0x18(s3)
    li s3, VA_57 + 0x1000
    EXPECT_FAULT 5, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_57 + 0x1004, lw a0, 4(s3)
    li t0, VA_57 + 0x2000
    EXPECT 7, PRV_M, PRV_S, CAUSE_ILLEGAL_INSTRUCTION, VA_57 + 0x2000, CSRR_A0_7C0, \
        RESUME_AT, 1f
    jalr t0
    FAIL_NO_TRAP 7
1:  ECALL_TO_M 6, PRV_S
    PAGING_OFF
#else
    MRET_TO PRV_S, in_s
in_s:
    ECALL_TO_M 10, PRV_S
#endif
    TEST_PASS

#if __riscv_xlen == 64
    .text
    .balign PAGE_SIZE
code_page:
    csrr a0, 0x7c0
    .balign PAGE_SIZE
#endif

    .data
    .balign PAGE_SIZE
data_page:
    .space PAGE_SIZE
