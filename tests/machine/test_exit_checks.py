"""Unicorn follows every load and store in translated code with a stop check that also
makes the code store and reload the guest registers around it; for an engine with a
core, harness/native/exitcheck.c leaves those checks out (docs/unicorn.md#costs). What
must still hold:

- a store to a physical address with nothing behind it is a store access fault at the
  store itself, and the instructions after it in the same block do not run (Unicorn
  used to stop there through the check; pmp.c now refuses the store before its fill);
- a code hook that redirects the hart still leaves the block at once (its check stays);
- an engine without a core keeps every check: Unicorn's own unmapped-store stop lands
  right after the store.
"""

from __future__ import annotations

import pytest
from unicorn import UC_ARCH_RISCV, UC_MODE_RISCV64, Uc, UcError
from unicorn.riscv_const import UC_RISCV_REG_A1, UC_RISCV_REG_PC, UC_RISCV_REG_T0

from machine.asm import build_asm
from privlab.abi.csr import Priv
from privlab.build.toolchain import ARCHES
from privlab.machine import Stop
from privlab.native.library import load_library

UNMAPPED = 0x8800_0000   # the first byte past 128 MiB of RAM: no device there either


def checks(emitted: bool) -> int:
    return int(load_library().exitcheck_count(emitted))


@pytest.mark.parametrize("arch", ARCHES)
def test_a_store_to_nothing_faults_before_the_rest_of_its_block_runs(bare, arch: str) -> None:
    # s1 counts the instructions after the store that ran; the trap handler reports
    # mcause, then s1, in the exit status (mcause | s1 << 4).
    m = bare(build_asm(f"""
        li t0, {UNMAPPED:#x}
        li s1, 0
        j store                     // the store starts a block of its own
    store:
        sw zero, 12(t0)
        addi s1, s1, 1
        addi s1, s1, 1
        addi s1, s1, 1
        FAIL 1
        .align 2
    trap:
        csrr t1, mcause
        slli s1, s1, 4
        or t1, t1, s1
        slli t1, t1, 16
        FAIL_REG t1
    """, arch))
    before = checks(False)
    r = m.run(max_insns=1000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 7)         # store access fault, s1 = 0
    (trap,) = m.events.traps()
    assert (trap.code, trap.tval, trap.priv_from, trap.priv_to) == \
        (7, UNMAPPED + 12, Priv.M, Priv.M)
    assert trap.epc == m.symbols["store"]
    assert checks(False) > before                            # the store's check left out


@pytest.mark.parametrize("arch", ARCHES)
def test_loads_and_stores_around_emulated_csrs_keep_their_values(bare, arch: str) -> None:
    # A loop of loads, stores and CSR accesses the core emulates (mscratch through a code
    # hook): every iteration's values must come out as written.
    m = bare(build_asm("""
        la s2, buf
        li s3, 0
        li s4, 100
    1:  sw s3, 0(s2)
        csrw mscratch, s3
        lw t1, 0(s2)
        csrr t2, mscratch
        bne t1, t2, 2f
        bne t1, s3, 2f
        addi s3, s3, 1
        blt s3, s4, 1b
        PASS
    2:  FAIL 3
        .data
        .balign 4
    buf: .word 0
    """, arch))
    r = m.run(max_insns=100_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)


def test_an_engine_without_a_core_keeps_unicorns_checks(bare) -> None:
    bare(build_asm("PASS\n"))          # a core in this process: exitcheck.c installed
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.mem_map(0x1000, 0x1000)
    # sw zero, 0(t0); addi a1, a1, 1; addi a1, a1, 1; jal zero, 0 (one block)
    code = bytes.fromhex("23a00200" "93851500" "93851500" "6f000000")
    uc.mem_write(0x1000, code)
    uc.reg_write(UC_RISCV_REG_T0, 0x10_0000)     # nothing mapped there
    before = checks(True)
    with pytest.raises(UcError):
        uc.emu_start(0x1000, 0x2000, count=0)
    assert uc.reg_read(UC_RISCV_REG_A1) == 0     # stopped right after the store
    assert uc.reg_read(UC_RISCV_REG_PC) == 0x1000   # at the store, as Unicorn leaves it
    assert checks(True) > before                 # its store's check was emitted
