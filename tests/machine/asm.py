"""Small bare-metal programs written inline in a test, built with the real toolchain.

    elf = build_asm('''
        li a0, 1
        ecall
    ''', "rv64")

The text becomes the body of `_start` (M-mode, at the RAM base) after a prologue that
sets mtvec to `trap`; a body that does not define `trap:` gets one that powers off
through the finisher with exit status = mcause. The `PASS` and `FAIL code` macros
power off through the finisher, `FAIL_REG reg` with the status in reg's bits 16 and up;
`NEXT_MEPC` resumes a trap handler's mret after the instruction; `VALUE_PAGE word, value`
places a page holding `word` and a function at +0x100 returning `value`; `OPEN_PMP`
opens all memory to S and U;
`ENTER priv, entry` mrets to `entry` at privilege `priv` (0: U, 1: S);
`U_ECALLS_TO_S handler, entry` opens memory, delegates U's ecalls to S at `handler`
and enters U at `entry`;
`ENTER_S_SV39 root, entry` turns on Sv39 rooted at `root` and enters S at `entry`;
`UART_IRQ_TO_M` routes the UART's PLIC source to M-mode (context 0), and
`UART_RX_INTERRUPTS_TO_M` also turns on its received-data interrupt, MEIE and MIE.
`SV39_MACROS`, prepended to a body, adds `TABLES` (root t0 -> t1 -> t2 -> page t3 at VA
0xC0000000), `POINTER`, `LEAF`, `SATP reg, root`, and `TWO_SPACES page` with
`TWO_SPACES_TABLES` (two Sv39 spaces, root_a and root_b, mapping VA 0xC0000000 to `page`
and to the page after it). Builds are cached by content.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from privlab.build.baremetal import build_baremetal
from privlab.build.cache import cache_root, content_key
from privlab.build.toolchain import ARCHES

PRELUDE = """\
#include "platform.h"
#if __riscv_xlen == 64
#define PMP_ALL -1
#else
#define PMP_ALL 0xffffffff
#endif
.macro PASS
    li t6, PLATFORM_FINISHER_BASE
    li t5, FINISHER_PASS
    sw t5, 0(t6)
99: j 99b
.endm
.macro FAIL code
    li t6, PLATFORM_FINISHER_BASE
    li t5, FINISHER_FAIL | (\\code << 16)
    sw t5, 0(t6)
99: j 99b
.endm
.macro FAIL_REG reg        // power off with exit status \\reg >> 16 (the code already shifted)
    li t6, PLATFORM_FINISHER_BASE
    li t5, FINISHER_FAIL
    or t5, t5, \\reg
    sw t5, 0(t6)
99: j 99b
.endm
.macro NEXT_MEPC          // resume after the trapping instruction (4 bytes)
    csrr t0, mepc
    addi t0, t0, 4
    csrw mepc, t0
.endm
.macro VALUE_PAGE word, value   // a page-aligned word, and at +0x100 a function returning \\value
    .balign 4096
    .word \\word
    .balign 256
    li a0, \\value
    ret
.endm
.macro UART_IRQ_TO_M       // PLIC: the UART's source at priority 1, enabled in context 0 (M)
    li t0, PLATFORM_PLIC_BASE + PLIC_PRIORITY + 4 * PLATFORM_UART0_IRQ
    li t1, 1
    sw t1, 0(t0)
    li t0, PLATFORM_PLIC_BASE + PLIC_ENABLE + PLIC_CONTEXT_M * PLIC_ENABLE_STRIDE
    li t1, 1 << PLATFORM_UART0_IRQ
    sw t1, 0(t0)
.endm
.macro UART_RX_INTERRUPTS_TO_M   // received data interrupts the hart in M: IER.ERBFI, MEIE, MIE
    UART_IRQ_TO_M
    li t0, PLATFORM_UART0_BASE
    li t1, 0x01
    sb t1, 1(t0)
    li t0, 1 << 11
    csrw mie, t0
    csrsi mstatus, 8
.endm
.macro OPEN_PMP
    li t0, PMP_ALL
    csrw pmpaddr0, t0
    li t0, 0x1f
    csrw pmpcfg0, t0
.endm
.macro ENTER priv, entry          // mret to \\entry at \\priv (0 U, 1 S): MPP = \\priv
    la t0, \\entry
    csrw mepc, t0
    li t0, 0x1800
    csrc mstatus, t0
    .if \\priv
    li t0, \\priv << 11
    csrs mstatus, t0
    .endif
    mret
.endm
.macro U_ECALLS_TO_S handler, entry  // memory open, U's ecalls to S at \\handler; U at \\entry
    OPEN_PMP
    li t0, 1 << 8
    csrw medeleg, t0
    la t0, \\handler
    csrw stvec, t0
    ENTER 0, \\entry
.endm
.macro ENTER_S_SV39 root, entry   // satp: Sv39 rooted at \\root; then mret to \\entry in S
    la t0, \\root
    srli t0, t0, 12
    li t1, 8 << 60
    or t0, t0, t1
    csrw satp, t0
    ENTER 1, \\entry
.endm
    .section .text.entry
    .globl _start
_start:
    la t0, trap
    csrw mtvec, t0
"""

DEFAULT_TRAP = """
    .text
    .align 2
trap:
    csrr t0, mcause
    li t6, PLATFORM_FINISHER_BASE
    slli t0, t0, 16
    li t5, FINISHER_FAIL
    or t5, t5, t0
    sw t5, 0(t6)
98: j 98b
"""


SV39_MACROS = r"""
// Sv39 tables built at run time (t4 is scratch): see test_tlb_banks.py for a use.

.macro POINTER at, to, offset     // *(\at + \offset) = a pointer PTE to \to
    srli t4, \to, 12
    slli t4, t4, 10
    ori t4, t4, 1
    sd t4, \offset(\at)
.endm
.macro LEAF at, to                // *\at = a leaf PTE to \to: V R W X A D
    srli t4, \to, 12
    slli t4, t4, 10
    ori t4, t4, 0xCF
    sd t4, 0(\at)
.endm
.macro TABLES                     // root t0 -> l1 t1 -> leaf t2 -> page t3, at VA 0xC0000000
    POINTER t0, t1, 24
    POINTER t1, t2, 0
    LEAF t2, t3
.endm
.macro SATP reg, root
    la \reg, \root
    srli \reg, \reg, 12
    li t6, 8 << 60
    or \reg, \reg, t6
.endm
.macro TWO_SPACES page           // VA 0xC0000000: \page in space A, the page after it in B
    la t0, root_a
    la t1, l1_a
    la t2, leaf_a
    la t3, \page
    TABLES
    la t0, root_b
    la t1, l1_b
    la t2, leaf_b
    la t3, \page + 4096
    TABLES
.endm
.macro TWO_SPACES_TABLES         // A's and B's tables (in .data): RAM at VA = PA in both
    .data
    .balign 4096
root_a:
    .dword 0, 0
    .dword ((0x80000000 >> 12) << 10) | 0xCF   // VA 0x80000000, 1 GiB: V R W X A D
    .fill 509, 8, 0
l1_a:
    .fill 512, 8, 0
leaf_a:
    .fill 512, 8, 0
root_b:
    .dword 0, 0
    .dword ((0x80000000 >> 12) << 10) | 0xCF
    .fill 509, 8, 0
l1_b:
    .fill 512, 8, 0
leaf_b:
    .fill 512, 8, 0
.endm
"""


def build_asm(body: str, arch: str = "rv64") -> Path:
    body = textwrap.dedent(body)
    has_trap = any(line.strip().startswith("trap:") for line in body.splitlines())
    source = PRELUDE + body + ("" if has_trap else DEFAULT_TRAP)
    key = content_key([arch, source])
    src = cache_root() / "asm-tests" / f"{key}.S"
    src.parent.mkdir(parents=True, exist_ok=True)
    if not src.exists():
        src.write_text(source)
    return build_baremetal([src], ARCHES[arch], src.with_suffix(f".{arch}.elf"))
