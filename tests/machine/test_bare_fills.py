"""Without translation (M, or S with satp bare) a load's or store's TLB fill leaves
execute out (harness/native/pmp.c `untranslated`): Unicorn keeps every store to an
entry that allows execution on its slow path (docs/unicorn.md), which made a kernel
that fills memory before paging (xv6's kinit) several times slower there. Code written
into such a page through those entries, then run, then rewritten and run again, must
still be seen each time: the fetch fills an entry of its own, and a store after it
reaches Unicorn's self-modifying-code check. The virtual TLB (harness/native/vtlb.c,
PRIVLAB_VTLB=1 in portable mode) leaves execute out of the same fills and counts them
in the same counter; a child process runs the programs that way, whatever the tests'
own mode."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from machine.asm import build_asm
from privlab.machine import Stop
from privlab.native.library import load_library

ADDI_A0_1 = 0x00100513          # addi a0, zero, 1
ADDI_A0_2 = 0x00200513          # addi a0, zero, 2
RET = 0x00008067                # jalr zero, 0(ra)

# `buf` is a page of its own that nothing has fetched from: its first fill is a store's.
# The body writes `addi a0, zero, 1; ret` there, runs it, rewrites the addi to return 2
# and runs it again; the result, 10 * first + second, is the exit status.
BODY = f"""
    la s2, buf
    li t1, {ADDI_A0_1}
    sw t1, 0(s2)
    li t1, {RET}
    sw t1, 4(s2)
    fence.i
    jalr s2
    mv s1, a0
    li t1, {ADDI_A0_2}
    sw t1, 0(s2)
    fence.i
    jalr s2
    li t0, 10
    mul s1, s1, t0
    add s1, s1, a0
    slli s1, s1, 16
"""
TAIL = """
    .data
    .balign 4096
buf:
    .fill 1024, 4, 0
    .balign 4096
"""

PROGRAMS = {
    "M": BODY + "    FAIL_REG s1\n" + TAIL,
    # S with satp bare (its reset value); ecall to M, whose default trap ends the run
    # with the code in s1
    "S-bare": """
    OPEN_PMP
    la t0, trap
    csrw mtvec, t0
    ENTER 1, supervisor
supervisor:
""" + BODY + """
    ecall
    .align 2
trap:
    FAIL_REG s1
""" + TAIL,
}


# Runs the ELF in argv[1] on a bare machine and prints whether the virtual TLB is on,
# the stop, the exit status and how many fills left execute out.
CHILD = """
import sys
from privlab.machine import Machine, load_elf
from privlab.machine.assemble import boot_bare
from privlab.native.library import load_library

lib = load_library()
image = load_elf(sys.argv[1])
m = Machine(image.xlen)
boot_bare(m, image)
before = lib.pmp_noexec_fills()
r = m.run(max_insns=100_000)
print("vtlb" if lib.hart_vtlb_on() else "plt", r.stop.name, r.exit_status,
      lib.pmp_noexec_fills() - before)
"""


def noexec_fills() -> int:
    return int(load_library().pmp_noexec_fills())


@pytest.mark.parametrize("where", sorted(PROGRAMS))
def test_code_written_through_store_fills_runs_and_is_rewritten(bare, where: str) -> None:
    m = bare(build_asm(PROGRAMS[where]))
    before = noexec_fills()
    result = m.run(max_insns=100_000)
    assert result.stop is Stop.HALT
    assert result.exit_status == 12         # the first call returned 1, the second 2
    assert noexec_fills() > before          # buf's (and the stack's) fills left X out


@pytest.mark.parametrize("where", sorted(PROGRAMS))
def test_the_virtual_tlb_leaves_execute_out_of_the_same_fills(where: str) -> None:
    env = {**os.environ, "PRIVLAB_PORTABLE": "1", "PRIVLAB_VTLB": "1"}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(build_asm(PROGRAMS[where]))],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    mode, stop, status, fills = proc.stdout.split()
    assert (mode, stop, status) == ("vtlb", "HALT", "12")
    assert int(fills) > 0
