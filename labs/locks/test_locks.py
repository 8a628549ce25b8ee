"""Lab 14: locks: the frame allocator on several harts (kernel/kalloc.c).

Every test runs on the lab's 3 harts under each of its seeds (lab.toml `smp`, `seeds`):
the interleaving differs from seed to seed and is the same every time for one seed.
"""

from __future__ import annotations

import re

import pytest

from privlab.abi.csr import Exc
from privlab.grade import KernelUnderTest

PROCS, ROUNDS, PAGES = 3, 10, 64


@pytest.mark.points(5)
@pytest.mark.smp
def test_no_frame_is_lost_or_handed_out_twice(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_kalloc", "stress", privlab_kernel.token, PROCS, ROUNDS,
                             PAGES)
    run.expect_pass()
    [before, after] = [c.ret for c in run.trace.syscalls("freemem")]
    assert before == after, f"{before} bytes free before, {after} after"
    # Every child's page faults were resolved, none killed it: each round's sbrk grew
    # the heap and gave it back.
    calls = run.trace.syscalls("sbrk")
    assert len(calls) == 2 * PROCS * ROUNDS and all(c.ret not in (None, -1) for c in calls)
    # ... and its pages came through page faults (lab 11's lazy heap), which is where
    # harts allocate without the kernel lock: an eager sbrk allocates under it.
    faults = [t for code in (Exc.LOAD_PAGE_FAULT, Exc.STORE_PAGE_FAULT)
              for t in run.trace.traps(code=code, interrupt=False)]
    assert len(faults) >= PROCS * ROUNDS * PAGES, \
        f"{len(faults)} page faults for {PROCS * ROUNDS * PAGES} heap pages touched: " \
        "this lab needs lab 11's lazy heap (kernel/lazy.c)"


@pytest.mark.points(5)
@pytest.mark.smp
@pytest.mark.requires("test_no_frame_is_lost_or_handed_out_twice")
def test_harts_rarely_wait_for_a_kmem_lock(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_kalloc", "contend", privlab_kernel.token, PROCS, ROUNDS,
                             PAGES)
    run.expect_pass()
    [call] = run.trace.syscalls("lockstat")
    assert call.ret is not None and call.ret >= 1, "no lock whose name begins with kmem"
    m = re.search(r"^kmem: (\d+) locks, (\d+) acquires, (\d+) spins$", run.output,
                  re.MULTILINE)
    assert m is not None, "lab_kalloc printed no lock statistics"
    locks, acquires, spins = map(int, m.groups())
    assert locks == call.ret
    # At least one acquisition per frame the children touched and freed (and more).
    assert acquires >= 2 * PROCS * ROUNDS * PAGES, \
        f"only {acquires} kmem acquisitions for {PROCS * ROUNDS * PAGES} pages touched"
    assert spins * 20 < acquires, \
        f"harts found a kmem lock taken {spins} times in {acquires} acquisitions"


@pytest.mark.points(3)
@pytest.mark.smp
# Stealing is the per-hart allocator's: a handout's one kmem lock passes this trivially.
@pytest.mark.requires("test_harts_rarely_wait_for_a_kmem_lock")
def test_every_hart_runs_out_of_frames_at_once_and_the_kernel_goes_on(
        privlab_kernel: KernelUnderTest) -> None:
    """Three processes grow their heaps until memory runs out, twice: every hart's own
    list and share run dry and every hart takes frames from the others', several at
    once, whatever the seed. Each process ends (sbrk fails, or the kernel kills it for
    want of a frame) and all the memory comes back. A kalloc that holds its own kmem
    lock while it takes another hart's deadlocks here under every seed."""
    run = privlab_kernel.run("lab_kalloc", "exhaust", privlab_kernel.token, PROCS, 2, 64,
                             max_insns=300_000_000)
    run.expect_pass()
    assert run.output.count("children ran out of memory") == 2
