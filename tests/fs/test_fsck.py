"""fsck (harness/fs/fsck.py): nothing to say on mkfs's images; each corruption named."""

from __future__ import annotations

import random

import pytest

from fs.edit import Editable
from privlab.abi.fs_layout import BSIZE, DIRENT_SIZE, LOGBLOCKS, NDIRECT, T_FILE
from privlab.errors import BadInput
from privlab.fs import DiskImage, check, make_image, replay_log

FILES = {"hello": b"hello\n" * 400, "bin/ls": b"ls", "big": bytes(range(256)) * 60,
         "empty": b""}


@pytest.fixture
def e() -> Editable:
    return Editable(make_image(FILES))


def codes(e: Editable, replay: bool = True) -> list[str]:
    return [f.code for f in check(e.bytes, replay=replay)]


def messages(e: Editable) -> list[str]:
    return [f.message for f in check(e.bytes)]


def test_a_fresh_image_is_consistent(e: Editable) -> None:
    assert check(e.bytes) == []


def test_an_image_with_nested_and_large_files_is_consistent() -> None:
    files = {"a/b/c/d": b"d", "dbl": bytes((NDIRECT + 300) * BSIZE), "x/y": b"y" * 5000}
    assert check(make_image(files, dirs=["empty/dir"])) == []


def test_zeros_are_bad_input_not_findings() -> None:
    with pytest.raises(BadInput, match="not a file-system image"):
        check(bytes(8 * BSIZE))


def test_a_superblock_whose_regions_overlap(e: Editable) -> None:
    e.superblock(bmapstart=40)
    assert messages(e) == ["the bitmap region (from block 40) overlaps the inodes region "
                           "(blocks 33-64)"]


def test_a_superblock_larger_than_the_image(e: Editable) -> None:
    e.superblock(size=9000, nblocks=8933)     # 2 bitmap blocks
    assert messages(e) == ["the superblock says 9000 blocks but the image holds only 8192"]


def test_a_log_too_small_for_a_transaction(e: Editable) -> None:
    e.superblock(nlog=LOGBLOCKS)
    assert codes(e)[0] == "superblock"
    assert messages(e)[0] == ("the log has 30 blocks; a transaction may write 30 (nlog must "
                              "be at least 31)")


def test_the_root_as_a_file(e: Editable) -> None:
    e.inode(1, type=T_FILE)
    assert messages(e) == ["the root inode 1 is a file, not a directory"]


def test_an_inode_of_an_unknown_type(e: Editable) -> None:
    e.inode(e.inum("hello"), type=9)
    assert messages(e) == [f"inode {e.inum('hello')} has type 9 (not a directory, file or "
                           "device)"]


def test_a_directory_size_that_is_not_whole_entries(e: Editable) -> None:
    bin_ = e.inum("bin")
    e.inode(bin_, size=3 * DIRENT_SIZE + 1)
    assert messages(e) == [f"directory inode {bin_} (/bin): size 193 is not a multiple of 64"]


def test_dot_naming_another_inode(e: Editable) -> None:
    bin_ = e.inum("bin")
    e.dirent("/bin", 0, 1, b".")
    assert messages(e) == [f"directory inode {bin_} (/bin): '.' names inode 1, not itself "
                           f"({bin_})"]


def test_dot_dot_naming_another_inode(e: Editable) -> None:
    bin_ = e.inum("bin")
    e.dirent("/bin", 1, bin_, b"..")
    assert messages(e) == [f"directory inode {bin_} (/bin): '..' names inode {bin_}, not its "
                           "parent (1)"]


def test_a_first_entry_that_is_not_dot(e: Editable) -> None:
    e.dirent("/", 0, 0, b"x")
    assert messages(e) == ["directory inode 1 (/): entry 0 is 'x', not '.'"]


def test_an_entry_naming_a_free_inode(e: Editable) -> None:
    e.append_dirent("/", 100, b"ghost")
    assert messages(e) == ["directory inode 1 (/): 'ghost' names inode 100, which is free"]


def test_an_entry_naming_an_inode_past_the_table(e: Editable) -> None:
    e.append_dirent("/", 600, b"far")
    assert messages(e) == ["directory inode 1 (/): 'far' names inode 600, outside the inode "
                           "table (1-511)"]


def test_a_name_twice_in_a_directory(e: Editable) -> None:
    e.append_dirent("/", e.inum("hello"), b"hello")
    hello = e.inum("hello")
    assert messages(e) == ["directory inode 1 (/): the name 'hello' appears twice",
                           f"inode {hello} (/hello): nlink is 1 but 2 directory entries "
                           "name it"]


def test_another_dot_dot_in_a_directory(e: Editable) -> None:
    e.append_dirent("/bin", 1, b"..")
    assert codes(e) == ["dir-entry"]


def test_a_directory_named_twice(e: Editable) -> None:
    bin_ = e.inum("bin")
    e.append_dirent("/", bin_, b"bin2")
    assert messages(e) == [f"directory inode {bin_} (/bin) is named again, by /bin2"]


def test_a_block_outside_the_data_region(e: Editable) -> None:
    ino = e.img.lookup("hello")
    e.inode(ino.inum, addrs=(40, *ino.addrs[1:]))
    assert messages(e) == [
        f"inode {ino.inum} (/hello) holds block 40, outside the data region (66-8191)",
        f"the bitmap marks block {ino.addrs[0]} in use, but nothing uses it"]


def test_a_block_held_by_two_inodes(e: Editable) -> None:
    hello, ls = e.img.lookup("hello"), e.img.lookup("bin/ls")
    e.inode(ls.inum, addrs=(hello.addrs[0], *ls.addrs[1:]))
    assert messages(e) == [
        f"block {hello.addrs[0]} is held by inode {ls.inum} (/bin/ls) and by inode "
        f"{hello.inum} (/hello)",
        f"the bitmap marks block {ls.addrs[0]} in use, but nothing uses it"]


def test_a_block_held_twice_by_one_inode(e: Editable) -> None:
    ino = e.img.lookup("hello")
    e.inode(ino.inum, addrs=(ino.addrs[0], ino.addrs[0], *ino.addrs[2:]))
    assert codes(e) == ["block-twice", "bitmap-unused"]
    assert messages(e)[0] == f"block {ino.addrs[0]} is held twice by inode {ino.inum} (/hello)"


def test_a_size_past_the_blocks_held(e: Editable) -> None:
    ino = e.img.lookup("hello")
    e.inode(ino.inum, size=ino.size + 5 * BSIZE)
    assert messages(e) == [f"inode {ino.inum} (/hello): size 7520 needs 8 blocks but 5 are "
                           "missing (the first: file block 3)"]


def test_blocks_past_the_size(e: Editable) -> None:
    ino = e.img.lookup("hello")
    e.inode(ino.inum, size=10)
    assert messages(e) == [f"inode {ino.inum} (/hello): holds 2 blocks past its size 10 (the "
                           "first: file block 1)"]


def test_an_indirect_block_the_size_does_not_need(e: Editable) -> None:
    ino = e.img.lookup("big")      # 15 blocks: 11 direct + 4 through the indirect block
    e.inode(ino.inum, size=NDIRECT * BSIZE)
    assert messages(e) == [
        f"inode {ino.inum} (/big): holds 4 blocks past its size 11264 (the first: file "
        "block 11)",
        f"inode {ino.inum} (/big): holds 1 indirect block; its size 11264 needs 0"]


def test_a_file_nlink_that_is_not_its_names(e: Editable) -> None:
    ino = e.img.lookup("empty")
    e.inode(ino.inum, nlink=2)
    assert messages(e) == [f"inode {ino.inum} (/empty): nlink is 2 but 1 directory entry "
                           "names it"]


def test_a_directory_nlink_counting_dot_dot(e: Editable) -> None:
    e.inode(1, nlink=3)
    assert messages(e) == ["inode 1 (/): nlink is 3; a directory's is 1 (the entry in its "
                           "parent)"]


def test_an_allocated_inode_no_directory_names(e: Editable) -> None:
    e.inode(200, type=T_FILE, nlink=1)
    assert messages(e) == ["inode 200 (file, 0 bytes, nlink 1) is allocated but no directory "
                           "names it"]


def test_a_used_block_free_in_the_bitmap(e: Editable) -> None:
    block = e.img.lookup("hello").addrs[1]
    e.bit(block, False)
    assert messages(e) == [f"block {block} is in use but free in the bitmap"]


def test_metadata_free_in_the_bitmap_as_runs(e: Editable) -> None:
    for b in (0, 1, 2, 40):
        e.bit(b, False)
    assert messages(e) == ["blocks 0-2, 40 are in use but free in the bitmap"]


def test_a_free_block_marked_in_use(e: Editable) -> None:
    e.bit(5000, True)
    e.bit(5001, True)
    assert messages(e) == ["the bitmap marks blocks 5000-5001 in use, but nothing uses them"]


def test_many_runs_are_cut_after_eight() -> None:
    e = Editable(make_image({}))
    for b in range(1000, 1040, 2):
        e.bit(b, True)
    assert messages(e) == ["the bitmap marks blocks 1000, 1002, 1004, 1006, 1008, 1010, 1012, "
                           "1014 and 12 more runs in use, but nothing uses them"]


# -- the log ---------------------------------------------------------------------------------

def test_a_log_header_larger_than_the_log(e: Editable) -> None:
    e.log([], [], n=LOGBLOCKS + 1)
    assert messages(e) == ["the log header says n = 31, more than the log holds (30 blocks)"]
    with pytest.raises(BadInput, match="more than the log holds"):
        replay_log(e.bytes)


def test_a_log_entry_going_home_outside_the_disk(e: Editable) -> None:
    e.log([70, 9000], [b"a", b"b"])
    assert messages(e) == ["log entry 1 sends its block home to block 9000, outside the disk "
                           "(8192 blocks)"]


def test_a_committed_log_is_reported_and_replay_installs_it(e: Editable) -> None:
    block = e.img.lookup("hello").addrs[0]
    e.log([block], [b"HELLO\n"])
    assert messages(e) == ["the log holds a committed transaction of 1 blocks (recovery would "
                           "install it)"]
    after = DiskImage(replay_log(e.bytes))
    assert after.read_path("hello")[:8] == b"HELLO\n\0\0"
    assert after.log_header().n == 0
    assert check(after) == []


def test_fsck_checks_the_image_as_recovery_leaves_it(e: Editable) -> None:
    """The inode block on disk has a wrong nlink; the committed log holds it fixed."""
    ino = e.img.lookup("hello")
    home = e.img.superblock.inode_block(ino.inum)
    fixed = e.img.block(home)
    e.inode(ino.inum, nlink=5)
    e.log([home], [fixed])
    assert codes(e, replay=True) == ["log-committed"]
    assert codes(e, replay=False) == ["log-committed", "nlink"]


def test_replaying_an_empty_log_changes_nothing(e: Editable) -> None:
    assert replay_log(e.bytes) == e.bytes


def test_random_damage_to_metadata_gives_findings_never_an_exception() -> None:
    """Bytes of the superblock, log, inodes, bitmap, a directory and indirect blocks
    overwritten at random: check() returns findings (or BadInput for a broken magic),
    and the reader's views of what it can read raise nothing else."""
    base = make_image({"hello": b"h" * 3000, "a/b": b"b", "dbl": bytes(300 * BSIZE)})
    img = DiskImage(base)
    sb = img.superblock
    targets = [*range(1, sb.datastart), img.inode(1).addrs[0],
               *img.blocks(img.lookup("dbl")).mapping]
    rng = random.Random(5)
    for _ in range(100):
        data = bytearray(base)
        for _ in range(rng.randint(1, 6)):
            block = rng.choice(targets)
            data[block * BSIZE + rng.randrange(32 if block == 1 else BSIZE)] = rng.randrange(256)
        try:
            check(bytes(data))
            check(bytes(data), replay=False)
            damaged = DiskImage(bytes(data))
            for entry in damaged.walk():
                damaged.read(entry.inode)
        except BadInput:
            pass
