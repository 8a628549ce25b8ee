"""Lab 2 hidden tests."""

import pytest

from privlab.grade import KernelUnderTest


@pytest.mark.points(2)
def test_unmapped_frames_are_reused(privlab_kernel: KernelUnderTest) -> None:
    """Mapping and unmapping 1 MiB 24 times on a 16 MiB machine needs every frame back."""
    run = privlab_kernel.run("lab_mmap", "reuse", privlab_kernel.token, 1, 24, ram_mib=16,
                     max_insns=400_000_000)
    run.expect_pass(within=400_000_000)
