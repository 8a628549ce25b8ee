"""Program names as long as a course's own (uCore-Tutorial-Test has __ch2_bad_address,
ch6b_filetest_simple, ch8b_spin_mut_race): a directory entry holds DIRSIZ bytes, and
every name of up to that many runs by its whole name, on `--user`, through `--add DIR`,
exec'd from the shell and from another program, found in the initrd and on the disk."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from privlab.abi.fs_layout import DIRSIZ
from privlab.boot import gather_programs
from privlab.boot.initrd import pack_initrd, unpack_initrd
from privlab.build.images import Images
from privlab.fs import DiskImage, make_image

# 15, 20 and 32 bytes, as the course names run, and the longest there is.
NAMES = ("ch2b_hello_worl", "ch6b_filetest_simple", "__ch8b_spin_mut_race_long_name__",
         "x" * DIRSIZ)


def privlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "privlab", *args], capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.fixture
def progs(tmp_path: Path, images: Images) -> Path:
    """hello under each long name (getpid under the 15-byte one, so that a kernel that
    compared only a prefix would run the wrong program for some name)."""
    d = tmp_path / "progs"
    d.mkdir()
    for name in NAMES:
        shutil.copy(images.users["hello"], d / f"{name}.elf")
    shutil.copy(images.users["getpid"], d / "ch2b_hello_wor.elf")
    return d


def test_the_names_are_15_20_32_and_dirsiz_bytes() -> None:
    assert [len(n) for n in NAMES] == [15, 20, 32, DIRSIZ]


def test_long_names_pack_into_the_initrd_and_the_disk(progs: Path, images: Images) -> None:
    programs = gather_programs(images.users, [progs])
    assert set(NAMES) <= set(programs.files)
    entries = {e.name: e.data for e in unpack_initrd(pack_initrd(programs.files))}
    assert all(entries[n] == images.users["hello"].read_bytes() for n in NAMES)
    disk = DiskImage(make_image(programs.files))
    for name in NAMES:
        assert disk.read_path(f"/{name}") == images.users["hello"].read_bytes()


def test_a_name_one_byte_too_long_is_one_line(tmp_path: Path, images: Images) -> None:
    d = tmp_path / "too"
    d.mkdir()
    name = "n" * (DIRSIZ + 1)
    shutil.copy(images.users["hello"], d / f"{name}.elf")
    r = privlab("run", "--quiet", "--add", str(d), "--user", "hello")
    assert r.returncode == 2
    assert r.stderr.splitlines() == [
        f"privlab: {d / name}.elf: the program name {name!r} is {DIRSIZ + 1} bytes; a "
        f"program name is 1 to {DIRSIZ} bytes, as a directory entry holds"]
    r = privlab("run", "--no-drive", "--user", str(d / f"{name}.elf"))
    assert (r.returncode, len(r.stderr.splitlines())) == (2, 1), r.stderr


@pytest.mark.parametrize("name", NAMES[:3])
def test_add_dir_then_user_by_a_long_name(progs: Path, name: str) -> None:
    r = privlab("run", "--add", str(progs), "--user", name)
    assert (r.returncode, r.stdout) == (0, "Hello, world!\n"), r.stderr


def test_user_names_a_long_named_elf_by_its_path(progs: Path) -> None:
    r = privlab("run", "--user", str(progs / f"{NAMES[3]}.elf"))
    assert (r.returncode, r.stdout) == (0, "Hello, world!\n"), r.stderr


def test_the_15_byte_name_is_not_a_prefix_match(progs: Path) -> None:
    """ch2b_hello_wor (getpid) beside ch2b_hello_worl (hello): each runs as itself."""
    r = privlab("run", "--add", str(progs), "--user", "ch2b_hello_wor")
    assert r.returncode == 0 and "Hello" not in r.stdout and "pid" in r.stdout, r.stdout


def test_exec_from_another_program_and_from_the_shell(progs: Path) -> None:
    r = privlab("run", "--add", str(progs), "--user", "exec", NAMES[1])
    assert (r.returncode, r.stdout) == (0, f"exec: running {NAMES[1]}\nHello, world!\n"), \
        r.stderr
    script = "".join(f"{n}\n" for n in NAMES) + "ls\n"
    r = privlab("run", "--add", str(progs), "--input", script.replace("\n", "\\n"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("Hello, world!") == len(NAMES), r.stdout
    listed = {line.split()[0] for line in r.stdout.splitlines()
              if line.split() and line.split()[0] in NAMES}
    assert listed == set(NAMES), r.stdout
