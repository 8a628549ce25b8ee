"""More hooked instructions than the core keeps code hooks for at once (hooks.c).

Unicorn walks every code hook for each instruction it translates, so the core drops
its hooks at HOOK_LIVE_MAX (3072) and plants them again as code runs again. Before,
a full hook map left every later CSR instruction to Unicorn, which read its own
copies: here the PMP address register the core keeps (Unicorn's stays zero).
"""

from __future__ import annotations

import pytest

from machine.asm import build_asm
from privlab.machine import Stop

READS = 5000   # distinct csrr instructions, past the 3072 hooks kept at once


def reads_pmpaddr0(times: int) -> str:
    return f"""
    li t0, 0x12345
    csrw pmpaddr0, t0
    li t2, 0
    .rept {times}
    csrr t1, pmpaddr0
    bne t1, t0, bad
    addi t2, t2, 1
    .endr
    li t3, {times}
    bne t2, t3, bad
    PASS
bad:
    FAIL 7
"""


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_every_one_of_5000_csr_reads_sees_the_cores_pmpaddr0(bare, arch: str) -> None:
    m = bare(build_asm(reads_pmpaddr0(READS), arch))
    r = m.run(max_insns=1_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), r.message


@pytest.mark.parametrize("arch", ["rv64"])
def test_the_reads_run_again_after_the_hooks_were_dropped(bare, arch: str) -> None:
    # The same 5000 reads, twice over: the second pass finds its hooks dropped and
    # its blocks decoded again.
    body = reads_pmpaddr0(READS).replace("    PASS\n", "    addi s1, s1, 1\n    li t4, 2\n"
                                         "    blt s1, t4, again\n    PASS\n")
    body = "    li s1, 0\nagain:\n" + body
    m = bare(build_asm(body, arch))
    r = m.run(max_insns=2_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), r.message
