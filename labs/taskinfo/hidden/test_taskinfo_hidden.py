"""Lab 1 hidden tests: counts under a random mix of calls, checked against the trace."""

import random

import pytest

from harness.grade import KernelUnderTest


@pytest.mark.points(2)
def test_counts_match_the_trace_for_larger_counts(kernel: KernelUnderTest,
                                                  rng: random.Random) -> None:
    n, m = rng.randint(100, 300), rng.randint(50, 150)
    run = kernel.run("lab_taskinfo", "counts", kernel.token, n, m)
    run.expect_pass()
    assert run.trace.count("getpid") == n and run.trace.count("get_time") == m
