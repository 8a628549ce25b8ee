"""The kernel command line (`/chosen bootargs`), and what `privlab run --user` boots.

Format (parsed by kernel/bootargs.c; docs/kernel/1-boot.md): whitespace-separated
words. Flags first (``quiet``: no boot banner; ``vmprint``; ``backtrace``), then
optionally ``init=PROG`` followed by PROG's arguments. With ``init=``, the kernel runs
PROG as the first process and powers off when it exits, with PROG's exit status
(low 8 bits) as the machine's exit status. Without it, the first process is ``init``,
which starts the shell. Words cannot contain whitespace; the whole line must fit in
the kernel's BOOTARGS_MAX (255 bytes).
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..abi.platform import parse_defines
from ..errors import BadInput
from ..paths import KERNEL_DIR
from .initrd import pack_initrd
from .programs import ELF_MAGIC, Programs, gather_programs, program_name

__all__ = ["UserBoot", "make_bootargs", "user_boot"]

KERNEL_FLAGS = ("quiet", "vmprint", "backtrace")
BOOTARGS_MAX = parse_defines(KERNEL_DIR / "param.h")["BOOTARGS_MAX"]


def make_bootargs(program: str | None = None, args: Sequence[str] = (), *,
                  flags: Sequence[str] = ()) -> str:
    """Build a bootargs string; BadInput if a word has whitespace or it is too long."""
    words = list(flags)
    if program is not None:
        words += [f"init={program}", *args]
    elif args:
        raise BadInput("program arguments need a program")
    for word in words:
        if not word or any(c.isspace() for c in word):
            raise BadInput(f"boot argument {word!r} is empty or contains whitespace")
    line = " ".join(words)
    if len(line.encode()) >= BOOTARGS_MAX:
        raise BadInput(f"boot arguments are {len(line)} bytes; the kernel keeps at most "
                       f"{BOOTARGS_MAX - 1}")
    return line


@dataclass(frozen=True)
class UserBoot:
    """What to load for `privlab run --user PROG ARGS...` (or, program None, the shell):
    the initrd and kernel command line, and the programs in the initrd (which the
    disk image holds too, harness/boot/bootdisk.py). The initrd is either packed for
    this boot (`packed`) or the build's file of exactly these programs (`built`)."""

    packed: bytes | None
    built: Path | None
    bootargs: str
    program: str | None  # its name in the initrd; None: init starts the shell
    programs: Programs

    @property
    def initrd(self) -> bytes:
        """The initrd's bytes."""
        if self.packed is not None:
            return self.packed
        assert self.built is not None
        return self.built.read_bytes()

    def initrd_image(self) -> bytes | mmap.mmap:
        """The initrd as a machine loads it: the build's file mapped, not read. The
        bundled initrd is megabytes, and reading it into a new buffer cost each
        `--user` run 2-3 ms of page faults before it was copied again into the guest's
        RAM. The mapping is private: nothing reaches the file, and the build replaces
        the file rather than rewriting it (build/cache.py write_if_changed)."""
        if self.packed is not None:
            return self.packed
        assert self.built is not None
        with open(self.built, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return b""
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)


def user_boot(users: Mapping[str, Path], prog: str | None, args: Sequence[str] = (), *,
              quiet: bool = True, flags: Sequence[str] = (),
              add: Sequence[str | Path] = (), initrd: Path | None = None) -> UserBoot:
    """PROG is a program's name (a key of `users`, e.g. Images.users, or of a program
    `add` brings, harness/boot/programs.py) or a path to a user ELF, which joins the
    others in the initrd under its file name. With PROG None the initrd holds the
    programs and init starts the shell, with the boot banner (`quiet` applies only to
    a program run on its own). `initrd` is the build's initrd of exactly `users`
    (Images.initrd, packed as this packs them): a boot that adds no program loads it
    as it is instead of reading and packing every program again."""
    programs = gather_programs(users, add)
    if prog is None:
        if args:
            raise BadInput(f"unexpected arguments: {' '.join(args)} (use --user PROG ARGS)")
        return UserBoot(*_initrd(programs, initrd), make_bootargs(flags=flags), None, programs)
    name = prog
    if prog not in programs.files:
        path = Path(prog)
        if not path.is_file():
            raise BadInput(f"{prog}: not a bundled program ({', '.join(sorted(users))}) "
                           "nor a file")
        data = path.read_bytes()
        if data[:len(ELF_MAGIC)] != ELF_MAGIC:
            raise BadInput(f"{prog}: not an ELF file")
        name = program_name(path)
        programs = programs.with_program(name, path, data)
    words = (["quiet"] if quiet else []) + [f for f in flags if not (quiet and f == "quiet")]
    return UserBoot(*_initrd(programs, initrd), make_bootargs(name, args, flags=words), name,
                    programs)


def _initrd(programs: Programs, built: Path | None) -> tuple[bytes | None, Path | None]:
    """The initrd of these programs, packed or (when they are the bundled ones) the
    build's file."""
    if built is not None and not programs.added:
        return None, built
    return pack_initrd(programs.files), None
