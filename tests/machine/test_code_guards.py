"""Code rewritten through a second mapping is seen: the core guards each physical page
code runs on (harness/native/guard.c), so a store through another virtual address of
that page still reaches Unicorn's self-modifying-code check
(docs/unicorn.md#a-dirty-alias-hides-rewritten-code). A kernel does exactly this when
exec writes a new program, through its direct map of RAM, into pages an old program ran
from."""

from __future__ import annotations

from machine.asm import build_asm
from privlab.machine import Stop
from privlab.native.library import load_library

GUARD_RELEASED, GUARD_GIVEN_UP = 0, 2   # guard_count's arguments (hart.h)

# S-mode with Sv39: VA = PA for RAM (read, execute) and the same RAM again at
# 0xC0000000 (read, write); t1 = func's address through that alias. `func` returns 1;
# the body (between PROLOGUE and EPILOGUE) calls it, leaves that in s1, rewrites it
# through the alias to return 2 and calls it again. M-mode powers off with code
# 10 * first + second.
PROLOGUE = """
    OPEN_PMP
    ENTER_S_SV39 root, supervisor
supervisor:
    li t1, 0xC0000000
    la t0, func
    li t3, 0x80000000
    sub t0, t0, t3
    add t1, t1, t0
"""
REWRITE = """
    li t2, 0x4509                   // c.li a0, 2
    sh t2, 0(t1)
"""
EPILOGUE = """
    li t0, 10
    mul s1, s1, t0
    add s1, s1, a0
    slli s1, s1, 16
    ecall                           // to M, which powers off with the result
    .align 2
trap:
    FAIL_REG s1
    .balign 4096
func:
    c.li a0, 1
    ret
    .balign 8192
stubs:                              // 40 functions on pages two apart
    .rept 40
    ret
    .balign 8192
    .endr
    .data
    .balign 4096
root:
    .dword 0, 0
    .dword ((0x80000000 >> 12) << 10) | 0x4B   // VA 0x80000000: V R X A
    .dword ((0x80000000 >> 12) << 10) | 0xC7   // VA 0xC0000000: V R W A D
    .fill 508, 8, 0
"""

# The alias's TLB entry is made dirty before func is first translated.
ALIAS_REWRITE = PROLOGUE + """
    sw zero, 64(t1)                 // the alias's TLB entry: dirty
    call func
    mv s1, a0
""" + REWRITE + """
    call func
""" + EPILOGUE

# After code on more separate pages than the core keeps guards for (GUARD_MAX, 32):
# func runs, the 40 stubs run, and only then is func's page made dirty and rewritten
# through the alias, before func runs again. The guards were reset on the way, so this
# checks that no translation outlives its guard.
OVERFLOW_REWRITE = PROLOGUE + """
    call func
    mv s1, a0
    la s2, stubs
    li s3, 40
1:  jalr s2
    li t0, 8192
    add s2, s2, t0
    addi s3, s3, -1
    bnez s3, 1b
    sw zero, 64(t1)                 // the alias's TLB entry: dirty
""" + REWRITE + """
    call func
""" + EPILOGUE


def test_code_rewritten_through_a_dirty_alias_runs_as_rewritten(bare) -> None:
    m = bare(build_asm(ALIAS_REWRITE))
    r = m.run(max_insns=100_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 12), m.console.text()


def test_code_rewritten_after_the_guards_overflowed_runs_as_rewritten(bare) -> None:
    m = bare(build_asm(OVERFLOW_REWRITE))
    r = m.run(max_insns=100_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 12), m.console.text()


# A guarded page that is filled byte by byte stops being code (harness/native/guard.c):
# after a run of stores its blocks are given up and its guard goes, so the rest of the
# fill is fast. func runs (1); its page is then filled through the alias from `image`
# (last byte first, so the stores reach func's own bytes only at the end),
# whose first instructions return 2, and func runs again (2): its page was guarded
# again first, which also made the alias's TLB entry, dirty from the fill, clean. Then
# one store through the alias makes it return 3, with no fence, and it runs a third time.
# Exit status: 100 * first + 10 * second + third.
FILLED_PAGE = PROLOGUE + """
    call func
    mv s1, a0
    li s4, 4096                     // from the page's end down: func's bytes come last
1:  addi s4, s4, -1
    la s2, image
    add s2, s2, s4
    lbu t0, 0(s2)
    add s3, t1, s4
    sb t0, 0(s3)
    bnez s4, 1b
    call func
    li t0, 10
    mul s1, s1, t0
    add s1, s1, a0
    li t2, 0x450d                   // c.li a0, 3
    sh t2, 0(t1)
    call func
""" + EPILOGUE.replace("    .data\n", """    .balign 4096
image:
    c.li a0, 2
    ret
    .balign 4096
    .data
""")


def test_a_page_filled_over_its_code_loses_its_guard_and_is_guarded_again(bare) -> None:
    lib = load_library()
    before = lib.guard_count(GUARD_GIVEN_UP), lib.guard_count(GUARD_RELEASED)
    m = bare(build_asm(FILLED_PAGE))
    r = m.run(max_insns=1_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 123), m.console.text()
    assert lib.guard_count(GUARD_GIVEN_UP) > before[0]     # after a run of stores, not 4096
    assert lib.guard_count(GUARD_RELEASED) > before[1]


# A page that holds both code and a buffer the program fills: g (returns 1) and, after
# it on the same page, 128 bytes filled from another page, 50 times, g called before
# each fill. The first fill gives g's page up; g then runs again at once, so fills stop
# giving it up for a while, instead of g being translated again every round.
# Exit status: the sum of g's results.
MIXED_PAGE = """
    li s2, 0
    li s3, 50
1:  call g
    add s2, s2, a0
    la t0, buffer
    li t1, 128
2:  sb t1, 0(t0)
    addi t0, t0, 1
    addi t1, t1, -1
    bnez t1, 2b
    addi s3, s3, -1
    bnez s3, 1b
    slli s2, s2, 16
    FAIL_REG s2
    .balign 4096
g:  li a0, 1
    ret
    .balign 64
buffer:
    .fill 128, 1, 0
"""


def test_a_page_whose_code_runs_between_fills_is_not_given_up_every_time(bare) -> None:
    lib = load_library()
    before = lib.guard_count(GUARD_GIVEN_UP)
    m = bare(build_asm(MIXED_PAGE))
    r = m.run(max_insns=1_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 50)
    assert lib.guard_count(GUARD_GIVEN_UP) - before == 1
