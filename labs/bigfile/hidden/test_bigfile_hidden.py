"""Lab 7 hidden tests: what the run left on the disk."""

import struct

import pytest

from privlab.abi.fs_layout import NDIRECT
from privlab.fs import DiskImage, check
from privlab.grade import KernelUnderTest

BLOCK = 1024


def expected_block(k: int, token: str) -> bytes:
    """lab_bigfile's pattern for block k (userland/lab_bigfile.c)."""
    b = bytearray((k * 131 + i * 7) & 0xFF for i in range(BLOCK))
    b[0:8] = struct.pack("<q", k)
    t = token.encode()[:16]
    b[8:8 + len(t)] = t
    return bytes(b)


@pytest.mark.points(2)
def test_the_file_on_disk_uses_the_doubly_indirect_block(
        privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_bigfile", "write", privlab_kernel.token, 1200,
                             max_insns=2_000_000_000)
    run.expect_pass(within=2_000_000_000)
    data = run.disk_contents()
    assert check(data) == []
    img = DiskImage(data)
    inode = img.lookup("/big")
    assert inode.addrs[NDIRECT + 1] != 0, "addrs[NDIRECT + 1] (doubly indirect) is 0"
    content = img.read(inode)
    assert len(content) == 1200 * BLOCK
    for k in (0, NDIRECT, 266, 267, 523, 1199):
        assert content[k * BLOCK:(k + 1) * BLOCK] == expected_block(k, privlab_kernel.token), \
            f"block {k} on the disk is not what was written"


@pytest.mark.points(2)
def test_a_file_grows_until_the_disk_is_full(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_bigfile", "limit", privlab_kernel.token, 100_000,
                             max_insns=4_000_000_000)
    run.expect_pass(within=4_000_000_000)
    line = next(x for x in run.lines() if x.startswith("lab_bigfile: the file stopped at"))
    stopped = int(line.split()[-2])
    assert stopped > 267, f"the file stopped at {stopped} blocks: the handout's limit"
    data = run.disk_contents()
    assert check(data) == []
    img = DiskImage(data)
    free = [b for b in range(img.superblock.size) if not img.bitmap_says_used(b)]
    assert free == [], f"{len(free)} blocks were still free when write stopped"
