"""Lab 6: the timer preempts user code, and every register survives the interrupt.
(That every register but a0 survives a system call is the base system's: the harness
checks it at every return to U in every test, harness/grade/user_registers.py.)"""

import itertools
import random

import pytest

from privlab.grade import KernelUnderTest


@pytest.mark.points(3)
def test_every_register_survives_timer_interrupts(privlab_kernel: KernelUnderTest,
                                                  privlab_rng: random.Random) -> None:
    run = privlab_kernel.run("lab_trap", "timer", privlab_kernel.token,
                             privlab_rng.randint(1, 10**9), 40000)
    run.expect_pass()
    ticks = len(run.trace.timer_interrupts_from_user())
    assert ticks >= 10, f"only {ticks} timer interrupts reached user code: is the timer armed?"


@pytest.mark.points(2)
def test_timer_preempts_a_process_that_never_yields(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.boot("lab_trap", "spin", privlab_kernel.token, 5)
    run.expect_pass(within=60_000_000)


@pytest.mark.points(2)
def test_two_cpu_bound_processes_interleave(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("compute", 400000, 2)
    tags = [line[0] for line in run.lines() if line[:2] in ("A ", "B ")]
    switches = sum(1 for a, b in itertools.pairwise(tags) if a != b)
    assert switches >= 3, f"progress lines did not interleave: {''.join(tags)}"
