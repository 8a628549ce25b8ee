"""Lab 4: vmprint prints the first process's page table (bootargs `vmprint`).

The expected text is computed from the page table in guest memory; the RAM size and
the program change from run to run, so the physical addresses do too. The three parts
score apart (labs/vmprint/README.md): a correct header earns its point with no
entries under it, and an entry in the wrong format is reported with what was printed.
"""

import random

import pytest

from privlab.grade import KernelUnderTest
from privlab.grade.vmprint import Vmprint, vmprint_at_boot

PROGRAMS = ("hello", "lab_mmap", "lab_trap", "lab_taskinfo")


def _vmprint(kernel: KernelUnderTest, rng: random.Random) -> Vmprint:
    run = kernel.boot(rng.choice(PROGRAMS), "x", kernel.token, flags=("vmprint",),
                      ram_mib=rng.choice((24, 32, 40, 48)))
    printed = vmprint_at_boot(run, 50_000_000)
    run.run_to_exit()
    return printed


@pytest.mark.points(8)
class TestVmprint:
    """vmprint output"""

    @pytest.mark.points(1)
    def test_header_names_the_root_page_table(self, privlab_kernel: KernelUnderTest,
                                              privlab_rng: random.Random) -> None:
        _vmprint(privlab_kernel, privlab_rng).expect_header()

    @pytest.mark.points(3)
    def test_interior_entries_point_to_the_next_level(self, privlab_kernel: KernelUnderTest,
                                                      privlab_rng: random.Random) -> None:
        _vmprint(privlab_kernel, privlab_rng).expect_entries(leaves=False)

    @pytest.mark.points(4)
    def test_every_leaf_with_its_address_and_permissions(self, privlab_kernel: KernelUnderTest,
                                                         privlab_rng: random.Random) -> None:
        printed = _vmprint(privlab_kernel, privlab_rng)
        printed.expect_header()
        printed.expect_entries(leaves=True)
