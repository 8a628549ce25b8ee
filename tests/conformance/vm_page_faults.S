// vm_page_faults.S: instruction, load and store page faults under Sv39 (RV64) / Sv32 (RV32).
//
// tval is the faulting virtual address: for loads and stores the effective address
// (rs1 + offset, compressed and stack-pointer forms included), for fetches the address
// that could not be fetched. Test pages live at TEST_VA (lib/runtime.c keeps MMIO and
// RAM identity-mapped for S, so S code runs at its link address):
//
//   VA_EXEC1 = TEST_VA + 0x0000  R X  -> exec_pages        (+0x1000 unmapped)
//   VA_EXEC2 = TEST_VA + 0x2000  R X  -> exec_pages + 4K   (+0x1000 unmapped)
//   VA_DATA  = TEST_VA + 0x4000  R W  -> data_page          VA_HOLE = +0x5000 unmapped
//   VA_UDATA = TEST_VA + 0x6000  U R W -> data_page         VA_UHOLE = +0x7000 unmapped
//   VA_UCODE = TEST_VA + 0x8000  U R X -> u_page (this file's U code)
//
// What QEMU 7.2 does where the spec leaves room or differs: a 4-byte instruction whose
// second half is on an unmapped page faults with epc = its first byte and tval = the
// start of the unmapped page (check 3); a misaligned load or store that crosses into an
// unmapped page reports tval = the start of that page, not the access address (18, 19);
// an AMO on an unmapped page is a LOAD page fault (13), where the spec says store/AMO
// page fault (15) (check 20; as for access faults, the read part seems to fail first).
//
// Expected traps, in order; S runs with nothing delegated first (to M), then with
// page faults delegated (medeleg bits 12, 13, 15):
//   1: fetch_page_fault  S->M  epc = tval = VA_HOLE + 0x40 (jump to an unmapped page)
//   2: fetch_page_fault  S->M  epc = tval = VA_EXEC1 + 0x1000 (after the c.nop that ends VA_EXEC1)
//   3: fetch_page_fault  S->M  epc = VA_EXEC2 + 0xffe, tval = VA_EXEC2 + 0x1000 (a 4-byte
//      instruction whose second half is on the unmapped page)
//   4-17: load/store page faults S->M, see the EXPECT_FAULT lines (tval = VA_HOLE + offset)
//  18: load_page_fault S->M  lw at VA_DATA + 0xffe (misaligned, crossing into VA_HOLE):
//      tval = VA_HOLE, the first byte that could not be accessed
//  19: store_page_fault S->M sw at VA_DATA + 0xffe: tval = VA_HOLE (idem)
//  20: load_page_fault (sic) S->M amoadd.w at VA_HOLE + 0x10;  21: load_page_fault lr.w
//  22: supervisor_ecall S->M
//  30-33: delegated: fetch, load, store, c.lwsp page faults S->S
//  34-36: delegated: fetch, load, store page faults U->S, epc in VA_UCODE
//  37: user_ecall U->M
#include "conformance.h"

#define VA_EXEC1 (TEST_VA + 0x0000)
#define VA_EXEC2 (TEST_VA + 0x2000)
#define VA_DATA  (TEST_VA + 0x4000)
#define VA_HOLE  (TEST_VA + 0x5000)
#define VA_UDATA (TEST_VA + 0x6000)
#define VA_UHOLE (TEST_VA + 0x7000)
#define VA_UCODE (TEST_VA + 0x8000)
#define PAGE_FAULTS ((1 << CAUSE_EXEC_PAGE_FAULT) | (1 << CAUSE_LOAD_PAGE_FAULT) | \
                     (1 << CAUSE_STORE_PAGE_FAULT))

TEST_MAIN vm_page_faults
    call vm_init
    mv s11, a0
    VM_MAP VA_EXEC1, exec_pages, PTE_R | PTE_X | PTE_A
    VM_MAP VA_EXEC2, exec_pages + PAGE_SIZE, PTE_R | PTE_X | PTE_A
    VM_MAP VA_DATA, data_page, PTE_R | PTE_W | PTE_A | PTE_D
    VM_MAP VA_UDATA, data_page, PTE_U | PTE_R | PTE_W | PTE_A | PTE_D
    VM_MAP VA_UCODE, u_page, PTE_U | PTE_R | PTE_X | PTE_A
    csrw satp, s11
    sfence.vma
    MRET_TO PRV_S, in_s
in_s:
    // ---- Fetches ----
    li t0, VA_HOLE + 0x40
    EXPECT 1, PRV_M, PRV_S, CAUSE_EXEC_PAGE_FAULT, VA_HOLE + 0x40, VA_HOLE + 0x40, RESUME_AT, 1f
    jalr t0
    FAIL_NO_TRAP 1
1:  li t0, VA_EXEC1 + 0xffe
    EXPECT 2, PRV_M, PRV_S, CAUSE_EXEC_PAGE_FAULT, VA_EXEC1 + 0x1000, VA_EXEC1 + 0x1000, RESUME_AT, 1f
    jalr t0
    FAIL_NO_TRAP 2
1:  li t0, VA_EXEC2 + 0xffe
    EXPECT 3, PRV_M, PRV_S, CAUSE_EXEC_PAGE_FAULT, VA_EXEC2 + 0xffe, VA_EXEC2 + 0x1000, RESUME_AT, 1f
    jalr t0
    FAIL_NO_TRAP 3
1:
    // ---- Loads and stores at page offsets, every addressing form ----
    li s0, VA_HOLE
    li a1, VA_HOLE
    li s1, VA_HOLE + 0x1000       // the page after the hole: negative offsets reach back
    mv s2, sp
    EXPECT_FAULT 4, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 8, lw a0, 8(s0)
    EXPECT_FAULT 5, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 0xfff, lbu a0, -1(s1)
    EXPECT_FAULT 6, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 0x7fe, lh a0, 0x7fe(s0)
    EXPECT_FAULT 7, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 4, c.lw a0, 4(a1)
    EXPECT_FAULT 8, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_HOLE + 0x800, sw a0, -0x800(s1)
    EXPECT_FAULT 9, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_HOLE + 0x7c, c.sw a0, 124(a1)
    EXPECT_FAULT 10, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_HOLE + 3, sb a0, 3(s0)
    li sp, VA_HOLE
    EXPECT_FAULT 11, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 12, c.lwsp a0, 12(sp)
    EXPECT_FAULT 12, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_HOLE + 252, c.swsp a0, 252(sp)
#if __riscv_xlen == 64
    EXPECT_FAULT 13, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 16, c.ld a0, 16(a1)
    EXPECT_FAULT 14, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_HOLE + 248, c.sd a0, 248(a1)
    EXPECT_FAULT 15, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 504, c.ldsp a0, 504(sp)
    EXPECT_FAULT 16, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_HOLE + 8, c.sdsp a0, 8(sp)
    EXPECT_FAULT 17, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_HOLE + 0x10, sd a0, 0x10(s0)
#endif
    mv sp, s2
    // Misaligned accesses crossing from a mapped page into the hole.
    li s3, VA_DATA + 0x800
    EXPECT_FAULT 18, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE, lw a0, 0x7fe(s3)
    EXPECT_FAULT 19, PRV_M, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_HOLE, sw a0, 0x7fe(s3)
    // AMOs and LR.
    addi a2, s0, 0x10
    EXPECT_FAULT 20, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 0x10, amoadd.w a0, a1, (a2)
    EXPECT_FAULT 21, PRV_M, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 0x10, lr.w a0, (a2)
    // The mapped data page works.
    li t0, 0x5a
    sb t0, -0x7f0(s3)           // VA_DATA + 0x10
    lbu t1, -0x7f0(s3)
    CHECK_REG 23, t1, 0x5a
    ECALL_TO_M 22, PRV_S

    // ---- Delegated to S ----
    li t0, PAGE_FAULTS
    csrw medeleg, t0
    MRET_TO PRV_S, 1f
1:  li t0, VA_HOLE
    EXPECT 30, PRV_S, PRV_S, CAUSE_EXEC_PAGE_FAULT, VA_HOLE, VA_HOLE, RESUME_AT, 1f
    jalr t0
    FAIL_NO_TRAP 30
1:  EXPECT_FAULT 31, PRV_S, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 0x20, lw a0, 0x20(s0)
    EXPECT_FAULT 32, PRV_S, PRV_S, CAUSE_STORE_PAGE_FAULT, VA_HOLE + 0x28, sw a0, 0x28(s0)
    mv s2, sp
    li sp, VA_HOLE
    EXPECT_FAULT 33, PRV_S, PRV_S, CAUSE_LOAD_PAGE_FAULT, VA_HOLE + 0x40, c.lwsp a0, 0x40(sp)
    mv sp, s2
    // Into the U code, at its virtual address.
    li t0, SSTATUS_SPP
    csrc sstatus, t0
    la t0, u_page
    la t1, VA_UCODE
    sub t1, t1, t0
    la t0, u_entry
    add t0, t0, t1
    csrw sepc, t0
    sret

    // U code: runs at VA_UCODE, so its trap addresses are VA_UCODE + (label - u_page).
    .pushsection .text.upage, "ax"
    .balign PAGE_SIZE
u_page:
u_entry:
    li t0, VA_UHOLE
    EXPECT 34, PRV_S, PRV_U, CAUSE_EXEC_PAGE_FAULT, VA_UHOLE, VA_UHOLE, RESUME_AT, VA_UCODE + (1f - u_page)
    jalr t0
    FAIL_NO_TRAP 34
1:  li s0, VA_UHOLE
    EXPECT 35, PRV_S, PRV_U, CAUSE_LOAD_PAGE_FAULT, VA_UCODE + (1f - u_page), VA_UHOLE + 0x18, RESUME_AT, VA_UCODE + (2f - u_page)
1:  lw a0, 0x18(s0)
    FAIL_NO_TRAP 35
2:  mv a1, s0
    EXPECT 36, PRV_S, PRV_U, CAUSE_STORE_PAGE_FAULT, VA_UCODE + (1f - u_page), VA_UHOLE + 0x7c, RESUME_AT, VA_UCODE + (2f - u_page)
1:  c.sw a0, 0x7c(a1)
    FAIL_NO_TRAP 36
2:  li s1, VA_UDATA              // U's own page: data_page written by S above
    lbu a0, 0x10(s1)
    CHECK_REG 38, a0, 0x5a
    EXPECT 37, PRV_M, PRV_U, CAUSE_USER_ECALL, VA_UCODE + (1f - u_page), 0, RESUME_JUMP, back_in_m
1:  ecall
    FAIL_NO_TRAP 37
    .popsection

back_in_m:
    csrw satp, zero
    sfence.vma
    csrw medeleg, zero
    TEST_PASS

    .data
    .balign PAGE_SIZE
// Two executable test pages: each ends with an instruction at offset 0xffe, the first
// a c.nop (so the next fetch is from the unmapped page), the second the low half of
// addi a0, a0, 1 (0x00150513), whose high half would be on the unmapped page.
exec_pages:
    .fill 0xffe, 1, 0
    .half 0x0001
    .fill 0xffe, 1, 0
    .half 0x0513
data_page:
    .space PAGE_SIZE
