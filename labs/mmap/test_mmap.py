"""Lab 2: mmap (222) and munmap (215) under Sv39 paging."""

import random

import pytest

from privlab.abi.csr import Priv
from privlab.grade import KernelUnderTest

PAGE = 4096
LOAD_PAGE_FAULT, STORE_PAGE_FAULT = 13, 15


def _address(rng: random.Random) -> int:
    """A page-aligned address in [256 MiB, 1 GiB): free in every test program."""
    return rng.randrange(0x10000000, 0x40000000, PAGE)


@pytest.mark.points(3)
def test_mapped_memory_is_zeroed_writable_and_goes_away(privlab_kernel: KernelUnderTest,
                                                        privlab_rng: random.Random) -> None:
    addr, length = _address(privlab_rng), privlab_rng.randint(1, 6 * PAGE)
    run = privlab_kernel.run("lab_mmap", "rw", privlab_kernel.token, addr, length)
    run.expect_pass()
    run.expect_syscall("mmap", count=1, args=(addr, length), ret=0)


@pytest.mark.points(2)
@pytest.mark.requires("test_mapped_memory_is_zeroed_writable_and_goes_away")
def test_read_only_mapping_faults_on_write(privlab_kernel: KernelUnderTest,
                                           privlab_rng: random.Random) -> None:
    addr = _address(privlab_rng)
    run = privlab_kernel.run("lab_mmap", "readonly", privlab_kernel.token, addr)
    run.expect_pass()
    run.expect_trap(STORE_PAGE_FAULT, tval=addr, from_priv=Priv.U)  # the child's store


@pytest.mark.points(2)
@pytest.mark.requires("test_mapped_memory_is_zeroed_writable_and_goes_away")
def test_write_only_mapping_is_refused_by_syscalls_and_faults_on_every_access(
        privlab_kernel: KernelUnderTest, privlab_rng: random.Random) -> None:
    """PROT_WRITE alone is mapped as W without R, the encoding the spec reserves: the
    hart faults on a store and on a load, and write/get_time/read given the page
    return -1 (the kernel must not touch what the user cannot)."""
    addr = _address(privlab_rng)
    run = privlab_kernel.run("lab_mmap", "writeonly", privlab_kernel.token, addr)
    run.expect_pass()
    run.expect_syscall("write", args=(1, addr), ret=-1)
    run.expect_syscall("get_time", args=(addr,), ret=-1)
    run.expect_trap(STORE_PAGE_FAULT, tval=addr, from_priv=Priv.U)  # the first child
    run.expect_trap(LOAD_PAGE_FAULT, tval=addr, from_priv=Priv.U)   # the second


@pytest.mark.points(2)
def test_bad_requests_return_minus_one(privlab_kernel: KernelUnderTest,
                                       privlab_rng: random.Random) -> None:
    run = privlab_kernel.run("lab_mmap", "errors", privlab_kernel.token,
                             _address(privlab_rng) + PAGE)
    run.expect_pass()


@pytest.mark.points(2)
@pytest.mark.requires("test_mapped_memory_is_zeroed_writable_and_goes_away")
def test_munmap_of_one_page_leaves_its_neighbours(privlab_kernel: KernelUnderTest,
                                                  privlab_rng: random.Random) -> None:
    addr = _address(privlab_rng)
    run = privlab_kernel.run("lab_mmap", "unmap", privlab_kernel.token, addr)
    run.expect_pass()
    run.expect_trap(LOAD_PAGE_FAULT, tval=addr + PAGE, from_priv=Priv.U)


@pytest.mark.points(1)
@pytest.mark.requires("test_mapped_memory_is_zeroed_writable_and_goes_away")
def test_fork_copies_a_mapping(privlab_kernel: KernelUnderTest, privlab_rng: random.Random) -> None:
    run = privlab_kernel.run("lab_mmap", "fork", privlab_kernel.token, _address(privlab_rng))
    run.expect_pass()
