"""One TLB per address space (harness/native/tlbbank.c): switching satp between two page
tables that map one virtual page to different pages sees each table's page, for loads and
for fetches; a table changed while its space was switched out is walked again when it
comes back; a satp write without sfence.vma already uses the new table (QEMU 7.2 flushes
its TLB on every satp write); and a table changed without any fence keeps the old
translation, as QEMU's TLB does. The same program runs on QEMU 7.2 with the same result."""

from __future__ import annotations

import pytest

from machine.asm import SV39_MACROS, build_asm
from privlab import qemu
from privlab.build import ARCHES
from privlab.machine import Stop, load_elf
from privlab.native.library import load_library

# Both tables map RAM at VA = PA through a gigapage (read, write, execute) and the 4 KiB
# page at VA 0xC0000000 through three levels: A's to page_a, B's to page_b (later
# page_c). Each page holds a word (0x11, 0x22, 0x33) and, at offset 0x100, a function
# returning 1, 2 or 3. The exit status has one bit per check (CHECK's two bits: the
# load, the call).
PROGRAM = r"""
    TWO_SPACES page_a
    OPEN_PMP
    ENTER_S_SV39 root_a, supervisor
supervisor:
    li s0, 0xC0000000
    li s1, 0
    SATP s2, root_a
    SATP s3, root_b
    sfence.vma zero, zero
    CHECK 0x11, 1, 0, 1
    csrw satp, s3
    sfence.vma zero, zero
    CHECK 0x22, 2, 2, 3                 // B's page, not A's cached one
    csrw satp, s2
    sfence.vma zero, zero
    CHECK 0x11, 1, 4, 5                 // A's again
    la t0, leaf_b                       // while A is in use: B's page becomes page_c
    la t1, page_a + 2 * 4096
    LEAF t0, t1
    csrw satp, s3
    sfence.vma zero, zero
    CHECK 0x33, 3, 6, 7                 // B walked again, not B's old TLB
    csrw satp, s2                       // no sfence.vma
    CHECK 0x11, 1, 8, 9
    la t0, leaf_a                       // A's page becomes page_b, with no fence
    la t1, page_a + 4096
    LEAF t0, t1
    lw t0, 0(s0)
    li t1, 0x11                         // the TLB still has page_a
    bne t0, t1, 1f
    ori s1, s1, 1 << 10
1:  ecall                               // to M, which powers off with the result
    .align 2
trap:
    slli s1, s1, 16
    FAIL_REG s1
    .balign 4096
page_a:                                 // then page_b and page_c, a page apart
    VALUE_PAGE 0x11, 1
    VALUE_PAGE 0x22, 2
    VALUE_PAGE 0x33, 3
    TWO_SPACES_TABLES
"""

MACROS = SV39_MACROS + r"""
.macro CHECK word, value, load_bit, call_bit
    lw t0, 0(s0)
    li t1, \word
    bne t0, t1, 1f
    ori s1, s1, 1 << \load_bit
1:  addi t2, s0, 0x100
    jalr t2
    li t1, \value
    bne a0, t1, 1f
    ori s1, s1, 1 << \call_bit
1:
.endm
"""

ALL_CHECKS = (1 << 11) - 1
ELIDED, RESTORED = 1, 2   # tlbbank_count's arguments (hart.h)


def _counts() -> tuple[int, int]:
    lib = load_library()
    return int(lib.tlbbank_count(ELIDED)), int(lib.tlbbank_count(RESTORED))


def test_each_address_space_sees_its_own_tables(bare) -> None:
    m = bare(build_asm(MACROS + PROGRAM))
    before = _counts()
    r = m.run(max_insns=100_000)
    after = _counts()
    assert (r.stop, r.exit_status) == (Stop.HALT, ALL_CHECKS), \
        f"checks passed: {r.exit_status:#x} of {ALL_CHECKS:#x}"
    # The first sfence.vma after a switch back to A found A's tables unchanged: its TLB
    # came back whole and that fence flushed nothing.
    assert after[0] > before[0] and after[1] > before[1]


@pytest.mark.skipif(qemu.qemu_binary(ARCHES["rv64"]) is None, reason="QEMU 7.2 not installed")
def test_qemu_sees_the_same_translations() -> None:
    result = qemu.run_qemu(build_asm(MACROS + PROGRAM), ARCHES["rv64"], timeout_s=30)
    assert result.exit_status == ALL_CHECKS & 0xFF, result.stderr


# S-mode writes to satp that Unicorn keeps or ignores: a mode QEMU 5.0's RV64 does not
# accept (5) leaves satp as it was; then satp = 0 (bare) is taken. Each is followed by
# an ecall, whose trap record carries the satp the core believes is current.
SATP_WRITES = r"""
    OPEN_PMP
    ENTER_S_SV39 root, supervisor
supervisor:
    li t0, (5 << 60) | 0x123
    csrw satp, t0
    ecall
    csrw satp, zero
    ecall
    .align 2
trap:
    NEXT_MEPC
    csrr t2, satp                     // bare after the second write: power off
    beqz t2, 1f
    mret
1:  li t6, PLATFORM_FINISHER_BASE
    li t5, FINISHER_PASS
    sw t5, 0(t6)
99: j 99b
    .data
    .balign 4096
root:
    .dword 0, 0
    .dword ((0x80000000 >> 12) << 10) | 0xCF   // VA 0x80000000, 1 GiB: V R W X A D
    .fill 509, 8, 0
"""


def test_the_core_follows_satp_through_writes_unicorn_ignores(bare) -> None:
    elf = build_asm(SATP_WRITES)
    m = bare(elf)
    r = m.run(max_insns=10_000)
    assert r.stop is Stop.HALT, m.console.text()
    root = load_elf(elf).symbols["root"]
    sv39 = (8 << 60) | (root >> 12)
    assert [(e.code, e.satp) for e in m.events.traps()] == [(9, sv39), (9, 0)]
