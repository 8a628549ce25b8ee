"""Lab 5: backtrace() walks the frame-pointer chain of the current kernel stack.

The grader computes the chain itself from the stack in guest memory, and calls the
kernel's backtrace() from places chosen at random, so the output cannot be memorised.
"""

import random

import pytest

from privlab.grade import KernelUnderTest
from privlab.grade.checks import FrameWalk, backtrace_at_entry, backtrace_in, printed_backtrace


def _check(printed: list[int] | None, expected: FrameWalk) -> None:
    assert printed is not None, "no 'backtrace:' line was printed"
    want = [hex(a) for a in expected.addresses]
    got = [hex(a) for a in printed]
    assert got == want, f"expected the return addresses {want}, got {got}"


@pytest.mark.points(3)
def test_boot_backtrace_prints_the_return_address_into_main(
        privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.boot("hello", privlab_kernel.token, flags=("backtrace",))
    expected = backtrace_at_entry(run, "backtrace", 50_000_000)
    run.run_to_exit()
    _check(printed_backtrace(run.output), expected)


@pytest.mark.points(4)
def test_backtrace_inside_a_system_call_lists_every_caller(privlab_kernel: KernelUnderTest,
                                                         privlab_rng: random.Random) -> None:
    """backtrace() called in place of a function deep in the write path."""
    function = privlab_rng.choice(("sys_write", "copyin", "console_write"))
    run = privlab_kernel.boot("hello", privlab_kernel.token)
    expected = backtrace_in(run, function, 50_000_000)
    run.run_to_exit()
    _check(printed_backtrace(run.output), expected)
    run.expect_output(rf"^argv\[1\] = {privlab_kernel.token}$")  # and the write still happened


@pytest.mark.points(3)
def test_backtrace_stops_at_the_top_of_the_process_stack(privlab_kernel: KernelUnderTest,
                                                         privlab_rng: random.Random) -> None:
    """From fork's page copying: the walk must end below usertrap's frame."""
    function = privlab_rng.choice(("uvmcopy", "fork"))
    run = privlab_kernel.boot("lab_taskinfo", "fork", privlab_kernel.token, 2)
    expected = backtrace_in(run, function, 50_000_000)
    run.expect_pass()
    _check(printed_backtrace(run.output), expected)
