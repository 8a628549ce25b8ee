"""Lab 1: task_info (syscall 410) counts each process's system calls."""

import random

import pytest

from privlab.grade import KernelUnderTest


@pytest.mark.points(3)
def test_counts_exactly_the_calls_made(privlab_kernel: KernelUnderTest,
                                       privlab_rng: random.Random) -> None:
    """getpid N times and get_time M times: the counts are exactly N, M and 1 for
    task_info itself, and 0 for everything else."""
    n, m = privlab_rng.randint(3, 40), privlab_rng.randint(1, 20)
    run = privlab_kernel.run("lab_taskinfo", "counts", privlab_kernel.token, n, m)
    run.expect_pass()
    # The kernel's counts must match what the machine saw.
    assert run.trace.count("getpid") == n
    assert run.trace.count("get_time") == m


@pytest.mark.points(2)
def test_task_info_reports_running_status_and_returns_zero(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_taskinfo", "counts", privlab_kernel.token, 0, 0)
    run.expect_pass()
    calls = run.trace.syscalls("task_info")
    assert [c.ret for c in calls] == [0], "task_info should return 0 exactly once"


@pytest.mark.points(2)
@pytest.mark.requires("test_counts_exactly_the_calls_made")
def test_counts_are_per_process(privlab_kernel: KernelUnderTest,
                                privlab_rng: random.Random) -> None:
    """A forked child starts counting from zero; the parent's counts are its own."""
    run = privlab_kernel.run("lab_taskinfo", "fork", privlab_kernel.token,
                             privlab_rng.randint(2, 30))
    run.expect_pass()


@pytest.mark.points(2)
def test_time_is_milliseconds_since_first_scheduled(privlab_kernel: KernelUnderTest,
                                                    privlab_rng: random.Random) -> None:
    run = privlab_kernel.run("lab_taskinfo", "time", privlab_kernel.token,
                             privlab_rng.randint(3, 9))
    run.expect_pass()


@pytest.mark.points(1)
def test_time_counts_from_the_first_run_not_from_boot(privlab_kernel: KernelUnderTest,
                                                      privlab_rng: random.Random) -> None:
    """A child forked after its parent spun 20..40 ms calls task_info as soon as it
    runs: its time is 0 or 1, not the milliseconds since boot (or since its parent's
    first run), which the other time tests, on processes that start right after boot,
    cannot tell apart."""
    run = privlab_kernel.run("lab_taskinfo", "late", privlab_kernel.token,
                             privlab_rng.randint(20, 40))
    run.expect_pass()


@pytest.mark.points(2)
def test_time_is_read_on_the_get_time_clock(privlab_kernel: KernelUnderTest,
                                            privlab_rng: random.Random) -> None:
    """Fresh processes each read get_time (t1), spin past 1..3 millisecond boundaries
    (t2) and call task_info: time must be at least t2 - t1, however close to a
    boundary t1 fell. Rounding the ticks since the first run down to milliseconds
    gives one less; two readings of get_time's millisecond clock do not."""
    rounds = privlab_rng.randint(4, 8)
    run = privlab_kernel.run("lab_taskinfo", "clock", privlab_kernel.token, rounds)
    run.expect_pass()
    assert [c.ret for c in run.trace.syscalls("task_info")] == [0] * rounds


@pytest.mark.points(1)
def test_bad_pointers_return_minus_one(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_taskinfo", "badptr", privlab_kernel.token)
    run.expect_pass()
