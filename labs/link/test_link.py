"""Lab 8: linkat, unlinkat and fstat. The test program checks what it can see; the
grader also reads the disk the run left (a snapshot in memory) and checks it."""

import pytest

from privlab.fs import DiskImage, check
from privlab.grade import KernelUnderTest


@pytest.mark.points(3)
def test_a_second_name_is_the_same_inode_until_unlinked(
        privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_link", "link", privlab_kernel.token)
    run.expect_pass()
    assert [c.ret for c in run.trace.syscalls("linkat")] == [0]


@pytest.mark.points(2)
@pytest.mark.requires("test_a_second_name_is_the_same_inode_until_unlinked")
def test_bad_links_and_unlinks_return_minus_one(privlab_kernel: KernelUnderTest) -> None:
    """Only once good links work: a handout that refuses every call passes the rest."""
    run = privlab_kernel.run("lab_link", "errors", privlab_kernel.token)
    run.expect_pass()


@pytest.mark.points(2)
@pytest.mark.requires("test_a_second_name_is_the_same_inode_until_unlinked")
def test_fstat_reports_the_inode(privlab_kernel: KernelUnderTest) -> None:
    """After `subdir`, e/y is on the disk: its inode number and nlink there are what
    the program's fstat saw (it checked nlink 2 before unlinking d/x, 1 now)."""
    run = privlab_kernel.run("lab_link", "subdir", privlab_kernel.token)
    run.expect_pass()
    data = run.disk_contents()
    assert check(data) == []
    inode = DiskImage(data).lookup("/e/y")
    assert (inode.nlink, DiskImage(data).read(inode)) == (1, privlab_kernel.token.encode())
