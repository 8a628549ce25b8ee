"""Lab 4: vmprint prints the first process's page table (bootargs `vmprint`).

The expected text is computed from the page table in guest memory; the RAM size and
the program change from run to run, so the physical addresses do too.
"""

import random
import re

import pytest

from harness.grade import KernelUnderTest
from harness.grade.checks import first_user_page_table, printed_block, vmprint_lines

PTE_LINE = re.compile(r"^ \.\.")
PROGRAMS = ("hello", "lab_mmap", "lab_trap", "lab_taskinfo")


def _vmprint(kernel: KernelUnderTest, rng: random.Random) -> tuple[list[str], list[str]]:
    run = kernel.boot(rng.choice(PROGRAMS), "x", kernel.token, flags=("vmprint",),
                      ram_mib=rng.choice((24, 32, 40, 48)))
    root = first_user_page_table(run, 50_000_000)
    expected = vmprint_lines(run, root)
    run.run_to_exit()
    return expected, printed_block(run.output, "page table", PTE_LINE)


def _diff(expected: list[str], got: list[str]) -> str:
    for i, (want, have) in enumerate(zip(expected, got, strict=False)):
        if want != have:
            return f"line {i + 1}: expected {want!r}\n        got      {have!r}"
    return f"expected {len(expected)} lines, got {len(got)}"


@pytest.mark.points(8)
class TestVmprint:
    """vmprint output"""

    @pytest.mark.points(1)
    def test_header_names_the_root_page_table(self, privlab_kernel: KernelUnderTest,
                                              privlab_rng: random.Random) -> None:
        expected, got = _vmprint(privlab_kernel, privlab_rng)
        assert got[:1] == expected[:1], f"expected {expected[0]!r}, got {got[:1]}"
        assert len(got) > 1, "no page-table entries were printed"

    @pytest.mark.points(3)
    def test_interior_entries_point_to_the_next_level(self, privlab_kernel: KernelUnderTest,
                                                      privlab_rng: random.Random) -> None:
        expected, got = _vmprint(privlab_kernel, privlab_rng)
        interior = [line for line in expected if " va " not in line]
        printed = [line for line in got if " va " not in line]
        assert printed == interior, _diff(interior, printed)

    @pytest.mark.points(4)
    def test_every_leaf_with_its_address_and_permissions(self, privlab_kernel: KernelUnderTest,
                                                         privlab_rng: random.Random) -> None:
        expected, got = _vmprint(privlab_kernel, privlab_rng)
        assert got == expected, _diff(expected, got)
