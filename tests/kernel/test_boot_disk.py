"""The disk the bundled system boots with (harness/boot/bootdisk.py) and `--add PATH`
(harness/boot/programs.py): the build's fs.img as a snapshot by default, an image of
every program when --add brings more, --drive instead, --no-drive for none."""

from __future__ import annotations

import mmap
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from machine.test_bad_input import assert_one_line_error

from privlab.api import Session
from privlab.boot import RUN_IMAGE_NAME, gather_programs
from privlab.boot.bootdisk import boot_drive
from privlab.build.images import Images
from privlab.devices.disk import SECTOR, Disk
from privlab.errors import BadInput
from privlab.fs import DiskImage, check, make_image
from privlab.machine import Stop


def privlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "privlab", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def whole_disk(s: Session) -> bytes:
    assert s.machine.disk is not None
    return s.machine.disk.contents()


@pytest.fixture
def added(tmp_path: Path, images: Images) -> Path:
    """A directory with hello as `greet.elf`, getpid as `hello` (shadowing the bundled
    hello), and a listing beside them, which --add skips."""
    d = tmp_path / "progs"
    d.mkdir()
    shutil.copy(images.users["hello"], d / "greet.elf")
    shutil.copy(images.users["getpid"], d / "hello")
    (d / "greet.dis").write_text("not an ELF\n")
    return d


# -- the API -------------------------------------------------------------------------------

def test_a_boot_gets_the_builds_fs_img_by_default(images: Images) -> None:
    s = Session.boot("hello", images=images)
    disk = s.machine.disk
    assert disk is not None and disk.snapshot
    assert (disk.path, disk.sectors) == (images.disk, images.disk.stat().st_size // SECTOR)
    assert whole_disk(s) == images.disk.read_bytes()
    s.close()


def test_writes_to_the_default_disk_stay_in_memory(images: Images) -> None:
    before = images.disk.read_bytes()
    s = Session.boot("hello", images=images)
    assert s.machine.disk is not None
    s.machine.disk.write(4, b"\xaa" * SECTOR)
    assert s.machine.disk.read(4, 1) == b"\xaa" * SECTOR
    s.close()
    assert images.disk.read_bytes() == before


def test_the_default_disk_is_mapped_and_a_rebuild_does_not_change_it(
        images: Images, tmp_path: Path) -> None:
    """The build's fs.img is mapped, not read (only the sectors the guest reads take
    memory); a rebuild renames a new file over it, which a running guest never sees."""
    built = tmp_path / "fs.img"
    shutil.copy(images.disk, built)
    before = built.read_bytes()
    programs = gather_programs(images.users)
    drive = boot_drive(built, programs)
    assert drive is not None and isinstance(drive.content, mmap.mmap)
    disk = Disk(drive)
    new = tmp_path / "fs.img.new"
    new.write_bytes(b"\x55" * len(before))
    new.replace(built)                         # as the build installs a new image
    assert disk.contents() == before
    again = boot_drive(built, programs)        # a new run maps the new image
    assert again is not None and again.content is not None
    assert again.content[:4] == b"\x55" * 4


def test_with_the_disk_the_kernel_loads_the_program_from_it(images: Images) -> None:
    """The same console either way; with the disk, the kernel's reads of it (superblock,
    log, directory, hello's inode and blocks) add supervisor external interrupts from
    the PLIC, each followed by an sret, before hello starts; without it there are none."""
    with_disk = Session.boot("hello", images=images)
    without = Session.boot("hello", images=images, bundled_disk=False)
    results = [s.run(50_000_000) for s in (with_disk, without)]
    assert without.machine.disk is None
    assert [r.stop for r in results] == [Stop.HALT, Stop.HALT]
    assert with_disk.console == without.console == "Hello, world!\n"

    def names(s: Session) -> list[str]:
        return [e.to_json()["name"] if e.to_json()["kind"] == "trap" else
                e.to_json()["insn"] for e in s.events]

    def without_disk_interrupts(seq: list[str]) -> list[str]:
        out, skip = [], False
        for n in seq:
            if n == "s_external":
                skip = True          # and the sret that returns from it
            elif skip:
                assert n == "sret"
                skip = False
            else:
                out.append(n)
        return out

    got, plain = names(with_disk), names(without)
    assert got.count("s_external") >= 5 and "s_external" not in plain
    assert without_disk_interrupts(got) == plain


def test_a_drive_replaces_the_default_disk(images: Images, tmp_path: Path) -> None:
    image = tmp_path / "mine.img"
    image.write_bytes(make_image({"x": b"x"}))
    s = Session.boot("hello", images=images, drive=f"{image},snapshot=on")
    assert s.machine.disk is not None and s.machine.disk.path == image
    s.close()


def test_added_programs_join_the_initrd_and_a_disk_made_for_the_run(
        images: Images, added: Path) -> None:
    s = Session.boot("greet", images=images, add=[added])
    assert s.machine.disk is not None and str(s.machine.disk.path) == RUN_IMAGE_NAME
    img = DiskImage(whole_disk(s))
    assert [e.path for e in img.walk()] == ["/", *(f"/{n}" for n in sorted(
        {*images.users, "greet"}))]
    assert img.read_path("greet") == images.users["hello"].read_bytes()
    assert img.read_path("hello") == images.users["getpid"].read_bytes()
    assert check(img) == []
    assert s.notes == (f"--add {added}/hello replaces the bundled program 'hello'",)
    assert s.run(50_000_000).stop is Stop.HALT
    assert s.console == "Hello, world!\n"


def test_a_user_elf_by_path_joins_the_disk_too(images: Images, added: Path) -> None:
    s = Session.boot(str(added / "greet.elf"), images=images)
    assert DiskImage(whole_disk(s)).read_path("greet") == images.users["hello"].read_bytes()
    s.close()


# -- what --add takes ------------------------------------------------------------------

def test_a_directory_adds_its_elf_files_in_name_order(images: Images, added: Path) -> None:
    p = gather_programs(images.users, [added])
    assert p.added == ("greet", "hello")
    assert p.paths["greet"] == added / "greet.elf"
    assert list(p.files)[-1] == "greet"        # after the bundled ones, in the initrd too


def test_add_refuses_a_missing_path(tmp_path: Path, images: Images) -> None:
    with pytest.raises(BadInput, match=f"^--add {tmp_path}/nope.elf: no such file or "
                                       "directory$"):
        gather_programs(images.users, [tmp_path / "nope.elf"])


def test_add_refuses_a_file_that_is_not_an_elf(tmp_path: Path, images: Images) -> None:
    (tmp_path / "t.txt").write_text("hi")
    with pytest.raises(BadInput, match=f"^--add {tmp_path}/t.txt: not an ELF file$"):
        gather_programs(images.users, [tmp_path / "t.txt"])


def test_add_refuses_a_directory_without_elf_files(tmp_path: Path, images: Images) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(BadInput, match=f"^--add {tmp_path}: no ELF files in this directory$"):
        gather_programs(images.users, [tmp_path])


def test_two_added_programs_of_one_name(tmp_path: Path, images: Images, added: Path) -> None:
    other = tmp_path / "greet"
    shutil.copy(images.users["hello"], other)
    with pytest.raises(BadInput, match=r"^--add: two programs named 'greet': .*/greet.elf "
                                       r"and .*/greet$"):
        gather_programs(images.users, [added, other])


# -- the command line ------------------------------------------------------------------

def test_run_add_dir_runs_a_program_under_its_new_name(added: Path) -> None:
    p = privlab("run", "--add", str(added / "greet.elf"), "--user", "greet")
    assert (p.returncode, p.stdout, p.stderr) == (0, "Hello, world!\n", "")


def test_run_options_after_the_program_are_its_arguments(added: Path) -> None:
    """Everything after `--user PROG` is PROG's: `--add` there is hello's."""
    p = privlab("run", "--user", "hello", "--add", str(added))
    assert (p.returncode, p.stdout) == (0, f"Hello, world!\nargv[1] = --add\n"
                                           f"argv[2] = {added}\n")


def test_an_added_program_shadowing_a_bundled_one_wins_with_a_note(added: Path) -> None:
    p = privlab("run", "--add", str(added), "--user", "hello", "3")
    assert p.returncode == 0
    assert p.stdout == "getpid: 3 calls, pid 1\n"
    assert p.stderr == f"privlab: note: --add {added}/hello replaces the bundled program " \
                       "'hello'\n"


def test_trace_takes_add_too(added: Path) -> None:
    p = privlab("trace", "--format", "calls", "--add", str(added / "greet.elf"),
                "--user", "greet")
    assert p.returncode == 0, p.stderr
    assert 'write(1, "Hello, world!\\n", 14)' in p.stdout


def test_run_add_a_missing_path(tmp_path: Path) -> None:
    assert_one_line_error(privlab("run", "--add", str(tmp_path / "nope"), "--user", "hello"),
                          f"--add {tmp_path}/nope: no such file or directory")


def test_run_add_a_file_that_is_not_an_elf(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("hello\n")
    assert_one_line_error(privlab("run", "--add", str(f), "--user", "hello"),
                          f"--add {f}: not an ELF file")


def test_add_with_bios_none(added: Path, images: Images) -> None:
    assert_one_line_error(privlab("run", "--bios", "none", "--kernel", str(images.kernel),
                                  "--add", str(added)),
                          "--add needs the bundled firmware and kernel, not --bios none")


def test_drive_and_no_drive_together(tmp_path: Path) -> None:
    assert_one_line_error(privlab("run", "--drive", str(tmp_path / "x.img"), "--no-drive"),
                          "argument --no-drive: not allowed with argument --drive")


def test_an_added_name_longer_than_a_directory_entry(tmp_path: Path, images: Images) -> None:
    """One rule for the initrd and the disk: with or without a drive, a name a
    directory entry cannot hold is refused before the boot."""
    long = tmp_path / f"{'a_very_long_program_name' * 3}.elf"
    shutil.copy(images.users["hello"], long)
    for drive in ((), ("--no-drive",)):
        assert_one_line_error(privlab("run", *drive, "--add", str(long), "--user", "hello"),
                              f"{long}: the program name '{long.stem}' is 72 bytes")
