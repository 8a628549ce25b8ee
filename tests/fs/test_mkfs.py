"""mkfs (harness/fs/mkfs.py) read back through the reader (harness/fs/image.py)."""

from __future__ import annotations

import random

import pytest

from privlab.abi.fs_layout import (
    BSIZE,
    DIRENT_SIZE,
    FSMAGIC,
    LOGBLOCKS,
    MAXFILE,
    NDIRECT,
    NINDIRECT,
    ROOTINO,
    T_DIR,
    T_FILE,
)
from privlab.errors import BadInput
from privlab.fs import DiskImage, make_image


def noise(nbytes: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(nbytes)


def round_trip(data: bytes) -> DiskImage:
    img = DiskImage(make_image({"f": data}))
    assert img.read_path("/f") == data
    return img


def test_the_default_image_is_8_mib_with_512_inodes_and_a_full_size_log() -> None:
    img = DiskImage(make_image({}))
    sb = img.superblock
    assert len(img.data) == 8 << 20
    assert (sb.magic, sb.size, sb.ninodes, sb.nlog) == (FSMAGIC, 8192, 512, LOGBLOCKS + 1)
    assert [(r.name, r.start, r.count) for r in sb.regions()] == [
        ("boot", 0, 1), ("super", 1, 1), ("log", 2, 31), ("inodes", 33, 32),
        ("bitmap", 65, 1), ("data", 66, 8126)]


def test_a_small_file_sits_in_direct_blocks() -> None:
    img = round_trip(b"hello\n")
    ino = img.lookup("f")
    assert (ino.type, ino.nlink, ino.size) == (T_FILE, 1, 6)
    assert img.blocks(ino).mapping == ()
    assert ino.addrs[1:] == (0,) * (NDIRECT + 1)


def test_a_file_of_exactly_ndirect_blocks_needs_no_indirect_block() -> None:
    img = round_trip(noise(NDIRECT * BSIZE))
    assert img.blocks(img.lookup("f")).mapping == ()


def test_one_block_more_uses_the_indirect_block() -> None:
    img = round_trip(noise(NDIRECT * BSIZE + 1))
    ino = img.lookup("f")
    fb = img.blocks(ino)
    assert fb.mapping == (ino.addrs[NDIRECT],)
    assert [i for i, _ in fb.data] == list(range(NDIRECT + 1))
    assert ino.addrs[NDIRECT + 1] == 0


def test_a_file_past_the_indirect_block_uses_the_doubly_indirect_one() -> None:
    blocks = NDIRECT + NINDIRECT + NINDIRECT + 3      # two children of the double block
    img = round_trip(noise(blocks * BSIZE - 100))
    ino = img.lookup("f")
    fb = img.blocks(ino)
    assert len(fb.mapping) == 1 + 1 + 2
    assert fb.mapping[:2] == (ino.addrs[NDIRECT], ino.addrs[NDIRECT + 1])
    assert [i for i, _ in fb.data] == list(range(blocks))


def test_an_empty_file_holds_no_blocks() -> None:
    img = round_trip(b"")
    assert img.lookup("f").addrs == (0,) * (NDIRECT + 2)


def test_paths_with_directories_create_them_with_dot_and_dot_dot() -> None:
    img = DiskImage(make_image({"bin/ls": b"ls", "a/b/c": b"c", "top": b"t"}))
    bin_ = img.lookup("/bin")
    assert (bin_.type, bin_.nlink) == (T_DIR, 1)
    assert [(e.name, e.inum) for e in img.listdir(bin_)] == [
        (".", bin_.inum), ("..", ROOTINO), ("ls", img.lookup("bin/ls").inum)]
    b = img.lookup("a/b")
    assert [(e.name, e.inum) for e in img.listdir(b)][:2] == [
        (".", b.inum), ("..", img.lookup("a").inum)]
    assert img.read_path("a/b/c") == b"c"
    assert b.size == 3 * DIRENT_SIZE


def test_the_root_is_inode_1_and_its_dot_dot_is_itself() -> None:
    img = DiskImage(make_image({"x": b""}))
    assert [(e.name, e.inum) for e in img.listdir(ROOTINO)] == [
        (".", 1), ("..", 1), ("x", 2)]


def test_inodes_are_numbered_depth_first_in_name_order() -> None:
    img = DiskImage(make_image({"z": b"", "b/y": b"", "a": b"", "b/x": b""}))
    assert [(e.path, e.inode.inum) for e in img.walk()] == [
        ("/", 1), ("/a", 2), ("/b", 3), ("/b/x", 4), ("/b/y", 5), ("/z", 6)]


def test_dirs_makes_empty_directories() -> None:
    img = DiskImage(make_image({}, dirs=["tmp", "/home/ann"]))
    assert [e.path for e in img.walk()] == ["/", "/home", "/home/ann", "/tmp"]
    assert [e.name for e in img.listdir(img.lookup("tmp"))] == [".", ".."]


def test_the_same_files_give_the_same_bytes_whatever_their_order() -> None:
    files = {"sh": noise(5000, 2), "hello": noise(70000, 3), "bin/x": b"x"}
    backwards = dict(reversed(files.items()))
    assert make_image(files) == make_image(backwards)


def test_the_bitmap_marks_metadata_and_taken_blocks_only() -> None:
    img = DiskImage(make_image({"f": noise(3 * BSIZE)}))
    sb = img.superblock
    used = [b for b in range(sb.size) if img.bitmap_says_used(b)]
    # the root's one block, then the file's three
    assert used == list(range(sb.datastart + 4))


def test_a_large_file_grows_the_image_in_whole_mib_keeping_4_mib_free() -> None:
    img = DiskImage(make_image({"f": bytes(9 << 20)}))
    assert img.superblock.size == 14 * 1024


def test_many_files_get_more_inodes() -> None:
    img = DiskImage(make_image({f"f{i}": b"" for i in range(600)}))
    assert img.superblock.ninodes == 608


def test_explicit_size_and_ninodes_are_kept() -> None:
    sb = DiskImage(make_image({"f": b"x"}, size_blocks=200, ninodes=32)).superblock
    assert (sb.size, sb.ninodes, sb.inodestart, sb.bmapstart) == (200, 32, 33, 35)


@pytest.mark.parametrize(("files", "options", "message"), [
    ({"x" * 63: b""}, {}, "bad file name '" + "x" * 63 + "': a name is 1 to 62 bytes"),
    ({"a//b": b""}, {}, "bad path 'a//b': empty name in it"),
    ({"a/./b": b""}, {}, "bad file name '.'"),
    ({"a": b"", "a/b": b""}, {}, "a/b: /a is a file, not a directory"),
    ({"a/b": b"", "a": b""}, {}, "a: given twice (already a directory)"),
    # 300 data blocks, the indirect, the doubly indirect and one child, the root's block
    ({"f": bytes(300 * BSIZE)}, {"size_blocks": 200},
     "an image of 200 blocks is too small: the files need 304 data blocks and it has 134"),
    ({}, {"size_blocks": 60}, "a disk of 60 blocks has no room for data after its 66 blocks"),
    ({"a": b"", "b": b""}, {"ninodes": 3},
     "3 files and directories need 4 inodes (inode 0 is never used); ninodes is 3"),
])
def test_what_cannot_be_made_is_one_line_of_bad_input(
        files: dict[str, bytes], options: dict[str, int], message: str) -> None:
    with pytest.raises(BadInput) as e:
        make_image(files, **options)
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


def test_a_file_larger_than_maxfile_blocks_is_refused() -> None:
    with pytest.raises(BadInput, match=rf"^big: {(MAXFILE + 1) * BSIZE} bytes is more than "
                                       rf"the largest file \({MAXFILE} blocks of 1024 bytes\)$"):
        make_image({"big": bytes((MAXFILE + 1) * BSIZE)})
