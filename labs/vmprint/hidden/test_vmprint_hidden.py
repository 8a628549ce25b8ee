"""Lab 4 hidden tests."""

import pytest

from privlab.grade import KernelUnderTest
from privlab.grade.vmprint import vmprint_at_boot


@pytest.mark.points(2)
def test_vmprint_on_a_large_machine(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.boot("usertests", privlab_kernel.token, flags=("vmprint",), ram_mib=96)
    printed = vmprint_at_boot(run, 80_000_000)
    printed.expect_header()
    printed.expect_entries(leaves=True)
