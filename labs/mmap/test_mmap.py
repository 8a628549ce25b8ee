"""Lab 2: mmap (222) and munmap (215) under Sv39 paging."""

import random

import pytest

from harness.csr import Priv
from harness.grade import KernelUnderTest

PAGE = 4096
LOAD_PAGE_FAULT, STORE_PAGE_FAULT = 13, 15


def _address(rng: random.Random) -> int:
    """A page-aligned address in [256 MiB, 1 GiB): free in every test program."""
    return rng.randrange(0x10000000, 0x40000000, PAGE)


@pytest.mark.points(3)
def test_mapped_memory_is_zeroed_writable_and_goes_away(kernel: KernelUnderTest,
                                                        rng: random.Random) -> None:
    addr, length = _address(rng), rng.randint(1, 6 * PAGE)
    run = kernel.run("lab_mmap", "rw", kernel.token, addr, length)
    run.expect_pass()
    run.expect_syscall("mmap", count=1, args=(addr, length), ret=0)


@pytest.mark.points(2)
@pytest.mark.requires("test_mapped_memory_is_zeroed_writable_and_goes_away")
def test_read_only_mapping_faults_on_write(kernel: KernelUnderTest, rng: random.Random) -> None:
    addr = _address(rng)
    run = kernel.run("lab_mmap", "readonly", kernel.token, addr)
    run.expect_pass()
    run.expect_trap(STORE_PAGE_FAULT, tval=addr, from_priv=Priv.U)  # the child's store


@pytest.mark.points(2)
def test_bad_requests_return_minus_one(kernel: KernelUnderTest, rng: random.Random) -> None:
    run = kernel.run("lab_mmap", "errors", kernel.token, _address(rng) + PAGE)
    run.expect_pass()


@pytest.mark.points(2)
@pytest.mark.requires("test_mapped_memory_is_zeroed_writable_and_goes_away")
def test_munmap_of_one_page_leaves_its_neighbours(kernel: KernelUnderTest,
                                                  rng: random.Random) -> None:
    addr = _address(rng)
    run = kernel.run("lab_mmap", "unmap", kernel.token, addr)
    run.expect_pass()
    run.expect_trap(LOAD_PAGE_FAULT, tval=addr + PAGE, from_priv=Priv.U)


@pytest.mark.points(1)
@pytest.mark.requires("test_mapped_memory_is_zeroed_writable_and_goes_away")
def test_fork_copies_a_mapping(kernel: KernelUnderTest, rng: random.Random) -> None:
    run = kernel.run("lab_mmap", "fork", kernel.token, _address(rng))
    run.expect_pass()
