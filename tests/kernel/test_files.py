"""The file system from user space, on privlab: fstests (userland/fstests.c) on both
XLENs, and the tools (ls, cat, echo, wc, grep, mkdir, rm, ln) with the shell's cd,
redirections and pipelines end to end, with exact console expectations.

Every boot gets a fresh image (harness/fs/mkfs.py) holding only the programs it needs,
and an empty initrd, so every program runs from the disk and the inode numbers and
sizes ls prints follow from the image: mkfs numbers the files from 2 in name order, and
the kernel gives a new file the lowest free inode. After each run fsck must find the
disk consistent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from privlab.abi.fs_layout import DIRENT_SIZE, ROOTINO
from privlab.boot import pack_initrd
from privlab.build.images import Images
from privlab.devices import Console, ScriptedInput
from privlab.devices.disk import Drive
from privlab.errors import BadInput
from privlab.fs import DiskImage, check, make_image
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_system

BUDGET = 20_000_000_000
SMALL_DISK = 2048        # blocks: room for the large file, and quick to fill (disk_full)


@dataclass(frozen=True)
class Run:
    console: str
    status: int
    disk: bytes


def boot_with_disk(images: Images, programs: list[str], bootargs: str, stdin: str = "",
                   size_blocks: int = SMALL_DISK) -> Run:
    files = {name: images.users[name].read_bytes() for name in programs}
    image = make_image(files, size_blocks=size_blocks)
    m = Machine(images.arch.xlen, console=Console(), uart_input=ScriptedInput(stdin.encode()),
                drive=Drive.in_memory(image, "test_files.img"))
    try:
        boot_system(m, load_elf(images.firmware), load_elf(images.kernel), pack_initrd({}),
                    bootargs)
        r = m.run(max_insns=BUDGET)
        assert r.stop is Stop.HALT, f"{r.message}\n{m.console.text()[-2000:]}"
        assert m.disk is not None and r.exit_status is not None
        return Run(m.console.text(), r.exit_status, m.disk.contents())
    finally:
        m.close()


# -- fstests -------------------------------------------------------------------------------

FSTESTS = [
    "create_write_read", "create_existing", "o_trunc", "o_append", "append_concurrent",
    "read_at_eof", "offset_shared_fork", "offset_separate_opens", "dup_shares_offset",
    "dup_lowest_fd", "link_nlink", "link_errors", "unlink_open_file", "mkdir_chdir",
    "create_in_removed_dir", "chdir_dotdot_root", "getdents_lists", "rmdir_nonempty",
    "big_directory", "concurrent_create", "pipe_data", "pipe_eof", "pipe_no_reader",
    "pipe_reader_gone", "fstat_types", "exec_path", "exec_errors", "large_file", "bad_fd",
    "bad_buffer", "bad_path_pointer", "path_too_long", "name_too_long",
    "open_dir_for_writing", "access_modes", "too_many_files", "inode_table_full",
    "disk_full",
]
FSTESTS_PROGRAMS = ["echo", "fstests", "hello"]   # exec_path runs /hello and /echo


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_fstests_all_pass_and_leave_a_consistent_disk_as_they_found_it(
        arch: str, request: pytest.FixtureRequest) -> None:
    images: Images = request.getfixturevalue("images" if arch == "rv64" else "images32")
    run = boot_with_disk(images, FSTESTS_PROGRAMS, "quiet init=fstests")
    expected = "".join(f"PASS {name}\n" for name in FSTESTS)
    assert run.console == expected + f"fstests: {len(FSTESTS)} passed, 0 failed\n"
    assert run.status == 0
    assert check(run.disk) == []
    names = [e.name for e in DiskImage(run.disk).listdir(ROOTINO)]
    assert names == [".", "..", *FSTESTS_PROGRAMS]


def test_fstests_selects_cases_by_prefix(images: Images) -> None:
    run = boot_with_disk(images, FSTESTS_PROGRAMS, "quiet init=fstests pipe_e o_")
    assert run.console == ("PASS o_trunc\nPASS o_append\nPASS pipe_eof\n"
                           "fstests: 3 passed, 0 failed\n")


# -- the tools and the shell: one scripted session -------------------------------------

TOOLS = sorted(["init", "sh", "cat", "echo", "grep", "hello", "ln", "ls", "mkdir", "rm", "wc"])


@dataclass(frozen=True)
class Tree:
    """What ls shows of the session's disk: the programs as mkfs laid them out, then the
    files the session makes, numbered on from there."""

    sizes: dict[str, int]

    def ino(self, name: str) -> int:
        if name in self.sizes:
            return 2 + sorted(self.sizes).index(name)
        return 2 + len(self.sizes) + NEW_FILES.index(name)

    @staticmethod
    def line(name: str, kind: str, ino: int, size: int) -> str:
        return f"{name:<14} {kind:<4} {ino:>3} {size}\n"

    def program(self, name: str) -> str:
        return self.line(name, "file", self.ino(name), self.sizes[name])

    def root(self, *made: tuple[str, str, int]) -> str:
        """ls of the root: ".", "..", the programs, then `made` (name, kind, size)."""
        size = (2 + len(self.sizes) + len(made)) * DIRENT_SIZE
        return (self.line(".", "dir", ROOTINO, size) + self.line("..", "dir", ROOTINO, size)
                + "".join(self.program(n) for n in sorted(self.sizes))
                + "".join(self.line(n, k, self.ino(n), s) for n, k, s in made))


NEW_FILES = ["f", "d", "y", "count"]     # in the order the session makes them
D_SIZE = 3 * DIRENT_SIZE                 # ".", "..", y
Expect = str | Callable[[Tree], str]

HELP = ("built-ins: cd [DIR], exit [STATUS], help\n"
        "a command: PROGRAM [ARGS...] [< FILE] [> FILE | >> FILE]; cmd | cmd | ... a pipeline\n")

SESSION: list[tuple[str, Expect]] = [
    ("help", HELP + "programs in /: " + " ".join(TOOLS) + "\n"),
    ("echo hello > f", ""),
    ("cat f", "hello\n"),
    ("cat < f", "hello\n"),
    ("echo a >> f", ""),
    ("cat f", "hello\na\n"),
    ("cat f | wc", "2 2 8\n"),
    ("wc f /f", "2 2 8 f\n2 2 8 /f\n4 4 16 total\n"),
    ("ls | grep hello", lambda t: t.program("hello")),
    ("mkdir d", ""),
    ("cd d", ""),
    ("ls ..", lambda t: t.root(("f", "file", 8), ("d", "dir", 2 * DIRENT_SIZE))),
    ("echo x>y", ""),
    ("ls", lambda t: (t.line(".", "dir", t.ino("d"), D_SIZE)
                      + t.line("..", "dir", ROOTINO, (2 + len(t.sizes) + 2) * DIRENT_SIZE)
                      + t.line("y", "file", t.ino("y"), 2))),
    ("cat ../f | grep a | wc", "1 1 2\n"),
    ("echo one two three | cat | cat | cat | wc", "1 3 14\n"),
    ("cd ..", ""),
    ("ls f d/y", lambda t: t.line("f", "file", t.ino("f"), 8)
                           + t.line("d/y", "file", t.ino("y"), 2)),
    ("ln f g", ""),
    ("ls g", lambda t: t.line("g", "file", t.ino("f"), 8)),
    ("rm f", ""),
    ("cat g", "hello\na\n"),
    ("grep hello < g | wc > count", ""),
    ("cat count", "1 1 6\n"),
    ("grep ^h g", "hello\n"),
    ("grep a$ g", "a\n"),
    ("grep ^a$ g d/y", "g:a\n"),
    ("grep l g f", "g:hello\ngrep: f: cannot open\nsh: grep exited with status 1\n"),
    ("grep zzz g", "sh: grep exited with status 1\n"),
    ("cat nofile", "cat: nofile: cannot open\nsh: cat exited with status 1\n"),
    ("cat nofile | wc", "cat: nofile: cannot open\n0 0 0\nsh: cat exited with status 1\n"),
    ("cat d", "cat: d: is a directory\nsh: cat exited with status 1\n"),
    ("wc < nofile", "sh: nofile: cannot open\nsh: wc exited with status 1\n"),
    ("echo hi > d", "sh: d: cannot create\nsh: echo exited with status 1\n"),
    ("mkdir d", "mkdir: d: cannot create\nsh: mkdir exited with status 1\n"),
    ("rm nofile", "rm: nofile: cannot remove\nsh: rm exited with status 1\n"),
    ("rm d", "rm: d: cannot remove\nsh: rm exited with status 1\n"),  # not empty
    ("ln g g", "ln: g: cannot link to g\nsh: ln exited with status 1\n"),
    ("ls nofile", "ls: nofile: cannot open\nsh: ls exited with status 1\n"),
    ("cd nowhere", "sh: cd: nowhere: no such directory\n"),
    ("nope", "sh: nope: not found\nsh: nope exited with status 127\n"),
    ("cat | | wc", "sh: syntax error: empty command before |\n"),
    ("echo >", "sh: syntax error: no file after a redirection\n"),
    ("cat f |", "sh: syntax error: empty command after |\n"),
]
SESSION_STATUS = 3


@dataclass(frozen=True)
class Session:
    commands: list[tuple[str, str]]   # each command as echoed, and what followed it
    status: int
    disk: bytes
    tree: Tree


def transcript(console: str) -> list[tuple[str, str]]:
    """Split the console at the shell's prompts ("$ " at a line's start) into (the
    command as echoed, what followed it)."""
    pieces = re.split(r"^\$ ", console, flags=re.M)
    assert pieces[0] == "", f"output before the first prompt: {pieces[0]!r}"
    return [(cmd, rest) for cmd, rest in (p.split("\n", 1) for p in pieces[1:])]


@pytest.fixture(scope="module")
def session(images: Images) -> Session:
    """One boot for the whole script, as a user would type it: each command builds on
    the files the ones before made."""
    script = "".join(f"{cmd}\n" for cmd, _ in SESSION) + f"exit {SESSION_STATUS}\n"
    run = boot_with_disk(images, TOOLS, "quiet", stdin=script)
    tree = Tree({name: images.users[name].stat().st_size for name in TOOLS})
    return Session(transcript(run.console), run.status, run.disk, tree)


def test_the_session_ran_every_command_then_exit(session: Session) -> None:
    assert [cmd for cmd, _ in session.commands] == [cmd for cmd, _ in SESSION] + [
        f"exit {SESSION_STATUS}"]
    assert session.commands[-1][1] == ""
    assert session.status == SESSION_STATUS


@pytest.mark.parametrize("index", range(len(SESSION)), ids=[cmd for cmd, _ in SESSION])
def test_command_output(session: Session, index: int) -> None:
    command, expect = SESSION[index]
    got_command, output = session.commands[index]
    assert got_command == command
    assert output == (expect if isinstance(expect, str) else expect(session.tree))


def test_the_session_leaves_a_consistent_disk_holding_what_it_made(session: Session) -> None:
    assert check(session.disk) == []
    img = DiskImage(session.disk)
    assert img.read_path("/g") == b"hello\na\n"
    assert img.read_path("/d/y") == b"x\n"
    assert img.read_path("/count") == b"1 1 6\n"
    assert img.lookup("/g").nlink == 1          # f's inode, its other name removed
    assert img.lookup("/g").inum == session.tree.ino("f")
    with pytest.raises(BadInput):
        img.lookup("/f")


def test_help_lists_every_program_on_the_disk_wrapped_at_78_columns(images: Images) -> None:
    programs = sorted(images.users)
    run = boot_with_disk(images, programs, "quiet", stdin="help\nexit\n",
                         size_blocks=4 * SMALL_DISK)
    (cmd, out), _ = transcript(run.console)
    lines = out.splitlines()
    assert (cmd, lines[:2]) == ("help", HELP.splitlines()), run.console
    assert lines[2].startswith("programs in /: ") and len(lines) > 4, run.console
    assert all(len(line) <= 78 for line in lines[2:]), run.console
    assert all(line.startswith("  ") for line in lines[3:]), run.console
    assert " ".join(lines[2:]).split()[3:] == programs


def test_help_without_a_disk_says_the_programs_are_in_the_initrd(images: Images) -> None:
    m = Machine(64, console=Console(), uart_input=ScriptedInput(b"help\nexit\n"))
    try:
        boot_system(m, load_elf(images.firmware), load_elf(images.kernel),
                    images.initrd.read_bytes(), "quiet")
        r = m.run(max_insns=BUDGET)
    finally:
        m.close()
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    assert m.console.text() == ("$ help\n" + HELP + "programs: those in the initrd, by name "
                                "(no file system to list them from)\n$ exit\n")


def test_the_shell_without_a_disk_keeps_its_console(images: Images) -> None:
    # The initrd-only console that tests/kernel/test_privlab_kernel.py compares with
    # QEMU: the shell's programs are found in "/", which names the initrd's entries.
    m = Machine(64, console=Console(), uart_input=ScriptedInput(b"hello x\nnope\nexit 3\n"))
    try:
        boot_system(m, load_elf(images.firmware), load_elf(images.kernel),
                    images.initrd.read_bytes(), "quiet")
        r = m.run(max_insns=BUDGET)
    finally:
        m.close()
    assert (r.stop, r.exit_status) == (Stop.HALT, 3)
    assert m.console.text() == ("$ hello x\nHello, world!\nargv[1] = x\n"
                                "$ nope\nsh: nope: not found\nsh: nope exited with status 127\n"
                                "$ exit 3\n")
