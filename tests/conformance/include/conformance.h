// conformance.h: the vocabulary of the bare-metal conformance programs.
//
// Every program in tests/conformance/*.S builds for RV64 and RV32 from the same source.
// It includes this header, starts with TEST_MAIN (entered in M-mode from lib/entry.S
// with PMP open, satp = 0, no delegation, direct mtvec/stvec), and ends with TEST_PASS.
//
// Expected traps are declared in program order with EXPECT, right before the
// instruction that traps. Each EXPECT appends one record to the table `expect_table`
// (section .data.expect); the runtime's trap handlers (lib/runtime.c) take the next
// record on every trap, in M or in S, and compare the level the trap reached, the
// privilege it came from (xPP), xcause, xepc, xtval and the trap-vector slot it entered
// through. A mismatch, a trap with no record left, or (in TEST_PASS) a record whose trap
// never happened ends the run with FINISHER_FAIL | (check << 16) and a line on the UART
// naming the field: `conformance: FAIL check 12 (tval): got 0x... want 0x...`.
//
// Register contract: t5 and t6 belong to the framework (CHECK_* macros clobber them,
// RESUME_JUMP clobbers t6); a trap resumed with RESUME_EPC/AT/SKIP4 preserves every other
// register. Check numbers are 1..250, unique within a program; 255 is "unexpected trap"
// (or a bug in the runtime itself).
#ifndef CONFORMANCE_H
#define CONFORMANCE_H

#include "platform.h"
#include "riscv_gen.h"   // causes, CSR fields, PTE bits: generated from privlab/abi

// ---- XLEN-dependent words -------------------------------------------------------
#if __riscv_xlen == 64
#define LREG ld
#define SREG sd
#define REGBYTES 8
#define XWORD .dword
#elif __riscv_xlen == 32
#define LREG lw
#define SREG sw
#define REGBYTES 4
#define XWORD .word
#else
#error "unsupported XLEN"
#endif

// ---- Page tables: Sv39 on RV64, Sv32 on RV32 ------------------------------------
// Test pages live here, outside the identity maps of MMIO (below 1 GiB on Sv39,
// 4 MiB megapages on Sv32) and of RAM (from PLATFORM_RAM_BASE). See lib/runtime.c.
#define TEST_VA 0x40000000

// ---- The platform, as absolute addresses ------------------------------------------
#define FINISHER_ADDR PLATFORM_FINISHER_BASE
#define CLINT_MSIP_ADDR (PLATFORM_CLINT_BASE + CLINT_MSIP)
#define CLINT_MTIMECMP_ADDR (PLATFORM_CLINT_BASE + CLINT_MTIMECMP)
#define CLINT_MTIME_ADDR (PLATFORM_CLINT_BASE + CLINT_MTIME)
// PLIC registers of source n and context c (c: PLIC_CONTEXT_M, PLIC_CONTEXT_S).
#define PLIC_PRIORITY_ADDR(n) (PLATFORM_PLIC_BASE + PLIC_PRIORITY + 4 * (n))
#define PLIC_PENDING_ADDR (PLATFORM_PLIC_BASE + PLIC_PENDING)
#define PLIC_ENABLE_ADDR(c) (PLATFORM_PLIC_BASE + PLIC_ENABLE + (c) * PLIC_ENABLE_STRIDE)
#define PLIC_THRESHOLD_ADDR(c) \
    (PLATFORM_PLIC_BASE + PLIC_CONTEXT + (c) * PLIC_CONTEXT_STRIDE + PLIC_THRESHOLD)
#define PLIC_CLAIM_ADDR(c) \
    (PLATFORM_PLIC_BASE + PLIC_CONTEXT + (c) * PLIC_CONTEXT_STRIDE + PLIC_CLAIM)
// The NS16550A's byte registers (DLAB = 0) and the bits the programs use.
#define UART_RBR_THR_ADDR (PLATFORM_UART0_BASE + 0)
#define UART_IER_ADDR (PLATFORM_UART0_BASE + 1)
#define UART_IIR_FCR_ADDR (PLATFORM_UART0_BASE + 2)
#define UART_LCR_ADDR (PLATFORM_UART0_BASE + 3)
#define UART_MCR_ADDR (PLATFORM_UART0_BASE + 4)
#define UART_LSR_ADDR (PLATFORM_UART0_BASE + 5)
#define UART_MSR_ADDR (PLATFORM_UART0_BASE + 6)
#define UART_SCR_ADDR (PLATFORM_UART0_BASE + 7)
#define UART_IER_ETBEI 0x02
// A physical address with nothing behind it: the first byte past 128 MiB of RAM.
#define UNMAPPED_ADDR (PLATFORM_RAM_BASE + PLATFORM_RAM_SIZE_DEFAULT)

// ---- The expectation record (lib/runtime.c: struct expect) ------------------------
#define EXP_CHECK  0
#define EXP_LEVEL  1
#define EXP_FROM   2
#define EXP_CAUSE  3
#define EXP_EPC    4
#define EXP_TVAL   5
#define EXP_ACTION 6
#define EXP_RESUME 7
#define EXP_HOOK   8
#define EXP_WORDS  9

// How the handler leaves after a matching trap (EXP_ACTION):
#define RESUME_EPC   0  // xRET to xepc unchanged (interrupts)
#define RESUME_AT    1  // xepc := resume, xRET (back to the privilege the trap came from)
#define RESUME_JUMP  2  // jump to resume at the handler's privilege (clobbers t6)
#define RESUME_SKIP4 3  // xepc += 4, xRET (skip an ecall)

// The record of the last trap (lib/runtime.c: struct last_trap), for CHECK_LAST.
#define LAST_COUNT  0
#define LAST_LEVEL  1
#define LAST_CAUSE  2
#define LAST_EPC    3
#define LAST_TVAL   4
#define LAST_STATUS 5   // mstatus (trap to M) or sstatus (trap to S) on handler entry
#define LAST_SLOT   6   // vector slot entered (-1: direct mode entry)
#define LAST_WORDS  7

// What a failed check compared (printed on the UART).
#define WHAT_VALUE   0
#define WHAT_NO_TRAP 1
#define FAIL_MAGIC   0x0fa11ed5   // a7 of the ecall that reports a failure
#define CHECK_UNEXPECTED_TRAP 255

#define STACK_FRAME_WORDS 32

#ifdef __ASSEMBLER__

// The program: entered in M-mode by lib/entry.S. `name` is printed with the verdict.
.macro TEST_MAIN name
    .pushsection .rodata.test_name, "a"
    .globl test_name
test_name:
    .asciz "\name"
    .popsection
    .pushsection .data.expect, "aw"
    .balign REGBYTES
    .globl expect_table
expect_table:
    .popsection
    .text
    .globl test_main
    .balign 4
test_main:
.endm

// The end of the program: every declared trap must have happened.
.macro TEST_PASS
    .pushsection .data.expect, "aw"
    .balign REGBYTES
    XWORD 0, 0, 0, 0, 0, 0, 0, 0, 0
    .popsection
    j conformance_pass
.endm

// The next trap must reach `level` (PRV_M or PRV_S) from privilege `from`, with
// xcause = cause, xepc = epc, xtval = tval; then the handler calls `hook` (if not 0,
// with a0 = the saved registers) and leaves as `action` says.
.macro EXPECT check, level, from, cause, epc, tval, action=RESUME_AT, resume=0, hook=0
    .pushsection .data.expect, "aw"
    .balign REGBYTES
    XWORD \check, \level, \from, \cause, \epc, \tval, \action, \resume, \hook
    .popsection
.endm

// Report failure `check` (got a1, want a2) through an ecall that the runtime's
// handlers recognise at any privilege; does not return.
.macro FAIL check, what=WHAT_VALUE
    li a0, \check
    li a3, \what
    li a7, FAIL_MAGIC
    ecall
.endm

// Placed right after an instruction that must trap: reached only if it did not.
.macro FAIL_NO_TRAP check
    li a1, 0
    li a2, 0
    FAIL \check, WHAT_NO_TRAP
.endm

// `insn` must raise `cause` from `from`, taken at `level` with xtval = tval and xepc =
// the instruction; the handler resumes after it.
.macro EXPECT_FAULT check, level, from, cause, tval, insn:vararg
    EXPECT \check, \level, \from, \cause, .Linsn\@, \tval, RESUME_AT, .Lnext\@
.Linsn\@:
    \insn
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

// Map the 4 KiB page at `va` to the physical address of `symbol` with PTE bits
// `flags` (lib/runtime.c vm_map; clobbers the caller-saved registers).
.macro VM_MAP va, symbol, flags
    li a0, \va
    la a1, \symbol
    li a2, \flags
    call vm_map
.endm

// A jump from `from` to the device register at `addr`, which QEMU 7.2 fetches and
// decodes: it reads as the illegal instruction `parcel`, taken into M with tval = it.
.macro FETCH_ILLEGAL check, from, addr, parcel
    li t0, \addr
    EXPECT \check, PRV_M, \from, CAUSE_ILLEGAL_INSTRUCTION, \addr, \parcel, RESUME_AT, .Lnext\@
    jalr t0
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

// Compare t5 with t6, fail `check` if they differ.
.macro CHECK_T5_T6 check
    beq t5, t6, .Lcheck_ok\@
    mv a1, t5
    mv a2, t6
    FAIL \check
.Lcheck_ok\@:
.endm

.macro CHECK_REG check, reg, value
    mv t5, \reg
    li t6, \value
    CHECK_T5_T6 \check
.endm

.macro CHECK_CSR check, csr, value
    csrr t5, \csr
    li t6, \value
    CHECK_T5_T6 \check
.endm

// csr == the address `symbol` (+ offset)
.macro CHECK_CSR_ADDR check, csr, symbol
    csrr t5, \csr
    la t6, \symbol
    CHECK_T5_T6 \check
.endm

// (csr & mask) == value
.macro CHECK_CSR_BITS check, csr, mask, value
    csrr t5, \csr
    li t6, \mask
    and t5, t5, t6
    li t6, \value
    CHECK_T5_T6 \check
.endm

// (last_trap.field & mask) == value, field one of LAST_*
.macro CHECK_LAST_BITS check, field, mask, value
    la t6, last_trap
    LREG t5, (\field * REGBYTES)(t6)
    li t6, \mask
    and t5, t5, t6
    li t6, \value
    CHECK_T5_T6 \check
.endm

.macro CHECK_LAST check, field, value
    CHECK_LAST_BITS \check, \field, -1, \value
.endm

// (word at symbol & mask) == value
.macro CHECK_MEM_BITS check, symbol, mask, value
    la t6, \symbol
    LREG t5, 0(t6)
    li t6, \mask
    and t5, t5, t6
    li t6, \value
    CHECK_T5_T6 \check
.endm

// ---- Changing privilege ----------------------------------------------------------

// From M: continue at `target` in privilege `prv` (mret with MPP = prv).
.macro MRET_TO prv, target
    li t6, MSTATUS_MPP
    csrc mstatus, t6
    li t6, (\prv << 11)
    csrs mstatus, t6
    la t6, \target
    csrw mepc, t6
    mret
.endm

// From S: continue at `target` in privilege `prv` (sret with SPP = prv).
.macro SRET_TO prv, target
    li t6, SSTATUS_SPP
    csrc sstatus, t6
    li t6, (\prv << 8)
    csrs sstatus, t6
    la t6, \target
    csrw sepc, t6
    sret
.endm

// From U or S (`from`): ecall into M and continue in M after the macro. The ecall must
// not be delegated (medeleg bit `8 + from` clear).
.macro ECALL_TO_M check, from
    EXPECT \check, PRV_M, \from, (CAUSE_USER_ECALL + \from), .Lecall\@, 0, RESUME_JUMP, .Lback\@
.Lecall\@:
    ecall
    FAIL_NO_TRAP \check
.Lback\@:
.endm

// ---- Trap vectors -----------------------------------------------------------------
.macro MTVEC_DIRECT
    la t6, mtrap_direct
    csrw mtvec, t6
.endm
.macro MTVEC_VECTORED
    la t6, mtrap_vectors
    ori t6, t6, 1
    csrw mtvec, t6
.endm
.macro STVEC_DIRECT
    la t6, strap_direct
    csrw stvec, t6
.endm
.macro STVEC_VECTORED
    la t6, strap_vectors
    ori t6, t6, 1
    csrw stvec, t6
.endm

// ---- Interrupt sources (M-mode) ---------------------------------------------------

// Spin, interrupts masked, until (mip & mask) != 0: the deterministic way to make an
// interrupt pending before the CSR write that enables it.
.macro WAIT_MIP mask
.Lwait\@:
    csrr t6, mip
    li t5, \mask
    and t6, t6, t5
    beqz t6, .Lwait\@
.endm

// mtimecmp := mtime + delta (M-mode; clobbers the caller-saved registers)
.macro TIMER_IN delta
    li a0, \delta
    call timer_set_delta
.endm

// mtimecmp := all ones, so MTIP clears (M-mode; clobbers the caller-saved registers)
// 32-bit and byte MMIO through t5/t6 (the framework's registers).
.macro MMIO_SW addr, value
    li t5, \addr
    li t6, \value
    sw t6, 0(t5)
.endm
.macro MMIO_LW reg, addr
    li t5, \addr
    lw \reg, 0(t5)
.endm
.macro MMIO_SB addr, value
    li t5, \addr
    li t6, \value
    sb t6, 0(t5)
.endm
.macro MMIO_LBU reg, addr
    li t5, \addr
    lbu \reg, 0(t5)
.endm

.macro TIMER_OFF
    call timer_off
.endm

#endif // __ASSEMBLER__
#endif // CONFORMANCE_H
