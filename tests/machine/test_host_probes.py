"""Host reads through the guest's page tables (debugger, inspectors, grader): they see
what the page tables say, whatever PMP and the TLB hold, and leave no TLB entry that
would let the guest skip a PMP check (harness/native/pmp.c, privlab_probe)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from machine.asm import SV39_MACROS, build_asm
from machine.test_watch_slots import PROGRAM
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.until import AtAddress

ALIAS = 0x40000000      # PROGRAM maps RAM at VA 0x80000000 and again 0x40000000 higher


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_a_host_read_of_a_page_the_guest_never_touched_through_that_address(
        bare: Callable[[Path], Machine], arch: str) -> None:
    # Stopped in S with paging on; the alias of `root` has never been accessed, so
    # the read fills a TLB entry for the host. (The fill used to be smaller than a page,
    # which Unicorn's uc_vmem_read takes for an unreadable page: UC_ERR_READ_PROT.)
    elf = build_asm(PROGRAM, arch)
    image = load_elf(elf)
    root, read_pte = image.symbol("root"), image.symbol("read_pte")
    assert root is not None and read_pte is not None
    m = bare(elf)
    r = m.run(max_insns=10_000, until=[AtAddress(read_pte)])
    assert r.stop is Stop.BREAKPOINT and r.pc == read_pte
    width = 8 if arch == "rv64" else 4
    entry = 24 if arch == "rv64" else 0xC00          # the alias's root entry
    expected = m.read_physical(root + entry, width)
    assert m.read_virtual(root + ALIAS + entry, width) == expected
    assert int.from_bytes(expected, "little") & 0xCF == 0xCF   # V R W X A D
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.HALT and r.status == 0, r


# Sv39 space A maps VA 0xC0000000 to `page`, then the leaf gets bit 63 (Svnapot's N,
# reserved here): the walk of that address fails, for the guest (a page fault,
# tests/conformance/vm_reserved_bits.S) and for the host alike, stopped in S.
RESERVED_LEAF = SV39_MACROS + r"""
    TWO_SPACES page
    la t0, leaf_a
    ld t1, 0(t0)
    li t2, 1
    slli t2, t2, 63
    or t1, t1, t2
    sd t1, 0(t0)
    OPEN_PMP
    ENTER_S_SV39 root_a, stop_here
stop_here:                        // in S, under space A (its code at VA = PA)
    j stop_here

    .data
    .balign 4096
page:
    .fill 2048, 4, 0
    TWO_SPACES_TABLES
"""


def test_a_host_translation_through_an_entry_with_reserved_bits_finds_nothing(
        bare: Callable[[Path], Machine]) -> None:
    elf = build_asm(RESERVED_LEAF, "rv64")
    stop_here = load_elf(elf).symbol("stop_here")
    assert stop_here is not None
    m = bare(elf)
    r = m.run(max_insns=10_000, until=[AtAddress(stop_here)])
    assert r.stop is Stop.BREAKPOINT
    assert m.memory.translate(0xC0000000) is None
    assert m.memory.translate(0x80000000) == 0x80000000   # the good gigapage
