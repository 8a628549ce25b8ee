// vm_demand.S: what riscv-tests' `v` environment relies on: U code run from pages
// that are mapped only when they fault (S's demand paging), and the U-mode ecall
// that ends the test, all delegated to S; with FP on, as the `v` env's F/D suites use.
//
// S delegates ecall from U (8) and the page faults (12, 13, 15) through medeleg. The
// U image (u_image, linked in RAM) is run at VA_U (TEST_VA); none of its three pages
// is mapped when U starts. Each page fault reaches S with stval = the faulting
// virtual address; S's hook (vm_demand.c) maps the page to a fresh physical page,
// flushes that address (sfence.vma), copies the page's contents in through the user
// mapping with sstatus.SUM set, and runs fence.i; the faulting instruction then runs
// again (sepc unchanged). The code is therefore written through one mapping and
// fetched through another, as the `v` env's pages are. In U: a load, a store, FP
// instructions (fsgnj.s and fmv.w.x included, which privlab does through code hooks
// at their virtual addresses), then ecall with a0 = the sum U computed.
//
// Expected traps (taken in S from U):
//   1: fetch_page_fault, epc = tval = VA_U (the first instruction)
//   2: load_page_fault,  epc = u_load, tval = VA_U + 0x1000 + 8
//   3: store_page_fault, epc = u_store, tval = VA_U + 0x2000 + 16
//   4: user_ecall, epc = u_ecall, tval 0; S continues after it
#include "conformance.h"
#include "fp.h"

#define VA_U TEST_VA
#define U_VA(label) (VA_U + ((label) - u_image))

TEST_MAIN vm_demand
    call vm_init
    csrw satp, a0
    sfence.vma
    li t0, (1 << CAUSE_USER_ECALL) | (1 << CAUSE_EXEC_PAGE_FAULT) | \
           (1 << CAUSE_LOAD_PAGE_FAULT) | (1 << CAUSE_STORE_PAGE_FAULT)
    csrw medeleg, t0
    FP_STATE FS_INITIAL
    MRET_TO PRV_S, in_s
in_s:
    EXPECT 1, PRV_S, PRV_U, CAUSE_EXEC_PAGE_FAULT, VA_U, VA_U, RESUME_EPC, 0, hook_demand_map
    EXPECT 2, PRV_S, PRV_U, CAUSE_LOAD_PAGE_FAULT, U_VA(u_load), VA_U + 0x1000 + 8, \
        RESUME_EPC, 0, hook_demand_map
    EXPECT 3, PRV_S, PRV_U, CAUSE_STORE_PAGE_FAULT, U_VA(u_store), VA_U + 0x2000 + 16, \
        RESUME_EPC, 0, hook_demand_map
    EXPECT 4, PRV_S, PRV_U, CAUSE_USER_ECALL, U_VA(u_ecall), 0, RESUME_JUMP, s_done
    li t6, SSTATUS_SPP
    csrc sstatus, t6
    li t6, VA_U
    csrw sepc, t6
    sret
s_done:
    // U's sum: 0x600d (loaded from page 1) + 0x600d (stored and loaded back on page
    // 2) + 3 (fcvt.w.d of 1.5 + 1.5) = 0xc01d; its FP writes made FS Dirty
    CHECK_REG 5, a0, 0xc01d
    CHECK_REG 6, a1, 0x3f800000
    CHECK_CSR_BITS 7, sstatus, SSTATUS_FS, (FS_DIRTY << SSTATUS_FS_SHIFT)
    TEST_PASS

// The U image: position-independent code on page 0, data on pages 1 and 2.
    .section .data.u_image, "aw"
    .balign 4096
    .globl u_image
u_image:
    auipc s0, 0                 // s0 = VA_U
    li t0, 0x1000
    add s1, s0, t0
u_load:
    lw a0, 8(s1)                // page 1 faults in, holding 0x600d at +8
    li t0, 0x2000
    add s2, s0, t0
u_store:
    sw a0, 16(s2)               // page 2 faults in (zeros), then takes the store
    lw a2, 16(s2)
    add a0, a0, a2
    fld f1, 16(s1)              // 1.5
    fadd.d f2, f1, f1
    fcvt.w.d a3, f2, rtz
    add a0, a0, a3
    li a4, 0x3f800000
    fmv.w.x f3, a4
    fsgnj.s f4, f3, f3
    fmv.x.w a1, f4
u_ecall:
    ecall
1:  j 1b
    .balign 4096
u_page1:
    .word 0, 0, 0x600d, 0
    .dword 0x3ff8000000000000   // 1.5
    .balign 4096
u_page2:
    .fill 1024, 4, 0
