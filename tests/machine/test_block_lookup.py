"""How the next translated block is found (docs/unicorn.md#costs):

- after a CSR instruction, whose block Unicorn ends with an exit to its main loop, a
  core's engine looks the next block up from translated code (harness/native/chain.c):
  CSR values, stops at a budget and interrupts are as before, and an engine without a
  core keeps Unicorn's exit;
- two blocks that share a slot of Unicorn's jump cache are found again through the
  core's own cache (harness/native/tbcache.c), and that cache never hands back a block
  whose code was rewritten, nor one of another address space at the same virtual pc.
"""

from __future__ import annotations

import pytest
from unicorn import UC_ARCH_RISCV, UC_MODE_RISCV64, Uc
from unicorn.riscv_const import UC_RISCV_REG_A1, UC_RISCV_REG_PC

from machine.asm import SV39_MACROS, build_asm
from privlab.build.toolchain import ARCHES
from privlab.machine import Stop
from privlab.native.library import load_library


def chained(ends_chained: bool) -> int:
    return int(load_library().chain_count(ends_chained))


def tbcache_hits() -> int:
    return int(load_library().tbcache_count(True))


def tbcache_lookups() -> int:
    """Lookups that reached the core's cache, found there or not."""
    lib = load_library()
    return int(lib.tbcache_count(True)) + int(lib.tbcache_count(False))


def jump_cache_slot(pc: int) -> int:
    """QEMU 5.0's tb_jmp_cache_hash_func for 4 KiB pages and 4096 slots."""
    tmp = pc ^ (pc >> 6)
    return ((tmp >> 6) & 0xFC0) | (tmp & 0x3F)


# sscratch is a CSR Unicorn keeps itself: each csrw/csrr ends a block, and the next
# block is looked up. 1,000 rounds, each checked; then the sum of what was read.
SCRATCH_LOOP = """
    li s2, 0
    li s3, 0
    li s4, 1000
1:  csrw sscratch, s3
    csrr t1, sscratch
    bne t1, s3, 2f
    add s2, s2, t1
    addi s3, s3, 1
    blt s3, s4, 1b
    li t0, 499500               // 0 + 1 + ... + 999
    bne s2, t0, 3f
    PASS
2:  FAIL 1
3:  FAIL 2
"""


@pytest.mark.parametrize("arch", ARCHES)
def test_csr_blocks_go_on_to_the_next_block_in_translated_code(bare, arch: str) -> None:
    before = chained(True)
    m = bare(build_asm(SCRATCH_LOOP, arch))
    r = m.run(max_insns=100_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    assert chained(True) > before     # the csrw's and csrr's blocks were translated so


@pytest.mark.parametrize("arch", ARCHES)
def test_a_budget_stops_a_loop_that_never_leaves_translated_code(bare, arch: str) -> None:
    # Every block ends with a CSR instruction: with chaining, nothing returns to
    # Unicorn's main loop, and the budget is still obeyed at a block boundary.
    m = bare(build_asm("""
        li t0, 0
    1:  csrw sscratch, t0
        addi t0, t0, 1
        csrr t1, sscratch
        j 1b
    """, arch))
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.BUDGET
    assert 10_000 <= r.instret < 10_000 + 3     # a block here is at most 3 long


def test_an_engine_without_a_core_keeps_unicorns_exit(bare) -> None:
    bare(build_asm("PASS\n"))          # a core in this process: chain.c installed
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.mem_map(0x1000, 0x1000)
    # csrw sscratch, a1; addi a1, a1, 1; jal zero, 0
    uc.mem_write(0x1000, bytes.fromhex("73901514" "93851500" "6f000000"))
    before = chained(False), chained(True)
    uc.emu_start(0x1000, 0x1008, count=0)
    assert (uc.reg_read(UC_RISCV_REG_A1), uc.reg_read(UC_RISCV_REG_PC)) == (1, 0x1008)
    assert chained(False) > before[0] and chained(True) == before[1]


# f at a page's start and g 0x104 bytes on share a jump-cache slot; the loop calls
# both through jalr 100 times, so each finds the other in that slot. At round 50 f's
# `li a0, 1` is rewritten to `li a0, 2` (fence.i): its old block must not come back.
# Sum: 50 * 1 + 50 * 2 + 100 * 10.
SHARED_SLOT = """
    li s2, 0
    li s3, 0
    li s4, 100
    la s5, f
    la s6, g
    li s7, 0x00200513           // li a0, 2
1:  li t0, 50
    bne s3, t0, 2f
    sw s7, 0(s5)
    fence.i
2:  jalr s5
    add s2, s2, a0
    jalr s6
    add s2, s2, a0
    addi s3, s3, 1
    blt s3, s4, 1b
    li t0, 1150
    bne s2, t0, 3f
    PASS
3:  slli s2, s2, 16
    FAIL_REG s2
    .balign 4096
    .option push
    .option norvc               // f's first instruction is rewritten as a word
f:  li a0, 1
    ret
    .skip 0x104 - (. - f)
g:  li a0, 10
    ret
    .option pop
"""


def test_blocks_that_share_a_jump_cache_slot_come_from_the_cores_cache(bare) -> None:
    elf = build_asm(SHARED_SLOT)
    m = bare(elf)
    f, g = m.symbols["f"], m.symbols["g"]
    assert (g - f, jump_cache_slot(f)) == (0x104, jump_cache_slot(g))
    before = tbcache_hits()
    r = m.run(max_insns=100_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), f"sum {r.exit_status}"
    assert tbcache_hits() - before >= 100      # f and g, found again each round


# The same virtual page 0xC0000000 maps to page_a in A and to page_b (a page on) in
# B. Each page holds f at +0 and g at +0x104, which share a jump-cache slot: f returns
# 1 in page_a and 2 in page_b, g 10 and 20. S calls f and g 50 times in each space,
# alternating, so a lookup of f in B finds A's f in the core's cache, and must tell
# them apart by the physical address the pc has now. Sum: 50 * (1 + 10 + 2 + 20).
TWO_SPACES = r"""
    TWO_SPACES page_a
    OPEN_PMP
    ENTER_S_SV39 root_a, supervisor
supervisor:
    li s0, 0xC0000000
    li s2, 0xC0000104
    li s1, 0
    li s3, 50
    SATP s4, root_a
    SATP s5, root_b
1:  csrw satp, s4
    sfence.vma zero, zero
    CALLS
    csrw satp, s5
    sfence.vma zero, zero
    CALLS
    addi s3, s3, -1
    bnez s3, 1b
    ecall                               // to M, which powers off with the sum
    .align 2
trap:
    slli s1, s1, 16
    FAIL_REG s1
    .balign 4096
page_a:
    FUNCTIONS 1
    FUNCTIONS 2
    TWO_SPACES_TABLES
"""

TWO_SPACES_MACROS = r"""
.macro CALLS                      // s1 += f() + g()
    jalr s0
    add s1, s1, a0
    jalr s2
    add s1, s1, a0
.endm
.macro FUNCTIONS v                // a page: f at +0 returns \v, g at +0x104 returns 10 * \v
    .balign 4096
1:  li a0, \v
    ret
    .skip 0x104 - (. - 1b)
    li a0, 10 * \v
    ret
.endm
"""


def test_one_virtual_pc_in_two_address_spaces_runs_each_spaces_code(bare) -> None:
    assert jump_cache_slot(0xC000_0000) == jump_cache_slot(0xC000_0104)
    m = bare(build_asm(SV39_MACROS + TWO_SPACES_MACROS + TWO_SPACES))
    before = tbcache_lookups()
    r = m.run(max_insns=100_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 1650), f"sum {r.exit_status}"
    # Each space's f and g evict each other from the jump cache, so their lookups
    # reached the core's cache, where the other space's f (or g) had been kept.
    assert tbcache_lookups() - before >= 100
