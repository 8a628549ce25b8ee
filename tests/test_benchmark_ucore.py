"""benchmarks/ucore_chapters.py's own logic, without the course's repository: which
chapter a directory is, the command line `make run` would run (taken from a Makefile
shaped like the course's), and the result lines two machines must agree on."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from privlab.paths import REPO_ROOT

# The shape of a chapter's Makefile: its firmware set with `:=`, its run target's
# recipe `$(QEMU) $(QEMUOPTS)`, a kernel whose first process is INIT_PROC, a disk
# made by a rule of its own.
MAKEFILE = """\
INIT_PROC ?= usershell
BOOTLOADER := ./bootloader/rustsbi-qemu.bin
QEMU = qemu-system-riscv64
QEMUOPTS = -nographic -machine virt -bios $(BOOTLOADER) -kernel build/kernel \\
\t-drive file=nfs/fs-copy.img,if=none,format=raw,id=x0

build/kernel: .FORCE
\t@mkdir -p build
\t@echo $(INIT_PROC) > build/kernel

.FORCE:

nfs/fs-copy.img: nfs/fs.img
\t@cp $< $@

run: build/kernel nfs/fs-copy.img
\t$(QEMU) $(QEMUOPTS)
"""


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    try:
        import ucore_chapters
        yield ucore_chapters
    finally:
        sys.path.remove(str(REPO_ROOT / "benchmarks"))


def test_a_chapter_is_named_by_its_prefix_or_its_directory(bench: ModuleType,
                                                           tmp_path: Path) -> None:
    for name in ("uc8", "course"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "Makefile").write_text(MAKEFILE)
    assert bench.chapter_of(f"6:{tmp_path / 'course'}") == bench.Chapter(6, tmp_path / "course")
    assert bench.chapter_of(str(tmp_path / "uc8")).number == 8
    with pytest.raises(SystemExit, match="which chapter"):
        bench.chapter_of(str(tmp_path / "course"))


def test_a_directory_without_a_makefile_is_one_line_of_error(bench: ModuleType,
                                                             tmp_path: Path) -> None:
    for arg in (str(tmp_path / "uc3"), f"3:{tmp_path}"):
        with pytest.raises(SystemExit, match=r"no Makefile \(a chapter's"):
            bench.chapter_of(arg)


def test_usertests_are_the_first_process_from_chapter_5_on(bench: ModuleType) -> None:
    fw = Path("/fw.bin")
    assert bench.Chapter(3, Path()).make_args(fw) == ["BOOTLOADER=/fw.bin"]
    assert bench.Chapter(5, Path()).make_args(fw) == ["BOOTLOADER=/fw.bin",
                                                      "INIT_PROC=ch5b_usertest"]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_command_timed_is_what_make_run_runs(bench: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text(MAKEFILE)
    (tmp_path / "nfs").mkdir()
    (tmp_path / "nfs" / "fs.img").write_bytes(b"disk")
    chapter = bench.Chapter(8, tmp_path)
    args = bench.command_line(chapter, Path("/fw.bin"))
    assert args == ["-nographic", "-machine", "virt", "-bios", "/fw.bin", "-kernel",
                    "build/kernel", "-drive", "file=nfs/fs-copy.img,if=none,format=raw,id=x0"]
    # built with the chapter's usertests as its first process, and its disk made
    assert (tmp_path / "build" / "kernel").read_text() == "ch8b_usertest\n"
    assert (tmp_path / "nfs" / "fs-copy.img").read_bytes() == b"disk"
    # and each run starts from the disk as built
    (tmp_path / "nfs" / "fs-copy.img").write_bytes(b"written by the last run")
    bench.fresh_disk(tmp_path)
    assert (tmp_path / "nfs" / "fs-copy.img").read_bytes() == b"disk"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_failed_build_names_the_chapter_and_shows_makes_output(
        bench: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("run:\n\t@echo no compiler; false\n")
    with pytest.raises(SystemExit, match="chapter 2: the build failed:\nno compiler\n"):
        bench.command_line(bench.Chapter(2, tmp_path), Path("/fw.bin"))


def test_results_compare_without_their_numbers(bench: ModuleType) -> None:
    qemu = b"get_time OK! 342\nTest sleep OK!\nboot 0.5 s\nforktest2 test passed!\n"
    ours = b"forktest2 test passed!\nget_time OK! 10553\nTest sleep OK!\n"
    assert bench.verdicts(ours) == bench.verdicts(qemu)
    assert bench.verdicts(b"Test sleep FAILED\n") != bench.verdicts(b"Test sleep OK!\n")
    assert bench.verdicts(b"Test sleep OK!\nTest sleep OK!\n") != \
        bench.verdicts(b"Test sleep OK!\n")
    assert not bench.verdicts(b"[PANIC 1] os/proc.c:119: all app are over!\n")
