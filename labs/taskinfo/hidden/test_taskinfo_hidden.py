"""Lab 1 hidden tests: counts under a random mix of calls, checked against the trace."""

import random

import pytest

from privlab.grade import KernelUnderTest


@pytest.mark.points(2)
def test_counts_match_the_trace_for_larger_counts(privlab_kernel: KernelUnderTest,
                                                  privlab_rng: random.Random) -> None:
    n, m = privlab_rng.randint(100, 300), privlab_rng.randint(50, 150)
    run = privlab_kernel.run("lab_taskinfo", "counts", privlab_kernel.token, n, m)
    run.expect_pass()
    assert run.trace.count("getpid") == n and run.trace.count("get_time") == m
