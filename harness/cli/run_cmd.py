"""`privlab run`: boot the bundled system, an S-mode kernel on the bundled firmware, or
any bare-metal ELF, and run it to completion.

Exit status: the guest's (finisher or HTIF, or the --user program's); 124 when
--max-insns runs out; 3 when the guest gets stuck (trap storm, wfi with nothing to wake
it, misuse of a device); 2 for bad input; 130 on Ctrl-C; 0 when the console input (a
pipe, a file, --input) has ended and the guest keeps waiting for more, as `sh < script`
ends at the end of its script.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING

from harness.cli.sessionargs import (
    add_drive_arguments,
    add_programs_argument,
    drive_of,
    input_bytes,
    positive_int,
    refuse_bare,
    say_notes,
)
from harness.errors import BadInput

if TYPE_CHECKING:
    from harness.devices import Console
    from harness.devices.uart import InputSource
    from harness.machine import Machine
    from harness.machine.machine import RunResult

__all__ = ["register"]

MIB = 1 << 20


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="boot and run a kernel or a bare-metal ELF",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bios", metavar="none|FILE",
                   help="'none': run --kernel bare-metal from M-mode; FILE: M-mode firmware "
                        "ELF (default: the bundled firmware)")
    p.add_argument("--kernel", metavar="ELF", help="S-mode kernel (default: the bundled one)")
    p.add_argument("--user", metavar="PROG",
                   help="run PROG (a bundled program or a user ELF) as the first process "
                        "and exit with its status; arguments follow it")
    p.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    add_programs_argument(p)
    p.add_argument("--arch", choices=("rv64", "rv32"), default=None,
                   help="build architecture for the bundled system (default rv64)")
    p.add_argument("--ram", type=positive_int, metavar="MiB", default=128, help="RAM size")
    p.add_argument("--boot-flag", action="append", default=[], metavar="WORD",
                   help="a kernel boot argument before init= (vmprint, backtrace, "
                   "timer_hz=N, ...); repeat for more")
    p.add_argument("--max-insns", type=positive_int, metavar="N",
                   help="stop after N instructions (exit 124)")
    add_drive_arguments(p)
    p.add_argument("--trace-out", metavar="FILE.jsonl", help="write every trap and xRET")
    p.add_argument("--input", metavar="TEXT",
                   help="console input as a string (\\n for newline) instead of stdin")
    p.add_argument("--input-file", metavar="FILE", help="console input from a file")
    p.add_argument("--quiet", action="store_true", help="do not echo the console")
    p.add_argument("--gdb", metavar="[HOST:]PORT",
                   help="serve the GDB remote protocol on PORT (host 127.0.0.1 unless "
                        "given; port 0 picks a free one); see docs/gdb.md")
    p.add_argument("--wait", action="store_true",
                   help="with --gdb: hold the hart at reset until gdb attaches")
    p.set_defaults(func=run)


def _input(args: argparse.Namespace) -> InputSource:
    from harness.devices import ScriptedInput, StdinInput

    if args.input is not None and args.input_file is not None:
        raise BadInput("give --input or --input-file, not both")
    if args.input is not None:
        return ScriptedInput(input_bytes(args.input), final=True)
    if args.input_file is not None:
        path = Path(args.input_file)
        if not path.is_file():
            raise BadInput(f"{path}: no such file")
        return ScriptedInput(path.read_bytes(), final=True)
    return StdinInput()


def _trace_sink(path: str | None) -> IO[str] | None:
    if path is None:
        return None
    p = Path(path)
    if not p.parent.is_dir():
        raise BadInput(f"{p}: directory {p.parent} does not exist")
    try:
        return p.open("w")
    except OSError as e:
        raise BadInput(f"{p}: cannot write: {e.strerror}") from e


def _boot(args: argparse.Namespace, console: Console, uart_input: InputSource) -> Machine:
    from harness.machine.assemble import new_bare
    from harness.machine.loader import load_elf

    ram = args.ram * MIB
    if args.bios == "none":
        if args.kernel is None:
            raise BadInput("--bios none needs --kernel ELF (the program to run from M-mode)")
        refuse_bare(args)
        return new_bare(load_elf(args.kernel), ram=ram, console=console, uart_input=uart_input,
                        drive=drive_of(args), virtio_legacy=args.virtio_legacy,
                        icount_shift=args.icount_shift)
    return _boot_system(args, ram, console, uart_input)


def _boot_system(args: argparse.Namespace, ram: int, console: Console,
                 uart_input: InputSource) -> Machine:
    from harness.boot import boot_drive, user_boot
    from harness.build.images import build_images
    from harness.machine.assemble import new_system
    from harness.machine.loader import load_elf

    kernel = load_elf(args.kernel) if args.kernel else None
    arch = args.arch or (f"rv{kernel.xlen}" if kernel else "rv64")
    images = build_images(arch, listings=False)
    firmware = load_elf(args.bios) if args.bios else load_elf(images.firmware)
    ub = user_boot(images.users, args.user, args.args, flags=args.boot_flag, add=args.add)
    say_notes(ub.programs.notes)
    drive = boot_drive(images.disk, ub.programs, drive_of(args), attach=not args.no_drive)
    return new_system(firmware, kernel or load_elf(images.kernel), ub.initrd, ub.bootargs,
                      ram=ram, console=console, uart_input=uart_input, drive=drive,
                      virtio_legacy=args.virtio_legacy, icount_shift=args.icount_shift)


def _serve_gdb(machine: Machine, args: argparse.Namespace) -> RunResult:
    """Run under the GDB stub (harness/gdb) until the guest ends or gdb kills it."""
    from harness.gdb import GdbServer, parse_address

    server = GdbServer(machine, parse_address(args.gdb), wait=args.wait,
                       max_insns=args.max_insns)
    return server.serve()


def run(args: argparse.Namespace) -> int:
    # Imported here, not above: `privlab --help` and the other commands build this
    # parser without loading the machine.
    from harness.cli.console import interrupt_stops, report_run, terminal_input
    from harness.devices import Console, StdinInput

    if args.args and args.user is None:
        raise BadInput(f"unexpected arguments: {' '.join(args.args)}")
    if args.wait and args.gdb is None:
        raise BadInput("--wait needs --gdb [HOST:]PORT")
    if args.gdb is not None:
        from harness.gdb import parse_address
        parse_address(args.gdb)   # reject a bad address before building anything
    console = Console(echo=not args.quiet)
    with ExitStack() as stack:
        uart_input = _input(args)
        if isinstance(uart_input, StdinInput):
            stack.enter_context(terminal_input())
        machine = _boot(args, console, uart_input)
        sink = _trace_sink(args.trace_out)
        if sink is not None:
            stack.enter_context(sink)
            machine.events.stream_jsonl(sink)
        machine.events.keep = False  # the CLI only needs the tail, kept separately
        if args.gdb is not None:   # the server handles Ctrl-C itself
            result: RunResult = _serve_gdb(machine, args)
        else:
            stack.enter_context(interrupt_stops(machine))
            result = machine.run(max_insns=args.max_insns)
    return report_run(result, args.max_insns, sys.stderr)
