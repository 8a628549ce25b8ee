"""Lab 14's hidden tests: the allocator on several harts with more processes than
harts (processes move between harts: frames freed on one hart serve another), and
memory running out again and again in small steps."""

from __future__ import annotations

import pytest

from privlab.grade import KernelUnderTest


@pytest.mark.points(2)
@pytest.mark.smp
@pytest.mark.requires("test_no_frame_is_lost_or_handed_out_twice")
def test_four_processes_on_three_harts_lose_no_frame(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_kalloc", "stress", privlab_kernel.token, 4, 4, 32)
    run.expect_pass()
    [before, after] = [c.ret for c in run.trace.syscalls("freemem")]
    assert before == after, f"{before} bytes free before, {after} after"


@pytest.mark.points(2)
@pytest.mark.smp
@pytest.mark.requires("test_every_hart_runs_out_of_frames_at_once_and_the_kernel_goes_on")
def test_memory_runs_out_in_small_steps_three_times(privlab_kernel: KernelUnderTest) -> None:
    """Heaps grown 8 pages at a time: more allocations near the end of memory, where
    every hart steals."""
    run = privlab_kernel.run("lab_kalloc", "exhaust", privlab_kernel.token, 3, 3, 8,
                             max_insns=400_000_000)
    run.expect_pass()
    assert run.output.count("children ran out of memory") == 3
