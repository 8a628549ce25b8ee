"""A full TLB flush (sfence.vma zero, zero) is exact when done page by page
(harness/native/tlbflush.c): after a page-table entry changes and sfence.vma runs, loads
and fetches through the old mapping see the new page, whether few pages were filled
since the last flush (flushed one by one) or many (Unicorn's own full flush)."""

from __future__ import annotations

import pytest

from machine.asm import build_asm
from privlab.machine import Stop
from privlab.native.library import load_library

# S-mode with Sv39: VA = PA for RAM through a gigapage (read, write, execute), and the
# 4 KiB page at VA 0xC0000000 through a three-level walk to page_a, later to page_b.
# Each page holds a word (0x11 or 0x22) and, at offset 0x100, a function returning
# 1 or 2. The result (exit status) has one bit per check: bit 0 the load through the
# old mapping saw 0x11, bit 1 the call returned 1, bit 2 the load after the switch
# saw 0x22, bit 3 the call after it returned 2.
PROGRAM = """
    OPEN_PMP
    ENTER_S_SV39 root, supervisor
supervisor:
    li s0, 0xC0000000
    li s1, 0
    lw t0, 0(s0)
    li t1, 0x11
    bne t0, t1, 1f
    ori s1, s1, 1
1:  addi t2, s0, 0x100
    jalr t2
    li t1, 1
    bne a0, t1, 1f
    ori s1, s1, 2
1:  la t0, leaf                     // point VA 0xC0000000 at page_b
    la t1, page_a + 4096
    srli t1, t1, 12
    slli t1, t1, 10
    ori t1, t1, 0xCF                // V R W X A D
    sd t1, 0(t0)
    TOUCH
    sfence.vma zero, zero
    lw t0, 0(s0)
    li t1, 0x22
    bne t0, t1, 1f
    ori s1, s1, 4
1:  addi t2, s0, 0x100
    jalr t2
    li t1, 2
    bne a0, t1, 1f
    ori s1, s1, 8
1:  slli s1, s1, 16
    ecall                           // to M, which powers off with the result
    .align 2
trap:
    FAIL_REG s1
    .balign 4096
page_a:                             // then page_b, a page later
    VALUE_PAGE 0x11, 1
    VALUE_PAGE 0x22, 2
    .data
    .balign 4096
root:
    .dword 0, 0
    .dword ((0x80000000 >> 12) << 10) | 0xCF   // VA 0x80000000, 1 GiB: V R W X A D
    .dword 0                                   // VA 0xC0000000: set up below
    .fill 508, 8, 0
l1:
    .fill 512, 8, 0
l0:
leaf:
    .fill 512, 8, 0
    .balign 4096
touched:
    .fill 24 * 4096, 1, 0
"""

# Before the sfence: nothing more, or loads from 24 more pages (more than tlbflush.c
# lists, so the flush is Unicorn's own).
NO_TOUCH = ""
TOUCH_MANY = """
    la t3, touched
    li t4, 24
2:  ld t5, 0(t3)
    li t6, 4096
    add t3, t3, t6
    addi t4, t4, -1
    bnez t4, 2b
"""

# The table entries that depend on link addresses, filled in by M before paging is on.
SETUP = """
    la t0, root
    la t1, l1
    srli t1, t1, 12
    slli t1, t1, 10
    ori t1, t1, 1                   // V: a pointer
    sd t1, 24(t0)
    la t0, l1
    la t1, l0
    srli t1, t1, 12
    slli t1, t1, 10
    ori t1, t1, 1
    sd t1, 0(t0)
    la t0, leaf
    la t1, page_a
    srli t1, t1, 12
    slli t1, t1, 10
    ori t1, t1, 0xCF
    sd t1, 0(t0)
"""


def _program(touch: str) -> str:
    return (SETUP + PROGRAM).replace("    TOUCH\n", touch)


def _flushes() -> tuple[int, int]:
    """Full flushes so far: Unicorn's own, and those done page by page."""
    lib = load_library()
    return int(lib.tlbflush_count(False)), int(lib.tlbflush_count(True))


@pytest.mark.parametrize(("touch", "by_page"), [(NO_TOUCH, True), (TOUCH_MANY, False)],
                         ids=["few-pages-flushed-one-by-one", "many-pages-unicorns-full-flush"])
def test_sfence_vma_makes_loads_and_fetches_see_the_new_page(bare, touch: str,
                                                             by_page: bool) -> None:
    m = bare(build_asm(_program(touch)))
    before = _flushes()
    r = m.run(max_insns=100_000)
    after = _flushes()
    assert (r.stop, r.exit_status) == (Stop.HALT, 15), m.console.text()
    assert after[by_page] > before[by_page]
