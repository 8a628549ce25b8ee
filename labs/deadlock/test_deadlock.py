"""Lab 13: deadlock detection (enable_deadlock_detect 469 and the banker's safety
check in kernel/deadlock.c)."""

import pytest

from privlab.grade import KernelRun, KernelUnderTest, SyscallRecord

DEAD = -0xDEAD


def refused(run: KernelRun, name: str) -> list[SyscallRecord]:
    return [c for c in run.trace.syscalls(name) if c.ret == DEAD]


def returned_at_once(run: KernelRun, call: SyscallRecord) -> bool:
    """No other system call began while `call` was in the kernel: it did not wait."""
    assert call.exit_seq is not None
    return not any(call.entry_seq < c.entry_seq < call.exit_seq for c in run.trace.syscalls())


@pytest.mark.points(2)
def test_relocking_a_held_mutex_is_a_deadlock(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_deadlock", "self", privlab_kernel.token)
    run.expect_pass()
    assert [c.ret for c in run.trace.syscalls("enable_deadlock_detect")] == [-1, -1, 0, 0]
    assert [c.ret for c in run.trace.syscalls("mutex_lock")] == \
        [0, -1, 0, DEAD, 0, 0, DEAD, 0, -1]
    assert all(returned_at_once(run, c) for c in refused(run, "mutex_lock"))


@pytest.mark.points(3)
@pytest.mark.requires("test_relocking_a_held_mutex_is_a_deadlock")
def test_two_threads_locking_in_opposite_orders(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_deadlock", "ab", privlab_kernel.token)
    run.expect_pass()
    locks = run.trace.syscalls("mutex_lock")
    [no] = refused(run, "mutex_lock")
    assert returned_at_once(run, no), "the refused mutex_lock waited before -0xDEAD"
    # Two first locks, then the two second requests: the refused one is the later,
    # after the other thread had asked for the other mutex.
    assert locks.index(no) == 3 and locks[2].args[0] != no.args[0]


@pytest.mark.points(3)
@pytest.mark.requires("test_relocking_a_held_mutex_is_a_deadlock")
def test_a_circle_of_semaphore_waits_is_refused_once(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_deadlock", "sem_cycle", privlab_kernel.token)
    run.expect_pass()
    # Three in the circle, one more for each semaphore at the end (main alone).
    nos = refused(run, "semaphore_down")
    assert len(nos) == 1 + 4
    assert all(returned_at_once(run, c) for c in nos)


@pytest.mark.points(3)
@pytest.mark.requires("test_relocking_a_held_mutex_is_a_deadlock")
def test_a_safe_state_with_every_semaphore_empty_is_not_refused(
        privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_deadlock", "sem_safe", privlab_kernel.token)
    run.expect_pass()
    # Only main's four final checks, one per semaphore, are refused.
    assert len(refused(run, "semaphore_down")) == 4


@pytest.mark.points(2)
@pytest.mark.requires("test_relocking_a_held_mutex_is_a_deadlock")
def test_with_detection_off_a_deadlock_just_waits(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_deadlock", "off", privlab_kernel.token)
    run.expect_pass()
    assert [c.ret for c in run.trace.syscalls("enable_deadlock_detect")] == [0, 0]
    assert not refused(run, "mutex_lock") and not refused(run, "semaphore_down")
    # The two crossed locks and the empty semaphore's down never returned.
    assert len([c for c in run.trace.syscalls("mutex_lock") if c.outcome == "pending"]) == 2
    assert len([c for c in run.trace.syscalls("semaphore_down")
                if c.outcome == "pending"]) == 1


@pytest.mark.points(3)
@pytest.mark.requires("test_relocking_a_held_mutex_is_a_deadlock")
def test_the_dining_philosophers_last_fork_is_refused(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_deadlock", "philosophers", privlab_kernel.token)
    run.expect_pass()
    [no] = refused(run, "mutex_lock")
    assert returned_at_once(run, no)
