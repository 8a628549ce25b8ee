"""Blocks count their own instructions in translated code (harness/native/dispatch.c,
docs/unicorn.md#costs): a block entry with nothing due adds the block's count to
instret without calling the core's block hook, and a block entry with something due
(a deadline, a stop, HTIF, a trigger pass) calls it as before. The points where time
is read and interrupts are taken do not move: a machine whose every block calls the
hook (a second block hook makes Unicorn call each through its helper) gives the same
instret at every trap and at the end. The next block after a jalr is found by the
core's lookup (dispatch.c core_lookup_tb_ptr), with the CPU's flags as Unicorn's.
"""

from __future__ import annotations

import ctypes
import json
from collections.abc import Callable

from conformance.programs import build_program
from unicorn import UC_HOOK_BLOCK

from machine.asm import build_asm
from privlab.boot import user_boot
from privlab.build.images import build_images
from privlab.devices import Console
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_system
from privlab.native.library import load_library

NEVER_RUN = 0x10   # an address no block starts at: the extra hook is never called


def inline_counts() -> tuple[int, int]:
    """(blocks given self-counting code, calls to the hook from such code) so far."""
    fn = load_library().dispatch_inline_count
    fn.restype = ctypes.c_uint64
    fn.argtypes = [ctypes.c_bool]
    return int(fn(False)), int(fn(True))


def hook_every_block(m: Machine) -> None:
    """With two block hooks Unicorn plants its helper call in every block, which calls
    the core's hook (dispatch.c core_tracecode hands the list to Unicorn's walk): the
    path every block took before blocks counted themselves."""
    m.uc.hook_add(UC_HOOK_BLOCK, lambda *_: None, begin=NEVER_RUN, end=NEVER_RUN)


def events_of(m: Machine) -> list[str]:
    return [json.dumps(e.to_json()) for e in m.events]


# 300,000 rounds of a two-instruction block, then the finisher.
LOOP = """
    li t0, 0
    li t1, 300000
1:  addi t0, t0, 1
    bne t0, t1, 1b
    PASS
"""


def test_a_loop_counts_itself_without_calling_the_block_hook(bare: Callable[..., Machine]) -> None:
    elf = build_asm(LOOP)
    emitted, slow = inline_counts()
    m = bare(elf)
    r = m.run(max_insns=10_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    now = inline_counts()
    assert now[0] > emitted                       # the loop's block counts itself
    assert now[1] - slow < 100                    # 300,000 entries, a few calls at most

    hooked = bare(elf)
    hook_every_block(hooked)
    rh = hooked.run(max_insns=10_000_000)
    assert (rh.stop, rh.exit_status) == (Stop.HALT, 0)
    assert inline_counts()[0] == now[0]           # no block of it counted itself
    assert r.instret == rh.instret > 600_000


def test_timer_interrupts_are_taken_where_the_block_hook_takes_them(
        bare: Callable[..., Machine]) -> None:
    elf = build_program("irq_clint", "rv64")
    runs = []
    for every_block in (False, True):
        m = bare(elf, icount_shift=0)
        if every_block:
            hook_every_block(m)
        emitted = inline_counts()[0]
        r = m.run(max_insns=50_000_000)
        assert (r.stop, r.exit_status) == (Stop.HALT, 0)
        assert (inline_counts()[0] > emitted) == (not every_block)
        runs.append((r.instret, events_of(m)))
    assert runs[0] == runs[1]
    assert any('"m_timer"' in e for e in runs[0][1])


def kernel_trace(every_block: bool, prog: str, *args: str) -> tuple[int, str, list[str]]:
    im = build_images("rv64", listings=False)
    ub = user_boot(im.users, prog, args)
    m = Machine(64, console=Console(), icount_shift=0)
    boot_system(m, load_elf(im.firmware), load_elf(im.kernel), ub.initrd, ub.bootargs)
    if every_block:
        hook_every_block(m)
    r = m.run(max_insns=2_000_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), r.message
    text, events = m.console.text(), events_of(m)
    m.close()
    return r.instret, text, events


def test_a_preempted_kernel_forking_and_execing_gives_the_block_hooks_trace() -> None:
    # Timer preemption at 1 ns an instruction, and exec replacing decoded blocks (so
    # slots that named them are checked again: icount.c retire_l0).
    job = ("usertests", "exec", "waitpid", "fork_copies_memory")
    slow = inline_counts()[1]
    inline = kernel_trace(False, *job)
    assert inline_counts()[1] - slow < inline[0] // 20   # most entries counted inline
    assert inline == kernel_trace(True, *job)
    assert any('"s_timer"' in e or '"m_timer"' in e for e in inline[2])



# 70,000 one-instruction blocks, run twice: more blocks than the ring has slots
# (dispatch.c INL_SLOTS, 65,536), so the first blocks' slots go to later ones and those
# blocks are translated again when they run the second time.
MANY_BLOCKS = """
    li s2, 2
1:  .rept 70000
    j 2f
2:
    .endr
    addi s2, s2, -1
    bnez s2, 1b
    PASS
"""


def test_blocks_whose_slots_went_to_newer_blocks_count_as_before(
        bare: Callable[..., Machine]) -> None:
    elf = build_asm(MANY_BLOCKS)
    results = []
    for every_block in (False, True):
        m = bare(elf)
        if every_block:
            hook_every_block(m)
        emitted = inline_counts()[0]
        r = m.run(max_insns=1_000_000)
        assert (r.stop, r.exit_status) == (Stop.HALT, 0)
        if not every_block:
            # Each block translated once, and the first ones again for their new slots.
            assert inline_counts()[0] - emitted > 70_000 * 2 - 65_536
        results.append(r.instret)
    assert results[0] == results[1] > 140_000


def lookup_hits() -> int:
    fn = load_library().dispatch_lookup_hits
    fn.restype = ctypes.c_uint64
    fn.argtypes = []
    return int(fn())


# g is called through jalr 1,000 times, each return another jalr: the next block is
# found by the core's lookup. Then f, which moves an FP register, is called with FS on,
# and again after FS is turned off: the block translated with FS on must not be found
# for FS off, so the second call raises an illegal instruction (the trap handler powers
# off with mcause, 2).
JALR_LOOP = """
    la s0, g
    li s1, 1000
    li s2, 0
1:  jalr s0
    add s2, s2, a0
    addi s1, s1, -1
    bnez s1, 1b
    li t0, 3000
    bne s2, t0, 2f
    li t0, 0x6000                 // mstatus.FS
    csrs mstatus, t0
    la s0, f
    jalr s0
    csrc mstatus, t0
    jalr s0
    FAIL 4
2:  FAIL 3
g:  li a0, 3
    ret
f:  .word 0xf2000053             // fmv.d.x f0, zero
    ret
"""


def test_the_next_block_after_a_jalr_is_found_by_the_core_with_the_cpus_flags(
        bare: Callable[..., Machine]) -> None:
    before = lookup_hits()
    m = bare(build_asm(JALR_LOOP))
    r = m.run(max_insns=1_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 2)   # illegal instruction in f
    assert lookup_hits() - before >= 1_990             # g's calls and returns (all but the first)
