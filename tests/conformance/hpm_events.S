// hpm_events.S: the events the programmable counters count, as QEMU 7.2 has them on
// virt (no Sscofpmf).
//
// mhpmeventN selects an SBI PMU event index in bits 19:0: 1 (cycles) and 2
// (instructions) make mhpmcounterN count, from the value written to it after the
// event was selected; an event nothing implements (0x12345) leaves the counter holding
// what was written, and so does event 0 once the counter is written again. The bits
// above 19 (Sscofpmf's OF and mode filters, RV64) do not stop a counter in M.
// hpmcounterN shows the counting counter to U when mcounteren and scounteren allow.
// Without Sscofpmf, scountovf (0xda0) and, on RV32, mhpmevent3h (0x723) are illegal.
//
// Only "the counter moved" or "it did not" is checked: under QEMU without -icount the
// counters follow the host clock, so their values are not a function of the program.
// (The exact counts are privlab's: tests/machine/test_hpm_events.py.) Each event goes
// to one counter at a time and each counter is written after its event is selected:
// QEMU 7.2 gives an event only to the first counter that selects it and reads a counter
// that was not written after the selection as the whole count since reset.
//
// Expected traps, in order (illegal_instruction unless said):
//  1: csrr a0, scountovf (0xda002573)
//  2: csrr a0, 0x723 (mhpmevent3h), RV32 only (0x72302573)
// 14: user_ecall (after reading hpmcounter3 twice from U)
#include "conformance.h"

.macro ILLEGAL check, from, bits, insn:vararg
    EXPECT \check, PRV_M, \from, CAUSE_ILLEGAL_INSTRUCTION, .Linsn\@, \bits, RESUME_AT, .Lnext\@
.Linsn\@:
    \insn
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

// Fail `check` unless csr, read after a few instructions, is above `from` (low XLEN
// bits, unsigned: the counters start far below a wrap).
.macro CHECK_MOVES check, csr, from
    nop
    nop
    nop
    csrr s1, \csr
    li s0, \from
    bltu s0, s1, .Lok\@
    mv a1, s1
    addi a2, s0, 1              // (want: at least this)
    FAIL \check
.Lok\@:
.endm

#define EVENT_CYCLES 1
#define EVENT_INSTRUCTIONS 2
#define EVENT_NONE_SUCH 0x12345
#define START 1000

TEST_MAIN hpm_events
    ILLEGAL 1, PRV_M, 0xda002573, csrr a0, 0xda0
#if __riscv_xlen == 32
    ILLEGAL 2, PRV_M, 0x72302573, csrr a0, 0x723
#endif
    // Instructions, on counter 3.
    li t0, EVENT_INSTRUCTIONS
    csrw 0x323, t0              // mhpmevent3
    li t0, START
    csrw 0xb03, t0              // mhpmcounter3
    CHECK_MOVES 3, 0xb03, START
    CHECK_MOVES 4, 0xc03, START // hpmcounter3 in M

    // Cycles, on counter 5.
    li t0, EVENT_CYCLES
    csrw 0x325, t0
    li t0, START
    csrw 0xb05, t0
    CHECK_MOVES 5, 0xb05, START

    // An event nothing implements: counter 6 keeps what was written.
    li t0, EVENT_NONE_SUCH
    csrw 0x326, t0
    li t0, START
    csrw 0xb06, t0
    nop
    nop
    CHECK_CSR 6, 0xb06, START

    // Event 0 again: counter 5 stops; written, it holds the value.
    csrw 0x325, zero
    li t0, START
    csrw 0xb05, t0
    nop
    nop
    CHECK_CSR 7, 0xb05, START

#if __riscv_xlen == 64
    // The bits above the event index (here MINH, bit 62) leave cycles counting in M.
    li t0, (1 << 62) | EVENT_CYCLES
    csrw 0x325, t0
    CHECK_CSR 8, 0x325, (1 << 62) | EVENT_CYCLES
    li t0, START
    csrw 0xb05, t0
    CHECK_MOVES 9, 0xb05, START
    csrw 0x325, zero
#endif

    // hpmcounter3 from U, with mcounteren and scounteren bit 3.
    li t0, 8
    csrw mcounteren, t0
    csrw scounteren, t0
    li t0, START
    csrw 0xb03, t0
    MRET_TO PRV_U, in_u
in_u:
    csrr s2, 0xc03
    nop
    nop
    csrr s3, 0xc03
    bgeu s2, s3, fail_u         // moved in U
    li s4, START
    bgeu s4, s2, fail_u         // from the value M wrote
    ECALL_TO_M 14, PRV_U
    csrw mcounteren, zero
    csrw scounteren, zero
    csrw 0x323, zero
    csrw 0x326, zero
    TEST_PASS

fail_u:
    mv a1, s3
    mv a2, s2
    FAIL 15
