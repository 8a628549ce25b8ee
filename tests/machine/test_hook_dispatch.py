"""The core's hooks are called straight from Unicorn's hook helper
(harness/native/dispatch.c), not through its walk over every hook; any hook the core did
not add still runs, through Unicorn's own code."""

from __future__ import annotations

import platform

import pytest
from elftools.elf.elffile import ELFFile
from unicorn import UC_HOOK_BLOCK, UC_HOOK_CODE

from machine.asm import build_asm
from privlab.machine import Stop
from privlab.native.library import load_library

# Ten rounds of a read of mhartid (an instruction the core emulates: Unicorn's is
# always 0) followed by `counted:`; M then powers off with 100 * mhartid-reads-seen-as-0
# + rounds.
LOOP = """
    li s1, 0
    li s2, 0
    li s3, 10
1:  csrr a1, mhartid
counted:
    seqz a1, a1
    add s2, s2, a1
    addi s1, s1, 1
    bne s1, s3, 1b
    li t0, 100
    mul s2, s2, t0
    add s1, s1, s2
    slli s1, s1, 16
    li t6, PLATFORM_FINISHER_BASE
    li t5, FINISHER_FAIL
    or t5, t5, s1
    sw t5, 0(t6)
99: j 99b
"""


def _symbol(elf_path, name: str) -> int:
    with open(elf_path, "rb") as f:
        sym = ELFFile(f).get_section_by_name(".symtab").get_symbol_by_name(name)
        return int(sym[0]["st_value"])


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the replacement is x86-64 only")
def test_the_pinned_unicorn_helper_is_replaced(bare) -> None:
    m = bare(build_asm(LOOP))
    assert m.run(max_insns=10_000).exit_status == 1010
    assert load_library().dispatch_installed() is True


def test_a_code_hook_the_core_did_not_add_still_runs(bare) -> None:
    elf = build_asm(LOOP)
    m = bare(elf)
    at = _symbol(elf, "counted")
    seen: list[int] = []
    m.uc.hook_add(UC_HOOK_CODE, lambda uc, addr, size, _: seen.append(addr), None, at, at)
    r = m.run(max_insns=10_000)
    # The core's emulated mhartid (0 on hart 0) in every round, and the user's hook once
    # per round at its one address.
    assert (r.stop, r.exit_status) == (Stop.HALT, 1010)
    assert seen == [at] * 10


def test_a_block_hook_the_core_did_not_add_still_runs(bare) -> None:
    elf = build_asm(LOOP)
    plain = bare(elf).run(max_insns=10_000)
    m = bare(elf)
    loop = _symbol(elf, "counted") - 4
    starts: list[int] = []
    m.uc.hook_add(UC_HOOK_BLOCK, lambda uc, addr, size, _: starts.append(addr))
    r = m.run(max_insns=10_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 1010)
    # Rounds 2-10 enter the loop's block at the csrr (the first round reaches it from
    # the block before), and the core still counts every instruction.
    assert starts.count(loop) == 9
    assert r.instret == plain.instret
