"""HTIF's tohost (the riscv-tests / Spike convention) without a memory hook.

A store of 1 to `tohost` passes (exit 0), another odd value v fails with exit code
v >> 1, an even nonzero value is a command privlab does not serve. The core sees the
word at every block entry, so the run ends at the block boundary after the store, and
the engines carry no UC_HOOK_MEM_READ/WRITE hook, which would send every load and
store through Unicorn's slow path (docs/unicorn.md#a-memory-hook-over-ram-slows-every-store).
"""

from __future__ import annotations

import ctypes

import pytest
import unicorn
from unicorn.unicorn_const import UC_HOOK_BLOCK, UC_HOOK_MEM_READ, UC_HOOK_MEM_WRITE

from machine.asm import build_asm
from privlab.machine import Stop
from privlab.native.library import load_library

ARCHES = ["rv64", "rv32"]
NEVER_RUN = 0x10   # an address no block starts at: a hook there is never called

TOHOST = """
    .data
    .align 12
    .globl tohost
tohost: .dword 0
"""


def storing(value: int, store: str = "sw") -> str:
    return f"""
    .globl body
body:
    la t0, tohost
    li t1, {value}
    {store} t1, 0(t0)
    .globl spin
spin:
    j spin
""" + TOHOST


@pytest.mark.parametrize("arch", ARCHES)
def test_one_passes_with_exit_status_zero_and_the_message_htif_pass(bare, arch: str) -> None:
    m = bare(build_asm(storing(1), arch))
    r = m.run(max_insns=10_000)
    assert (r.stop, r.exit_status, r.message, m.console.text()) == (Stop.HALT, 0, "HTIF: pass", "")


@pytest.mark.parametrize("arch", ARCHES)
def test_an_odd_value_fails_with_its_upper_bits_as_the_exit_status(bare, arch: str) -> None:
    m = bare(build_asm(storing((21 << 1) | 1), arch))
    r = m.run(max_insns=10_000)
    assert (r.stop, r.exit_status, r.message) == (Stop.HALT, 21, "HTIF: fail with code 21")


@pytest.mark.parametrize("arch", ARCHES)
def test_an_even_nonzero_value_is_an_unsupported_command_error(bare, arch: str) -> None:
    m = bare(build_asm(storing(42), arch))
    r = m.run(max_insns=10_000)
    assert (r.stop, r.message) == (Stop.ERROR, "HTIF: unsupported tohost command 0x2a")


@pytest.mark.parametrize(("value", "stop", "status", "message"), [
    ((1 << 33) | 1, Stop.HALT, 1 << 32, f"HTIF: fail with code {1 << 32}"),
    (0x8000_1000, Stop.ERROR, None, "HTIF: unsupported tohost command 0x80001000"),
])
def test_a_doubleword_store_on_rv64_is_read_whole(bare, value: int, stop: Stop,
                                                   status: int | None, message: str) -> None:
    # the syscall proxy's `tohost = (uintptr_t)magic_mem` is an sd of an even pointer
    m = bare(build_asm(storing(value, "sd"), "rv64"))
    r = m.run(max_insns=10_000)
    assert (r.stop, r.exit_status, r.message) == (stop, status, message)


@pytest.mark.parametrize("arch", ARCHES)
def test_the_run_ends_at_the_block_boundary_after_the_store(bare, arch: str) -> None:
    # la (2), li, sw retire; the jump at `spin` does not: the run ends where the stop a
    # write hook asked for took effect (measured with such a hook: the same pc, instret)
    m = bare(build_asm(storing(1), arch))
    while m.hart.pc != m.symbols["body"]:
        assert m.step().stop is Stop.STEP
    at = m.hart.state.instret
    r = m.run(max_insns=10_000)
    assert (r.stop, r.pc, r.instret) == (Stop.HALT, m.symbols["spin"], at + 4)


@pytest.mark.parametrize("arch", ARCHES)
def test_stepping_halts_on_the_step_that_stores(bare, arch: str) -> None:
    elf = build_asm(storing(1), arch)
    m = bare(elf)
    while m.hart.pc != m.symbols["body"]:
        assert m.step().stop is Stop.STEP
    steps = [m.step() for _ in range(3)]             # auipc, addi, li
    assert [s.stop for s in steps] == [Stop.STEP] * 3
    r = m.step()                                     # the store
    assert (r.stop, r.exit_status, r.pc) == (Stop.HALT, 0, m.symbols["spin"])


@pytest.mark.parametrize("arch", ARCHES)
def test_zero_in_tohost_changes_nothing(bare, arch: str) -> None:
    m = bare(build_asm(storing(0), arch))
    r = m.run(max_insns=5_000)
    assert r.stop is Stop.BUDGET


def test_an_elf_with_tohost_adds_no_memory_read_or_write_hook(bare, monkeypatch) -> None:
    added: list[int] = []
    real = unicorn.Uc.hook_add

    def recording(self, htype, *args, **kwargs):
        added.append(htype)
        return real(self, htype, *args, **kwargs)

    monkeypatch.setattr(unicorn.Uc, "hook_add", recording)
    m = bare(build_asm(storing(1), "rv64"), smp=2)
    assert m.symbols.get("tohost") is not None
    assert not [t for t in added if t & (UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE)]
    assert m.run(max_insns=100_000).exit_status == 0




def _self_counted_hook_calls() -> int:
    """Calls to the block hook from blocks that count themselves (dispatch.c), so far."""
    fn = load_library().dispatch_inline_count
    fn.restype = ctypes.c_uint64
    fn.argtypes = [ctypes.c_bool]
    return int(fn(True))


LOOP_THEN_PASS = """
    .globl body
body:
    li t0, 0
    li t1, 300000
1:  addi t0, t0, 1
    bne t0, t1, 1b
    .globl store
store:
    la t0, tohost
    li t1, 1
    sd t1, 0(t0)
    .globl spin
spin:
    j spin
""" + TOHOST


def test_an_elf_with_tohost_still_counts_its_blocks_in_translated_code(bare) -> None:
    """The tohost word is read by each block's own code (dispatch.c), not by a call to
    the hook at every block entry: 300,000 rounds of a loop make a handful of calls, as
    without tohost, and the store still ends the run at the block boundary after it."""
    m = bare(build_asm(LOOP_THEN_PASS, "rv64"))
    before = _self_counted_hook_calls()
    r = m.run(max_insns=10_000_000)
    assert (r.stop, r.exit_status, r.pc) == (Stop.HALT, 0, m.symbols["spin"])
    assert _self_counted_hook_calls() - before < 100
    # The same run with every block calling the hook (a second block hook makes Unicorn
    # call each through its helper): the store is seen at the same boundary.
    hooked = bare(build_asm(LOOP_THEN_PASS, "rv64"))
    hooked.uc.hook_add(UC_HOOK_BLOCK, lambda *_: None, begin=NEVER_RUN, end=NEVER_RUN)
    rh = hooked.run(max_insns=10_000_000)
    assert (rh.stop, rh.exit_status, rh.pc, rh.instret) == (r.stop, 0, r.pc, r.instret)
    assert r.instret > 2 * 300_000
