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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.abi.platform import parse_defines
from harness.boot.initrd import pack_initrd
from harness.errors import BadInput
from harness.paths import KERNEL_DIR

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
    """What to load for `privlab run --user PROG ARGS...` (or, program None, the shell)."""

    initrd: bytes
    bootargs: str
    program: str | None  # its name in the initrd; None: init starts the shell


def user_boot(users: Mapping[str, Path], prog: str | None, args: Sequence[str] = (), *,
              quiet: bool = True, flags: Sequence[str] = ()) -> UserBoot:
    """PROG is a bundled program's name (a key of `users`, e.g. Images.users) or a path
    to a user ELF, which joins the bundled programs in the initrd under its file name.
    With PROG None the initrd holds the bundled programs and init starts the shell,
    with the boot banner (`quiet` applies only to a program run on its own)."""
    files = {name: path.read_bytes() for name, path in sorted(users.items())}
    if prog is None:
        if args:
            raise BadInput(f"unexpected arguments: {' '.join(args)} (use --user PROG ARGS)")
        return UserBoot(pack_initrd(files), make_bootargs(flags=flags), None)
    name = prog
    if prog not in users:
        path = Path(prog)
        if not path.is_file():
            raise BadInput(f"{prog}: not a bundled program ({', '.join(sorted(users))}) "
                           "nor a file")
        data = path.read_bytes()
        if data[:4] != b"\x7fELF":
            raise BadInput(f"{prog}: not an ELF file")
        name = path.name.removesuffix(".elf")
        files[name] = data
    words = (["quiet"] if quiet else []) + [f for f in flags if not (quiet and f == "quiet")]
    return UserBoot(pack_initrd(files), make_bootargs(name, args, flags=words), name)
