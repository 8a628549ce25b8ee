// triggers.S: the debug trigger module (Sdtrig) as QEMU 7.2 has it on virt.
//
// Registers: tselect selects one of two triggers (writes of 2 or more are ignored);
// tdata1 resets to an mcontrol (type 2) trigger with nothing enabled; tinfo shows types
// 2 and 6; a tdata1 write keeps only LOAD/STORE/EXECUTE and the U/S/M enables (match,
// chain, action, timing, select and hit read back 0); a write of an unsupported type
// (3, icount) is ignored; tdata3 reads 0 whatever is written.
//
// Firing: a trigger fires only at the privileges it enables, before the instruction
// (execute) or the access (load, store), as a breakpoint exception (cause 3) with
// epc = the instruction and tval = 0, as QEMU 7.2 reports it. A store that fires does
// not write. An access overlapping the watched XLEN/8 bytes fires; one next to them
// does not. Both triggers work at once.
//
// Expected traps, in order (to M):
//   9: breakpoint from M, epc = m_target (execute trigger, M enabled)
//  10: breakpoint from U, epc = shared (execute, U only: S ran `shared` untouched)
//  11: user_ecall
//  14: breakpoint from M, epc = the lw of watched (trigger 1, load, M)
//  15: breakpoint from M, epc = the sw to watched (trigger 1 now store, M)
//  17: breakpoint from S, epc = the lw of watched (trigger 1: load, S)
//  18: breakpoint from S, epc = m_target2 (trigger 0: execute, S), both armed
//  19: supervisor_ecall
#include "conformance.h"

#define TYPE(t) ((t) << (__riscv_xlen - MCONTROL_TYPE_FROM_TOP))
#define MC TYPE(2)

TEST_MAIN triggers
    CHECK_CSR 1, tselect, 0
    CHECK_CSR 2, tdata1, MC
    CHECK_CSR 3, CSR_TINFO, (1 << 2) | (1 << 6)
    li t0, 2
    csrw tselect, t0
    CHECK_CSR 4, tselect, 0
    li t0, 1
    csrw tselect, t0
    CHECK_CSR 5, tselect, 1
    csrw tselect, zero

    // Only the enables survive a write; an unsupported type is ignored.
    li t0, MC | MCONTROL_M | MCONTROL_EXECUTE | MCONTROL_CHAIN | MCONTROL_TIMING | MCONTROL_SELECT | MCONTROL_HIT | (1 << MCONTROL_MATCH_SHIFT) | (1 << MCONTROL_ACTION_SHIFT)
    la t1, m_target
    csrw tdata2, t1
    csrw tdata1, t0
    CHECK_CSR 6, tdata1, MC | MCONTROL_M | MCONTROL_EXECUTE
    li t0, TYPE(3) | MCONTROL_M | MCONTROL_LOAD
    csrw tdata1, t0
    CHECK_CSR 7, tdata1, MC | MCONTROL_M | MCONTROL_EXECUTE
    li t0, 5
    csrw tdata3, t0
    CHECK_CSR 8, tdata3, 0
    CHECK_CSR_ADDR 12, tdata2, m_target

    // Execute, M: before m_target runs.
    EXPECT 9, PRV_M, PRV_M, CAUSE_BREAKPOINT, m_target, 0, RESUME_AT, 2f
m_target:
    FAIL_NO_TRAP 9
2:
    // Execute, U only: S calls `shared` freely, U's call fires.
    la t1, shared
    csrw tdata2, t1
    li t0, MC | MCONTROL_U | MCONTROL_EXECUTE
    csrw tdata1, t0
    MRET_TO PRV_S, in_s
in_s:
    jal shared
    SRET_TO PRV_U, in_u
in_u:
    EXPECT 10, PRV_M, PRV_U, CAUSE_BREAKPOINT, shared, 0, RESUME_AT, 2f
    jal shared
    FAIL_NO_TRAP 10
2:  ECALL_TO_M 11, PRV_U
    li t0, MC
    csrw tdata1, t0

    // Trigger 1, load, M: the XLEN/8 bytes at `watched` and nothing else.
    li t0, 1
    csrw tselect, t0
    la s0, watched
    csrw tdata2, s0
    li t0, MC | MCONTROL_M | MCONTROL_LOAD
    csrw tdata1, t0
    EXPECT 14, PRV_M, PRV_M, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  lw t1, 0(s0)
    FAIL_NO_TRAP 14
2:  sw zero, 0(s0)              // a store: no load trigger fires
    lw t1, REGBYTES(s0)         // the next bytes: not watched
    lw t1, -4(s0)

    // Store instead: it fires, and the word keeps its value.
    li t0, MC | MCONTROL_M | MCONTROL_STORE
    csrw tdata1, t0
    li t1, 0x5a5a
    EXPECT 15, PRV_M, PRV_M, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  sw t1, 0(s0)
    FAIL_NO_TRAP 15
2:  lw t2, 0(s0)                // (a load: the store trigger does not fire)
    CHECK_REG 16, t2, 0

    // Both triggers armed, for S: trigger 1 on loads, trigger 0 on execution.
    li t0, MC | MCONTROL_S | MCONTROL_LOAD
    csrw tdata1, t0
    csrw tselect, zero
    la t1, m_target2
    csrw tdata2, t1
    li t0, MC | MCONTROL_S | MCONTROL_EXECUTE
    csrw tdata1, t0
    MRET_TO PRV_S, in_s2
in_s2:
    EXPECT 17, PRV_M, PRV_S, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 2f
1:  lw t1, 0(s0)
    FAIL_NO_TRAP 17
2:  EXPECT 18, PRV_M, PRV_S, CAUSE_BREAKPOINT, m_target2, 0, RESUME_AT, 2f
m_target2:
    FAIL_NO_TRAP 18
2:  ECALL_TO_M 19, PRV_S
    li t0, MC
    csrw tdata1, t0
    li t0, 1
    csrw tselect, t0
    li t0, MC
    csrw tdata1, t0
    TEST_PASS

shared:
    ret

    .data
    .balign 16
    .space 8
watched:
    .dword 0
    .dword 0
