"""`privlab disk IMAGE` (harness/cli/disk_cmd.py): the geometry and tree, --check,
--inode, --cat, and bad images as one line with exit status 2. Output is what a pipe
gets: plain text, 100 columns (harness/theme.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fs.edit import Editable
from privlab.abi.fs_layout import BSIZE
from privlab.cli.main import main
from privlab.fs import make_image

FILES = {"hello": b"hello\n", "bin/big": bytes(range(256)) * 1200}


@pytest.fixture(autouse=True)
def plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def image(tmp_path: Path) -> Path:
    path = tmp_path / "fs.img"
    path.write_bytes(make_image(FILES))
    return path


def disk(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    status = main(["disk", *args])
    out, err = capsys.readouterr()
    return status, [line.rstrip() for line in out.splitlines()], err


def test_the_default_view_is_the_geometry_then_the_tree(
        image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = disk(capsys, str(image))
    assert (status, err) == (0, "")
    assert out == [
        f"{image}: 8192 blocks of 1024 bytes (8 MiB), 512 inodes (4 in use)",
        " region  blocks   count",
        " boot    0            1",
        " super   1            1",
        " log     2-32        31  empty",
        " inodes  33-64       32  16 per block",
        " bitmap  65           1  1 bit per block",
        " data    66-8191   8126  306 in use, 7820 free",
        "",
        " inum  type  nlink    size  path",
        "    1  dir       1     256  /",
        "    2  dir       1     192  /bin/",
        "    3  file      1  307200  /bin/big",
        "    4  file      1       6  /hello",
    ]


def test_inode_shows_fields_and_every_kind_of_block(
        image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = disk(capsys, str(image), "--inode", "3")
    assert status == 0
    assert out == [
        "inode 3 (/bin/big): file",
        "  type      2             file",
        "  major     0",
        "  minor     0",
        "  nlink     1",
        "  size      307200        bytes: 300 blocks",
        "  direct    addrs[0..10]  68-78",
        "  indirect  addrs[11]     79: 256 blocks 80-335",
        "  doubly    addrs[12]     336: 1 indirect block 337: 33 blocks 338-370",
    ]


def test_inode_of_a_directory_lists_its_entries(
        image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = disk(capsys, str(image), "--inode", "2")
    assert out[0] == "inode 2 (/bin): dir"
    assert out[-4:] == [
        "  entries   3             inum  name",
        "                          2     .",
        "                          1     ..",
        "                          3     big",
    ]


def test_cat_writes_the_bytes(image: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["disk", str(image), "--cat", "/bin/big"]) == 0
    assert capsysbinary.readouterr().out == FILES["bin/big"]


def test_check_on_a_consistent_image_says_so_and_exits_0(
        image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert disk(capsys, str(image), "--check") == (0, [f"{image}: consistent (4 inodes in "
                                                      "use)"], "")


def test_check_prints_one_line_per_finding_and_exits_1(
        image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    e = Editable(image.read_bytes())
    e.inode(4, nlink=3)
    e.bit(5000, True)
    image.write_bytes(e.bytes)
    assert disk(capsys, str(image), "--check") == (1, [
        "inode 4 (/hello): nlink is 3 but 1 directory entry names it",
        "the bitmap marks block 5000 in use, but nothing uses it"], "")


def test_check_replays_a_committed_log_unless_told_not_to(
        image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    e = Editable(image.read_bytes())
    e.log([5000], [b"x"])       # installs a block nothing uses: the bitmap stays right
    image.write_bytes(e.bytes)
    committed = "the log holds a committed transaction of 1 blocks (recovery would install it)"
    assert disk(capsys, str(image), "--check")[:2] == (1, [committed])
    assert disk(capsys, str(image), "--check", "--no-replay")[:2] == (1, [committed])


def test_check_reports_a_bad_superblock_as_a_finding(
        image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image.write_bytes(image.read_bytes()[:100 * BSIZE])
    assert disk(capsys, str(image), "--check")[:2] == (1, [
        "the superblock says 8192 blocks but the image holds only 100"])


def one_line_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status, out, err = disk(capsys, *args)
    assert (status, out) == (2, [])
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err.strip()


def test_a_missing_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert one_line_error(capsys, str(tmp_path / "nope.img")) == \
        f"privlab: {tmp_path}/nope.img: cannot read disk image: No such file or directory"


def test_a_directory_instead_of_an_image(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert one_line_error(capsys, str(tmp_path)) == \
        f"privlab: {tmp_path}: is a directory, not a disk image"


def test_an_unreadable_image(image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image.chmod(0)
    if os.access(image, os.R_OK):
        pytest.skip("root reads a mode-000 file: nothing to test")
    assert one_line_error(capsys, str(image)) == \
        f"privlab: {image}: cannot read disk image: Permission denied"


@pytest.mark.parametrize("flag", [(), ("--check",)])
def test_a_file_that_is_not_an_image(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     flag: tuple[str, ...]) -> None:
    f = tmp_path / "zeros.img"
    f.write_bytes(bytes(8 * BSIZE))
    assert one_line_error(capsys, str(f), *flag) == \
        f"privlab: {f}: not a file-system image (magic 0x0, not 0x53464c50)"


def test_cat_of_a_missing_file_and_inode_outside_the_table(
        image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert one_line_error(capsys, str(image), "--cat", "/nope") == \
        f"privlab: {image}: /nope: no such file or directory"
    assert one_line_error(capsys, str(image), "--inode", "0") == \
        f"privlab: {image}: no inode 0 (inodes are 1 to 511)"


def test_no_replay_without_check(image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert one_line_error(capsys, str(image), "--no-replay") == \
        "privlab: --no-replay goes with --check"
