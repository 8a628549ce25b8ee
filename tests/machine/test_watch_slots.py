"""The core's debugger watch slots (harness/native/trigger.c), under the page tables.

Through translation Unicorn hands the PMP check only the page of an access, so the core
refuses every access to a watched page and decides from the instruction's own address.
A page-table walk's reads of a watched entry are not accesses: they never stop the
hart, while the program's own load of the same entry does, before it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from machine.asm import build_asm
from privlab.machine import DataAccess, Machine, Stop, load_elf

Bare = Callable[[Path], Machine]

# An S-mode program with two superpage mappings of RAM (VA 0x80000000, and its alias
# at 0xc0000000) and one of the finisher's region at VA 0. It loads `word` through the
# alias twice, with an sfence.vma between, so the walk reads the alias's entry each
# time; then it loads that entry itself (at `read_pte`). `word` sits at the same page
# offset as the entry, so a walk's read taken for the program's would match too.
PROGRAM = """
#if __riscv_xlen == 64
#define LREG ld
#define SREG sd
#define ENTRY_RAM 16            /* Sv39: VPN[2] of 0x80000000 is 2, 8-byte entries */
#define ENTRY_ALIAS 24          /* 0xc0000000 */
#define SATP_MODE (8 << 60)
#else
#define LREG lw
#define SREG sw
#define ENTRY_RAM 0x800         /* Sv32: VPN[1] of 0x80000000 is 0x200, 4-byte entries */
#define ENTRY_ALIAS 0xc00       /* 0xc0000000 */
#define SATP_MODE (1 << 31)
#endif
#define LEAF_RWX 0xcf           /* V R W X A D */
    OPEN_PMP
    la t0, root
    li t1, ((0x80000000 >> 12) << 10) | LEAF_RWX
    li t2, ENTRY_RAM
    add t2, t0, t2
    SREG t1, 0(t2)
    li t2, ENTRY_ALIAS
    add t2, t0, t2
    SREG t1, 0(t2)
    li t1, LEAF_RWX             /* VA 0 -> PA 0: the finisher, for PASS */
    SREG t1, 0(t0)
    srli t0, t0, 12
    li t1, SATP_MODE
    or t0, t0, t1
    csrw satp, t0
    sfence.vma
    la t0, s_code
    csrw mepc, t0
    li t0, 1 << 11              /* mstatus.MPP = S */
    csrw mstatus, t0
    mret
s_code:
    la t0, word
    li t1, 0x40000000
    add t2, t0, t1
    LREG a0, 0(t2)
    sfence.vma
    LREG a1, 0(t2)
    la t3, root
    li t5, ENTRY_ALIAS
    add t3, t3, t5
read_pte:
    LREG a2, 0(t3)
    li t4, 42
    bne a0, t4, 1f
    bne a1, t4, 1f
    PASS
1:  FAIL 1
    .data
    .balign 4096
root:
    .space 4096
word_page:
    .space ENTRY_ALIAS
word:
    .word 42
    .word 0
"""


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_walks_of_a_watched_entry_do_not_stop_the_program_read_does(
        bare: Bare, arch: str) -> None:
    elf = build_asm(PROGRAM, arch)
    m = bare(elf)
    entry = _symbol(elf, "root") + (24 if arch == "rv64" else 0xC00)
    width = 8 if arch == "rv64" else 4
    m.hart.set_watch(0, entry, width, read=True, write=False)
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.WATCH, r
    assert r.pc == _symbol(elf, "read_pte")
    assert r.access == DataAccess(entry, write=False)
    stopped_at = r.instret
    m.hart.skip_watch_once(r.pc)
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.HALT and r.status == 0, r
    assert r.instret > stopped_at


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_a_write_watch_ignores_loads_and_a_cleared_slot_nothing_stops(
        bare: Bare, arch: str) -> None:
    elf = build_asm(PROGRAM, arch)
    m = bare(elf)
    entry = _symbol(elf, "root") + (24 if arch == "rv64" else 0xC00)
    m.hart.set_watch(0, entry, 4, read=False, write=True)
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.WATCH and r.access == DataAccess(entry, write=True)
    insn = int.from_bytes(m.read_physical(r.pc, 4), "little")
    assert insn & 0x7F == 0x23          # the SREG that fills the entry, not yet run
    assert int.from_bytes(m.read_physical(entry, 4), "little") == 0
    m.hart.set_watch(0, 0, 0, read=False, write=False)
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.HALT and r.status == 0, r


def _symbol(elf: Path, name: str) -> int:
    addr = load_elf(elf).symbol(name)
    assert addr is not None, name
    return addr


# A spinlock taken and released with amoswap.w next to a watched counter, as in xv6's
# acquire/release: the AMOs on the lock's word run (the hart once looped on them, the
# retried AMO's store refused after its load had used the one pass), and the store to
# the counter right after them, in the same block, still stops the hart before it.
# (The same program with its data on its code's page: SHARED_PAGE.)
SPINLOCK = """
    la s0, lock
    li t1, 1
1:  amoswap.w t2, t1, (s0)      /* acquire */
    bnez t2, 1b
    lw t3, 4(s0)
    addi t3, t3, 1
    amoswap.w zero, zero, (s0)  /* release */
bump:
    sw t3, 4(s0)                /* the watched counter */
    lw t4, 0(s0)
    bnez t4, 2f
    PASS
2:  FAIL 2
    .data
    .balign 4096                /* a page of its own: only data accesses fill it */
lock:
    .word 0
counter:
    .word 41
"""


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_amos_next_to_a_watched_word_run_and_the_store_after_them_stops(
        bare: Bare, arch: str) -> None:
    elf = build_asm(SPINLOCK, arch)
    m = bare(elf)
    counter = _symbol(elf, "counter")
    m.hart.set_watch(0, counter, 4, read=False, write=True)
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.WATCH and r.pc == _symbol(elf, "bump"), r
    assert r.access == DataAccess(counter, write=True)
    assert int.from_bytes(m.read_physical(_symbol(elf, "lock"), 4), "little") == 0
    m.hart.skip_watch_once(r.pc)
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.HALT and r.status == 0, r
    assert int.from_bytes(m.read_physical(counter, 4), "little") == 42


# The counter on the page the code runs from (M without paging): the code fetches'
# translation once served that page's stores too, unchecked, and no watch stopped.
SHARED_PAGE = SPINLOCK.replace(".balign 4096", ".balign 8")


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_a_watch_on_the_code_page_stops_its_store(bare: Bare, arch: str) -> None:
    elf = build_asm(SHARED_PAGE, arch)
    m = bare(elf)
    counter = _symbol(elf, "counter")
    assert counter >> 12 == _symbol(elf, "bump") >> 12
    m.hart.set_watch(0, counter, 4, read=False, write=True)
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.WATCH and r.pc == _symbol(elf, "bump"), r
