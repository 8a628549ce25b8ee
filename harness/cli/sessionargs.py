"""What to boot, for the inspection commands (trace, pagetable, translate, inspect).

The same choices as `privlab run`: the bundled system with `--user PROG [ARGS...]`
as its first process (and `--add PATH` programs beside the bundled ones), another
S-mode kernel on the bundled firmware (`--kernel`), or a bare-metal ELF (`--bios none
--kernel X.elf`). The bundled firmware boots with the build's disk image unless
`--drive` gives another or `--no-drive` none (harness/boot/bootdisk.py).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from harness.abi.syscall_table import ABIS
from harness.api.points import POINT_HELP
from harness.errors import BadInput

if TYPE_CHECKING:
    from harness.api import Session
    from harness.devices.disk import Drive
    from harness.kernelinfo.symbols import Location
    from harness.machine import RunResult

# Every command's parser is built on each run (harness/cli/main.py): what follows imports
# the machine, the API and the inspectors only inside the functions that use them.

__all__ = ["add_at_argument", "add_drive_arguments", "add_programs_argument",
           "add_target_arguments", "drive_of", "input_bytes", "open_session", "positive_int",
           "refuse_bare", "say_notes", "session_at", "symbolize_now"]


def positive_int(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def icount_shift(text: str) -> int:
    from harness.machine.machine import MAX_ICOUNT_SHIFT

    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value <= MAX_ICOUNT_SHIFT:
        raise argparse.ArgumentTypeError(f"must be 0 to {MAX_ICOUNT_SHIFT}: {text!r}")
    return value


def add_drive_arguments(g: argparse._ActionsContainer) -> None:
    """--drive (or --no-drive), --virtio-legacy and --icount-shift: the board, the same
    for run, trace, inspect and the rest."""
    which = g.add_mutually_exclusive_group()
    which.add_argument("--drive", metavar="IMAGE[,snapshot=on]",
                       help="a raw disk image for virtio-blk in virtio-mmio slot 0 (QEMU: "
                            "-drive file=IMAGE,format=raw,if=none,id=x0 -device "
                            "virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0); writes reach "
                            "the file unless snapshot=on. Default with the bundled firmware: "
                            "the build's fs.img (with any --add programs), writes kept in "
                            "memory")
    which.add_argument("--no-drive", action="store_true",
                       help="no disk, not even the build's fs.img")
    g.add_argument("--virtio-legacy", action="store_true",
                   help="version 1 (legacy) virtio-mmio transports, as QEMU's "
                        "-global virtio-mmio.force-legacy=true")
    g.add_argument("--icount-shift", type=icount_shift, metavar="N", default=0,
                   help="guest time per instruction: 2^N ns, 0 to 10 (default 0: 1 ns), "
                        "as QEMU's -icount shift=N; a larger N makes timer-paced guests "
                        "(sleeps, time slices) reach their deadlines in fewer instructions")


def drive_of(args: Any) -> Drive | None:
    from harness.devices.disk import parse_drive

    return parse_drive(args.drive) if args.drive is not None else None


def add_programs_argument(g: argparse._ActionsContainer) -> None:
    g.add_argument("--add", action="append", default=[], metavar="PATH",
                   help="a user ELF, or a directory of them, to join the bundled programs "
                        "(in the initrd and the disk) under its file name; repeat for more")


def refuse_bare(args: Any) -> None:
    """--user and --add need the bundled firmware and kernel (with --bios none)."""
    for flag, given in (("--user", args.user is not None), ("--add", bool(args.add))):
        if given:
            raise BadInput(f"{flag} needs the bundled firmware and kernel, not --bios none")


def say_notes(notes: Sequence[str]) -> None:
    for note in notes:
        print(f"privlab: note: {note}", file=sys.stderr)


def add_target_arguments(p: argparse.ArgumentParser, default_user: str | None = None) -> None:
    g = p.add_argument_group("what to run")
    g.add_argument("--user", metavar="PROG",
                   help="run PROG (a bundled program or a user ELF) as the first process; "
                        "its arguments follow" + (f" (default: {default_user})"
                                                  if default_user else ""))
    g.add_argument("args", nargs="*", metavar="ARG", help=argparse.SUPPRESS)
    add_programs_argument(g)
    g.add_argument("--kernel", metavar="ELF", help="S-mode kernel (default: the bundled one)")
    g.add_argument("--bios", metavar="none",
                   help="'none': run --kernel as a bare-metal program from M-mode")
    g.add_argument("--arch", choices=("rv64", "rv32"), default="rv64",
                   help="architecture of the bundled system (default rv64)")
    g.add_argument("--ram", type=positive_int, metavar="MiB", default=128, help="RAM size")
    g.add_argument("--input", metavar="TEXT",
                   help="console input (\\n for newline), for programs that read")
    g.add_argument("--max-insns", type=positive_int, metavar="N",
                   help="stop after N instructions")
    g.add_argument("--abi", choices=tuple(ABIS), default="rcore",
                   help="the system-call table calls are decoded with: rcore (the bundled "
                        "kernel's, rCore/uCore numbering; default) or xv6")
    add_drive_arguments(g)


def open_session(args: Any, capture: bool = False, default_user: str | None = None,
                 capture_limit: int | None = None, notes: bool = True) -> Session:
    """Boot what the arguments ask for; `default_user` runs when --user is not given
    (with the bundled firmware and kernel only). With `notes`, the boot's notes (an
    --add that replaces a bundled program) go to stderr."""
    from harness.api import Session

    if args.bios not in (None, "none"):
        raise BadInput("--bios takes only 'none' here (the bundled firmware is the default)")
    text = input_bytes(args.input) if args.input is not None else b""
    if args.bios == "none":
        if args.kernel is None:
            raise BadInput("--bios none needs --kernel ELF (the program to run from M-mode)")
        if args.args:
            raise BadInput("--user needs the bundled firmware and kernel, not --bios none")
        refuse_bare(args)
        return Session.bare(args.kernel, capture=capture, ram_mib=args.ram, console_input=text,
                            input_ends=True, capture_limit=capture_limit,
                            drive=drive_of(args), virtio_legacy=args.virtio_legacy,
                            icount_shift=args.icount_shift, abi=args.abi)
    if args.args and args.user is None:
        raise BadInput(f"unexpected arguments: {' '.join(args.args)} (use --user PROG ARGS)")
    s = Session.boot(args.user or default_user, args.args, arch=args.arch, capture=capture,
                     ram_mib=args.ram, kernel=args.kernel, console_input=text,
                     input_ends=True, capture_limit=capture_limit,
                     drive=drive_of(args), virtio_legacy=args.virtio_legacy,
                     icount_shift=args.icount_shift, abi=args.abi, add=args.add,
                     bundled_disk=not args.no_drive)
    if notes:
        say_notes(s.notes)
    return s


def input_bytes(text: str) -> bytes:
    """--input TEXT as the guest reads it: backslash escapes (\\n) decoded."""
    return text.encode().decode("unicode_escape").encode("latin-1")


def add_at_argument(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--at", metavar="POINT", default=default,
                   help=f"where to stop: {POINT_HELP} (default: {default})")


def session_at(args: Any, capture: bool = False) -> tuple[Session, RunResult]:
    """Boot as the arguments say and run to --at; BadInput if it is never reached."""
    from harness.api import run_to

    s = open_session(args, capture=capture, default_user="hello")
    return s, run_to(s, args.at, args.max_insns)


def symbolize_now(s: Session) -> Callable[[int], Location]:
    """Symbolize through the current satp (for the trampoline's alias)."""
    from harness.abi.csr import Csr

    satp = s.machine.hart.csr(Csr.SATP)
    return lambda addr: s.info.symbolize(addr, satp, s.machine.memory)
