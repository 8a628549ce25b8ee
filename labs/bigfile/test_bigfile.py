"""Lab 7: files past NDIRECT + NINDIRECT blocks, through the doubly-indirect block.

The test program writes, reads back and checks every block itself; the grader also
reads the disk the run left (a snapshot in memory) and checks it with fsck."""

import random

import pytest

from privlab.fs import DiskImage, check
from privlab.grade import KernelUnderTest


def blocks_in_use(data: bytes) -> int:
    img = DiskImage(data)
    return sum(img.bitmap_says_used(b) for b in range(img.superblock.size))


@pytest.mark.points(3)
def test_a_file_just_past_the_indirect_block_reads_back(
        privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_bigfile", "write", privlab_kernel.token, 300)
    run.expect_pass()


@pytest.mark.points(3)
def test_a_file_of_thousands_of_blocks_reads_back(privlab_kernel: KernelUnderTest,
                                                   privlab_rng: random.Random) -> None:
    run = privlab_kernel.run("lab_bigfile", "write", privlab_kernel.token,
                             privlab_rng.randint(1000, 3000), max_insns=2_000_000_000)
    run.expect_pass(within=2_000_000_000)


@pytest.mark.points(2)
@pytest.mark.requires("test_a_file_just_past_the_indirect_block_reads_back")
def test_unlink_frees_every_block(privlab_kernel: KernelUnderTest) -> None:
    before = blocks_in_use(privlab_kernel.boot("hello").disk_contents())
    run = privlab_kernel.run("lab_bigfile", "unlink", privlab_kernel.token, 600)
    run.expect_pass()
    after = run.disk_contents()
    findings = check(after)
    assert findings == [], "fsck: " + "; ".join(str(f) for f in findings)
    used = blocks_in_use(after)
    assert used == before, f"{used - before} blocks are still marked in use after unlink"
