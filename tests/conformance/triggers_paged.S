// triggers_paged.S: load and store triggers match the virtual address of an access
// that goes through the page tables, as QEMU 7.2's do.
//
// The data page `page` is mapped for S at VA = TEST_VA (R W A D); vm_init also maps
// all of RAM at its physical addresses, so the same bytes are reachable through two
// virtual addresses. Trigger 0 watches the XLEN/8 bytes at VA + 0x10 (mcontrol, S):
//   lw VA + 0        no trigger (same page, other bytes)
//   lw VA + 0x10     breakpoint, epc = the lw, tval = 0
//   lw page + 0x10   no trigger: the same physical bytes at another virtual address
// Then the trigger watches stores: sw VA + 0x10 fires and does not write (read back
// through the physical alias: still 0); a store next to it does write.
//
// Expected traps, in order (to M):
//   1: breakpoint from S, epc = the lw of VA + 0x10
//   2: supervisor_ecall (M arms the store trigger)
//   3: breakpoint from S, epc = the sw to VA + 0x10
//   5: supervisor_ecall
#include "conformance.h"

#define TYPE(t) ((t) << (__riscv_xlen - MCONTROL_TYPE_FROM_TOP))
#define MC TYPE(2)
#define VA TEST_VA

TEST_MAIN triggers_paged
    call vm_init
    mv s11, a0
    li a0, VA
    la a1, page
    li a2, PTE_R | PTE_W | PTE_A | PTE_D
    call vm_map
    csrw tselect, zero
    li t0, VA + 0x10
    csrw tdata2, t0
    li t0, MC | MCONTROL_S | MCONTROL_LOAD
    csrw tdata1, t0
    csrw satp, s11
    sfence.vma
    MRET_TO PRV_S, in_s
in_s:
    li s0, VA
    la s1, page
    lw t1, 0(s0)
    EXPECT 1, PRV_M, PRV_S, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  lw t1, 0x10(s0)
    FAIL_NO_TRAP 1
2:  lw t1, 0x10(s1)
    ECALL_TO_M 2, PRV_S
    li t0, MC | MCONTROL_S | MCONTROL_STORE
    csrw tdata1, t0
    MRET_TO PRV_S, in_s2
in_s2:
    li t1, 0x5a5a
    EXPECT 3, PRV_M, PRV_S, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  sw t1, 0x10(s0)
    FAIL_NO_TRAP 3
2:  lw t2, 0x10(s1)
    CHECK_REG 4, t2, 0
    sw t1, 0x10 + REGBYTES(s0)
    lw t2, 0x10 + REGBYTES(s1)
    CHECK_REG 6, t2, 0x5a5a
    ECALL_TO_M 5, PRV_S
    li t0, MC
    csrw tdata1, t0
    csrw satp, zero
    sfence.vma
    TEST_PASS

    .data
    .balign PAGE_SIZE
page:
    .space PAGE_SIZE
