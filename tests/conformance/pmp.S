// pmp.S: physical memory protection as S and U see it (and M with a locked entry).
//
// With no PMP entry at all, S and U may access nothing: their first fetch is an
// instruction access fault (cause 1, epc = tval = the target). That is why lib/entry.S
// installs entry 0 = NAPOT over all memory with R, W and X before every program. The
// lowest-numbered matching entry decides: a no-permission entry over one page, ahead
// of the all-RWX entry, makes S/U loads there load access faults (5) and stores store
// access faults (7), tval = the address, while M is unaffected until the entry is
// locked (L). QEMU 7.2 behaves as the spec says, with one rule of its own: with no PMP entry configured, an mret to S or U is
// an illegal instruction (cause 2, epc = the mret, tval = 0x30200073, from M) instead of
// a return followed by a fetch fault. sret from M has no such check (checks 10, 11).
//
// Expected traps, in order (to M):
//   1: illegal_instruction from M: mret with MPP = S and no PMP entry, tval 0x30200073
//   2: illegal_instruction from M: mret with MPP = U and no PMP entry, tval 0x30200073
//  10: fetch_access from S, epc = tval = s_target (sret from M, no PMP entry)
//  11: fetch_access from U, epc = tval = u_target (sret from M, no PMP entry)
//   3: fetch_access from S, epc = tval = s_target2 (entry 0 is R only)
//   6: load_access from S, tval = pmp_page + 8 (entry 0: no permission on that page)
//   7: store_access from U, tval = pmp_page + 16
//   8: user_ecall to M
//   9: load_access from M, tval = pmp_page (entry 0 locked)
#include "conformance.h"

.macro PMP0 addr, cfg
    li t0, \addr
    csrw pmpaddr0, t0
    li t0, \cfg
    csrw pmpcfg0, t0
.endm

TEST_MAIN pmp
    // No entry. QEMU 7.2 refuses an mret to S or U outright: illegal instruction at the
    // mret (tval = its bits), from M.
    csrw pmpcfg0, zero
    li t0, MSTATUS_MPP
    csrc mstatus, t0
    li t0, MSTATUS_MPP_S
    csrs mstatus, t0
    la t0, s_target
    csrw mepc, t0
    EXPECT 1, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 1f, 0x30200073, RESUME_AT, 2f
1:  mret
2:  li t0, MSTATUS_MPP          // (the handler's own mret was to M: allowed)
    csrc mstatus, t0
    la t0, u_target
    csrw mepc, t0
    EXPECT 2, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 1f, 0x30200073, RESUME_AT, 2f
1:  mret
2:
    // sret from M has no such check: S starts, and its first fetch faults.
    li t0, MSTATUS_SPP
    csrs mstatus, t0
    EXPECT 10, PRV_M, PRV_S, CAUSE_FAULT_FETCH, s_target, s_target, RESUME_JUMP, 1f
    SRET_TO PRV_S, s_target
1:  EXPECT 11, PRV_M, PRV_U, CAUSE_FAULT_FETCH, u_target, u_target, RESUME_JUMP, 1f
    SRET_TO PRV_U, u_target
1:
    // Entry 0 over everything, R only: no fetch, no store.
    PMP0 -1, PMP_A_NAPOT | PMP_R
    EXPECT 3, PRV_M, PRV_S, CAUSE_FAULT_FETCH, s_target2, s_target2, RESUME_JUMP, 1f
    MRET_TO PRV_S, s_target2
1:  la a0, buf
    lw t1, 0(a0)                // M is not affected
    sw t1, 0(a0)
    // (M with MPRV = 1 borrowing S's permissions: pmp_partial.S.)

    // Entry 0: one page with no permission; entry 1: everything, RWX.
    la s0, pmp_page             // NAPOT over 4 KiB: (addr >> 2) | (4096 / 8 - 1)
    srli t0, s0, 2
    ori t0, t0, 0x1ff
    csrw pmpaddr0, t0
    li t0, -1
    csrw pmpaddr1, t0
    li t0, ((PMP_A_NAPOT | PMP_R | PMP_W | PMP_X) << 8) | PMP_A_NAPOT
    csrw pmpcfg0, t0
    lw t1, 8(s0)                // M still is not affected
    MRET_TO PRV_S, in_s
in_s:
    la a0, buf
    lw t1, 0(a0)                // elsewhere S may load, store and fetch
    sw t1, 0(a0)
    EXPECT 6, PRV_M, PRV_S, CAUSE_FAULT_LOAD, 1f, pmp_page + 8, RESUME_AT, 2f
1:  lw t1, 8(s0)
    FAIL_NO_TRAP 6
2:  SRET_TO PRV_U, in_u
in_u:
    EXPECT 7, PRV_M, PRV_U, CAUSE_FAULT_STORE, 1f, pmp_page + 16, RESUME_AT, 2f
1:  sw t1, 16(s0)
    FAIL_NO_TRAP 7
2:  ECALL_TO_M 8, PRV_U

    // Locked, the no-permission entry applies to M as well (until reset).
    csrr t0, pmpcfg0
    ori t0, t0, PMP_L
    csrw pmpcfg0, t0
    EXPECT 9, PRV_M, PRV_M, CAUSE_FAULT_LOAD, 1f, pmp_page, RESUME_AT, 2f
1:  lw t1, 0(s0)
    FAIL_NO_TRAP 9
2:
    TEST_PASS

    // Targets that are never executed: the fetch faults.
s_target:
u_target:
    FAIL_NO_TRAP 1
s_target2:
    FAIL_NO_TRAP 3

    .data
    .balign 16
buf:
    .space 16
    .bss
    .balign PAGE_SIZE
pmp_page:
    .space PAGE_SIZE
