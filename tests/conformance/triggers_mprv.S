// triggers_mprv.S: load and store triggers on accesses that M makes through the page
// tables (mstatus.MPRV = 1, MPP = S), and on U's own translated accesses: both match
// the virtual address, as QEMU 7.2's do. The privilege a trigger is enabled for is the
// hart's own (M for an MPRV access), not the one the access is translated as.
//
// `page` is mapped at VA = TEST_VA for S (R W A D) and `upage` at UVA = TEST_VA +
// 0x10000 for U (U R W A D); vm_init maps all of RAM at its physical addresses for S,
// so `page`'s bytes have a second virtual address. U's code runs from `ucode`, mapped
// at UCODE = TEST_VA + 0x20000 (U R X A).
// With MPRV = 1, MPP = S, trigger 0 on the XLEN/8 bytes at VA + 0x10:
//   lw VA + 0        (mcontrol M, load) no trigger: same page, other bytes
//   lw VA + 0x10     breakpoint from M, epc = the lw, tval = 0
//   lw page + 0x10   no trigger: the same physical bytes at another virtual address
//   lw VA + 0x10     (mcontrol S, load) no trigger: the hart is in M
//   sw VA + 0x10     (mcontrol M, store) breakpoint; the store does not happen
// In U, trigger 0 on UVA + 0x20 (mcontrol U, load): lw UVA + 0x20 fires, lw UVA + 0x28
// does not.
//
// Expected traps, in order (to M):
//   1: breakpoint from M, epc = the MPRV lw of VA + 0x10
//   3: breakpoint from M, epc = the MPRV sw to VA + 0x10
//   5: breakpoint from U, epc = UCODE + the lw's offset in ucode
//   6: user_ecall, epc = UCODE + the ecall's offset
#include "conformance.h"

#define TYPE(t) ((t) << (__riscv_xlen - MCONTROL_TYPE_FROM_TOP))
#define MC TYPE(2)
#define VA TEST_VA
#define UVA (TEST_VA + 0x10000)
#define UCODE (TEST_VA + 0x20000)
#define AT_UCODE(label) (UCODE + ((label) - ucode))

// M's loads and stores go through the page tables as S's from here on. A trap to M
// sets MPP = M and its mret leaves MPP = U: re-arm after each one.
.macro MPRV_AS_S
    li t6, MSTATUS_MPP
    csrc mstatus, t6
    li t6, (PRV_S << 11) | MSTATUS_MPRV
    csrs mstatus, t6
.endm
.macro MPRV_OFF
    li t6, MSTATUS_MPRV
    csrc mstatus, t6
.endm

TEST_MAIN triggers_mprv
    call vm_init
    mv s11, a0
    li a0, VA
    la a1, page
    li a2, PTE_R | PTE_W | PTE_A | PTE_D
    call vm_map
    li a0, UVA
    la a1, upage
    li a2, PTE_U | PTE_R | PTE_W | PTE_A | PTE_D
    call vm_map
    li a0, UCODE
    la a1, ucode
    li a2, PTE_U | PTE_R | PTE_X | PTE_A
    call vm_map
    csrw satp, s11
    sfence.vma
    li s0, VA
    la s1, page
    csrw tselect, zero
    li t0, VA + 0x10
    csrw tdata2, t0
    li t0, MC | MCONTROL_M | MCONTROL_LOAD
    csrw tdata1, t0

    MPRV_AS_S
    lw t1, 0(s0)
    EXPECT 1, PRV_M, PRV_M, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  lw t1, 0x10(s0)
    FAIL_NO_TRAP 1
2:  MPRV_AS_S
    lw t1, 0x10(s1)
    li t0, MC | MCONTROL_S | MCONTROL_LOAD
    csrw tdata1, t0
    lw t1, 0x10(s0)
    li t0, MC | MCONTROL_M | MCONTROL_STORE
    csrw tdata1, t0
    li t1, 0x5a5a
    EXPECT 3, PRV_M, PRV_M, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  sw t1, 0x10(s0)
    FAIL_NO_TRAP 3
2:  MPRV_OFF
    lw t2, 0x10(s1)             // untranslated: page's own bytes
    CHECK_REG 4, t2, 0

    li t0, UVA + 0x20
    csrw tdata2, t0
    li t0, MC | MCONTROL_U | MCONTROL_LOAD
    csrw tdata1, t0
    li s2, UVA
    li t6, MSTATUS_MPP          // mret to U at UCODE (MRET_TO takes a label)
    csrc mstatus, t6
    li t6, UCODE
    csrw mepc, t6
    mret

    // U's code, run at UCODE (position-independent; its EXPECTs precede the end of the
    // expectation table).
    .balign PAGE_SIZE
ucode:
    EXPECT 5, PRV_M, PRV_U, CAUSE_BREAKPOINT, AT_UCODE(1f), 0, RESUME_AT, AT_UCODE(2f)
1:  lw t1, 0x20(s2)
    FAIL_NO_TRAP 5
2:  lw t1, 0x28(s2)
    EXPECT 6, PRV_M, PRV_U, CAUSE_USER_ECALL, AT_UCODE(3f), 0, RESUME_JUMP, after_u
3:  ecall
    FAIL_NO_TRAP 6
    .balign PAGE_SIZE

after_u:
    li t0, MC
    csrw tdata1, t0
    csrw satp, zero
    sfence.vma
    TEST_PASS

    .data
    .balign PAGE_SIZE
page:
    .space PAGE_SIZE
upage:
    .space PAGE_SIZE
