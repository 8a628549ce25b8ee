"""Lab 3 hidden tests."""

import random

import pytest

from privlab.grade import KernelUnderTest
from privlab.grade.checks import check_shares, slices_by_priority


@pytest.mark.points(2)
def test_four_processes_share_by_priority(privlab_kernel: KernelUnderTest,
                                          privlab_rng: random.Random) -> None:
    prios = [3, 5, 8, 13]
    privlab_rng.shuffle(prios)
    run = privlab_kernel.run("lab_sched", "stride", privlab_kernel.token, 50, *prios,
                             max_insns=150_000_000)
    run.expect_pass()
    check_shares(slices_by_priority(run))
