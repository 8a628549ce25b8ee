// vm_reserved_bits.S: Sv39 entries with any of bits 63:54 set fault, at every level.
//
// The hart has neither Svnapot nor Svpbmt (QEMU 7.2's default CPU has them off), so
// bits 63:54 of an Sv39 page-table entry are reserved. A walk that reads an entry with
// one of them set fails with a page fault for the access that walked (fetch, load,
// store; an AMO's is a load page fault, as on unmapped pages: vm_page_faults), tval =
// the virtual address, and sets neither A nor D. Unicorn's own walk (QEMU 5.0) ignores
// these bits; the core turns the walk's read into the fault.
//
// Sv32 entries have no reserved bits: on RV32 bits 31:30 are the top of PPN[1]
// (physical address bits 33:32), so an entry with bit 31 set walks. QEMU 7.2 forms
// the physical address in 32 bits and so drops bits 33:32 (the spec would go above 4
// GiB, where nothing is); privlab does the same: RV32 reads data_page through VA_N
// (check 22) and takes one trap, 12: supervisor_ecall S->M.
//
// Pages at TEST_VA, all on data_page (R W A D unless said):
//   VA_N     + 0x0000  bit 63 (N, Svnapot's) set, R W X
//   VA_B54   + 0x1000  bit 54 (the lowest reserved bit) set
//   VA_PBMT  + 0x2000  bit 61 (PBMT = NC, Svpbmt's) set
//   VA_OK    + 0x3000  nothing reserved: the control
//   VA_NOA   + 0x4000  bit 63 set, R W without A and D: must stay so after the fault
//   VA_MID   + 0x200000  a good leaf, but bit 58 set in the level-1 entry above it
//
// Expected traps, in order (S runs with nothing delegated):
//   1: load_page_fault   S->M  ld at VA_N + 8, tval = VA_N + 8
//   2: store_page_fault  S->M  sd at VA_N + 0x10
//   3: fetch_page_fault  S->M  epc = tval = VA_N + 0x40 (a jump there)
//   4: load_page_fault   S->M  lw at VA_B54 + 4
//   5: store_page_fault  S->M  sw at VA_PBMT + 0x7fc
//   6: load_page_fault   S->M  amoadd.w at VA_N + 0x20 (QEMU 7.2: the load part fails)
//   7: load_page_fault   S->M  lbu at VA_NOA + 1
//   8: load_page_fault   S->M  ld at VA_MID + 0x18 (the reserved bit is one level up)
//   9: store_page_fault  S->M  sd at VA_MID + 0x18
//  10: supervisor_ecall  S->M
//  11: store_page_fault  M->M  sw at VA_N + 0x30 with MPRV = 1, MPP = S (riscv-tests'
//      rv64ssvnapot-p-napot does this)
// and no trap for VA_OK, whose word reads back; VA_NOA's entry reads back unchanged.
#include "conformance.h"

#define VA_N    (TEST_VA + 0x0000)
#define VA_B54  (TEST_VA + 0x1000)
#define VA_PBMT (TEST_VA + 0x2000)
#define VA_OK   (TEST_VA + 0x3000)
#define VA_NOA  (TEST_VA + 0x4000)
#define VA_MID  (TEST_VA + 0x200000)
#define RW_AD   (PTE_R | PTE_W | PTE_A | PTE_D)

// Set bit `bit` in the entry the walk of `va` reads at `level`; leaves it in a0.
.macro SET_ENTRY_BIT va, level, bit
    li a0, \va
    li a1, \level
    call vm_entry
    li t0, 1
    slli t0, t0, \bit
    LREG t1, 0(a0)
    or t1, t1, t0
    SREG t1, 0(a0)
.endm

// data_page's first byte = 0x5a, paging on with the tables vm_init made (satp in
// s11), then S at in_s with s0 = VA_N.
.macro INTO_S
    li t0, 0x5a
    la t1, data_page
    sb t0, 0(t1)
    csrw satp, s11
    sfence.vma
    MRET_TO PRV_S, in_s
in_s:
    li s0, VA_N
.endm

TEST_MAIN vm_reserved_bits
#if __riscv_xlen == 64
    call vm_init
    mv s11, a0
    VM_MAP VA_N, data_page, RW_AD | PTE_X
    VM_MAP VA_B54, data_page, RW_AD
    VM_MAP VA_PBMT, data_page, RW_AD
    VM_MAP VA_OK, data_page, RW_AD
    VM_MAP VA_NOA, data_page, PTE_R | PTE_W
    VM_MAP VA_MID, data_page, RW_AD
    SET_ENTRY_BIT VA_N, 0, 63
    SET_ENTRY_BIT VA_B54, 0, 54
    SET_ENTRY_BIT VA_PBMT, 0, 61
    SET_ENTRY_BIT VA_NOA, 0, 63
    mv s10, a0                    // VA_NOA's entry, and its value
    ld s9, 0(a0)
    SET_ENTRY_BIT VA_MID, 1, 58
    INTO_S
    EXPECT_FAULT 1, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_N + 8, ld a0, 8(s0)
    EXPECT_FAULT 2, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_N + 0x10, sd a0, 0x10(s0)
    li t0, VA_N + 0x40
    EXPECT 3, PRV_M, PRV_S, CAUSE_EXEC_PAGE_FAULT, VA_N + 0x40, VA_N + 0x40, RESUME_AT, 1f
    jalr t0
    FAIL_NO_TRAP 3
1:  li s1, VA_B54
    EXPECT_FAULT 4, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_B54 + 4, lw a0, 4(s1)
    li s1, VA_PBMT
    EXPECT_FAULT 5, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_PBMT + 0x7fc, sw a0, 0x7fc(s1)
    addi a2, s0, 0x20
    EXPECT_FAULT 6, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_N + 0x20, amoadd.w a0, a1, (a2)
    li s1, VA_NOA
    EXPECT_FAULT 7, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_NOA + 1, lbu a0, 1(s1)
    li s1, VA_MID
    EXPECT_FAULT 8, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_MID + 0x18, ld a0, 0x18(s1)
    EXPECT_FAULT 9, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_MID + 0x18, sd a0, 0x18(s1)
    li s1, VA_OK
    lbu a0, 0(s1)
    CHECK_REG 20, a0, 0x5a
    ECALL_TO_M 10, PRV_S

    // Back in M: the faulting walks set no A or D.
    ld t5, 0(s10)
    mv t6, s9
    CHECK_T5_T6 21
    // M's loads and stores translated as S's (MPRV).
    li t0, (PRV_S << 11) | MSTATUS_MPRV
    csrs mstatus, t0
    EXPECT_FAULT 11, PRV_M, PRV_M, CAUSE_STORE_PAGE_FAULT, VA_N + 0x30, sw a0, 0x30(s0)
    li t0, MSTATUS_MPRV
    csrc mstatus, t0
    csrw satp, zero
    sfence.vma
#else
    call vm_init
    mv s11, a0
    VM_MAP VA_N, data_page, RW_AD
    SET_ENTRY_BIT VA_N, 0, 31
    INTO_S
    lw a0, 0(s0)
    CHECK_REG 22, a0, 0x5a
    ECALL_TO_M 12, PRV_S
    csrw satp, zero
    sfence.vma
#endif
    TEST_PASS

    .data
    .balign PAGE_SIZE
data_page:
    .space PAGE_SIZE
