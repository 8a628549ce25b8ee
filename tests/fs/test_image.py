"""The reader (harness/fs/image.py) on what is not a good image: one-line BadInput."""

from __future__ import annotations

from pathlib import Path

import pytest

from fs.edit import Editable
from privlab.abi.fs_layout import BSIZE, NDIRECT
from privlab.errors import BadInput
from privlab.fs import DiskImage, make_image


def test_zeros_are_not_a_file_system_image() -> None:
    with pytest.raises(BadInput, match=r"^disk: not a file-system image \(magic 0x0, not "
                                       r"0x53464c50\)$"):
        DiskImage(bytes(4 * BSIZE), "disk")


def test_a_file_shorter_than_a_superblock_is_not_an_image() -> None:
    with pytest.raises(BadInput, match=r"not a file-system image \(100 bytes is less than"):
        DiskImage(bytes(100))


def test_an_image_cut_short_is_a_bad_superblock() -> None:
    with pytest.raises(BadInput, match=r"^image: bad superblock: the superblock says 8192 "
                                       r"blocks but the image holds only 100$"):
        DiskImage(make_image({})[:100 * BSIZE])


def test_open_names_a_missing_file_and_a_directory(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"nope.img: cannot read disk image: No such file"):
        DiskImage.open(tmp_path / "nope.img")
    with pytest.raises(BadInput, match=r"is a directory, not a disk image$"):
        DiskImage.open(tmp_path)


def test_lookup_of_a_missing_path_and_through_a_file() -> None:
    img = DiskImage(make_image({"a/f": b"x"}))
    with pytest.raises(BadInput, match=r"^image: /a/g: no such file or directory$"):
        img.lookup("/a/g")
    with pytest.raises(BadInput, match=r"^image: a/f/x: not a directory on the way$"):
        img.lookup("a/f/x")
    with pytest.raises(BadInput, match=r"^image: /a: is a directory$"):
        img.read_path("/a")


def test_an_inode_number_outside_the_table() -> None:
    img = DiskImage(make_image({}))
    with pytest.raises(BadInput, match=r"^image: no inode 512 \(inodes are 1 to 511\)$"):
        img.inode(512)
    with pytest.raises(BadInput, match=r"no inode 0"):
        img.inode(0)


def test_a_block_number_outside_the_disk_is_bad_input_or_zeros_when_lenient() -> None:
    e = Editable(make_image({"f": b"abc"}))
    addrs = list(e.img.lookup("f").addrs)
    addrs[0] = 99999
    e.inode(e.inum("f"), addrs=tuple(addrs))
    with pytest.raises(BadInput, match=r"inode 2's block 0 is block 99999, outside the disk"):
        e.img.read_path("f")
    assert e.img.read(e.img.lookup("f"), strict=False) == b"\0\0\0"


def test_an_indirect_block_outside_the_disk_is_not_followed() -> None:
    e = Editable(make_image({"f": b"abc"}))
    addrs = list(e.img.lookup("f").addrs)
    addrs[NDIRECT] = 1 << 30
    e.inode(e.inum("f"), addrs=tuple(addrs))
    fb = e.img.blocks(e.img.lookup("f"))
    assert (fb.mapping, fb.unreadable) == ((1 << 30,), (1 << 30,))
    with pytest.raises(BadInput, match=r"inode 2's indirect block 1073741824 is outside"):
        e.img.read_path("f")


def test_listing_a_file_as_a_directory() -> None:
    img = DiskImage(make_image({"f": b""}))
    with pytest.raises(BadInput, match=r"^image: inode 2 is a file, not a directory$"):
        img.listdir(2)


def test_walk_lists_a_directory_named_twice_but_enters_it_once() -> None:
    e = Editable(make_image({"d/f": b""}))
    e.append_dirent("/", e.inum("d"), b"again")
    assert [x.path for x in e.img.walk()] == ["/", "/d", "/d/f", "/again"]
