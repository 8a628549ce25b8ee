"""Lab 5 hidden tests."""

import random

import pytest

from privlab.grade import KernelUnderTest
from privlab.grade.checks import backtrace_in, printed_backtrace


@pytest.mark.points(2)
def test_backtrace_on_the_boot_stack_from_exec_load(privlab_kernel: KernelUnderTest) -> None:
    """exec_load's first call comes from userinit at boot, on the boot stack."""
    run = privlab_kernel.boot("hello", privlab_kernel.token)
    expected = backtrace_in(run, "exec_load", 50_000_000)
    run.run_to_exit()
    assert printed_backtrace(run.output) == expected.addresses


@pytest.mark.points(2)
def test_backtrace_from_copyout_in_waitpid(privlab_kernel: KernelUnderTest,
                                           privlab_rng: random.Random) -> None:
    run = privlab_kernel.boot("usertests", "exit_status")
    expected = backtrace_in(run, privlab_rng.choice(("copyout", "waitpid")), 80_000_000)
    run.run_to_exit()
    assert printed_backtrace(run.output) == expected.addresses
