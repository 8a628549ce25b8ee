"""Lab 4 hidden tests."""

import re

import pytest

from harness.grade import KernelUnderTest
from harness.grade.checks import first_user_page_table, printed_block, vmprint_lines


@pytest.mark.points(2)
def test_vmprint_on_a_large_machine(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.boot("usertests", privlab_kernel.token, flags=("vmprint",), ram_mib=96)
    expected = vmprint_lines(run, first_user_page_table(run, 80_000_000))
    got = printed_block(run.output, "page table", re.compile(r"^ \.\."))
    assert got == expected
