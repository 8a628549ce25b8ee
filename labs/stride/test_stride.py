"""Lab 3: spawn (400), set_priority (140) and stride scheduling."""

import random

import pytest

from privlab.grade import KernelUnderTest
from privlab.grade.checks import check_shares, slices_by_priority


@pytest.mark.points(3)
def test_spawn_runs_a_program_and_its_exit_status_comes_back(privlab_kernel: KernelUnderTest,
                                                             privlab_rng: random.Random) -> None:
    code = privlab_rng.randint(1, 120)
    run = privlab_kernel.run("lab_sched", "spawn", privlab_kernel.token, code)
    run.expect_pass()
    run.expect_output(rf"^child {privlab_kernel.token}$")


@pytest.mark.points(2)
@pytest.mark.requires("test_spawn_runs_a_program_and_its_exit_status_comes_back")
def test_spawn_starts_a_fresh_image_without_fork(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_sched", "fresh", privlab_kernel.token)
    run.expect_pass()
    assert run.trace.count("fork") == 0, "spawn must not be built on fork"
    assert run.trace.count("spawn") == 1


@pytest.mark.points(1)
def test_spawn_rejects_bad_paths_and_arguments(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_sched", "errors", privlab_kernel.token)
    run.expect_pass()


@pytest.mark.points(1)
def test_set_priority_accepts_two_and_above(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_sched", "priority", privlab_kernel.token)
    run.expect_pass()


@pytest.mark.points(4)
@pytest.mark.requires("test_set_priority_accepts_two_and_above")
def test_cpu_share_is_proportional_to_priority(privlab_kernel: KernelUnderTest,
                                               privlab_rng: random.Random) -> None:
    low = privlab_rng.randint(2, 4)
    prios = [low, 2 * low, 4 * low]
    privlab_rng.shuffle(prios)
    run = privlab_kernel.run("lab_sched", "stride", privlab_kernel.token, 40, *prios,
                     max_insns=120_000_000)
    run.expect_pass()
    check_shares(slices_by_priority(run))
