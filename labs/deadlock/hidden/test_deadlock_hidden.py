"""Lab 13 hidden tests: a circle through a mutex and a semaphore, spinning mutexes, no
false positive after a refusal, and detection turned on while locks are held."""

import pytest

from privlab.grade import KernelUnderTest

DEAD = -0xDEAD


# Each requires the visible test of the same deadlock: a kernel that misses it gets one
# diagnosis there, and "not run" here, instead of the same failure twice.
@pytest.mark.points(2)
@pytest.mark.requires("test_relocking_a_held_mutex_is_a_deadlock")
def test_a_circle_through_a_mutex_and_a_semaphore(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_deadlock", "mixed", privlab_kernel.token)
    run.expect_pass()
    refused = [c for c in run.trace.syscalls() if c.ret == DEAD]
    assert len(refused) == 1 and refused[0].name in ("mutex_lock", "semaphore_down")


@pytest.mark.points(1)
@pytest.mark.requires("test_two_threads_locking_in_opposite_orders")
def test_spinning_mutexes_in_opposite_orders(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_deadlock", "ab_spin", privlab_kernel.token)
    run.expect_pass()
    assert len([c for c in run.trace.syscalls("mutex_lock") if c.ret == DEAD]) == 1


@pytest.mark.points(2)
@pytest.mark.requires("test_relocking_a_held_mutex_is_a_deadlock")
def test_no_false_positive_after_a_refusal(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_deadlock", "withdrawn", privlab_kernel.token)
    run.expect_pass()
    assert len([c for c in run.trace.syscalls() if c.ret == DEAD]) == 1


@pytest.mark.points(2)
def test_what_was_held_before_detection_was_on_counts(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_deadlock", "late", privlab_kernel.token)
    run.expect_pass()
    assert not [c for c in run.trace.syscalls() if c.ret == DEAD]
