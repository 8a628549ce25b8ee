"""`privlab qemu`: run a QEMU 7.2 command line for the virt board on privlab.

    privlab qemu -machine virt -bios none -kernel kernel/kernel -m 128M -smp 3 \\
        -nographic -global virtio-mmio.force-legacy=false \\
        -drive file=fs.img,if=none,format=raw,id=x0 \\
        -device virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0

A course switches its Makefile with one variable: `make qemu QEMU="privlab qemu"`.
privlab's own options (--pmp-before-qemu7, --dtb-before-qemu7.2, --no-known-firmware,
--max-insns, --trace-out) come first; the rest is QEMU's, and an option privlab does
not model is refused in one line naming it. `privlab qemu -help` lists what is
modelled. The console is the terminal (or a pipe); exit status as `privlab run`.
A course's firmware written for an earlier QEMU that privlab knows by its bytes
(harness/boot/knownfirmware.py) runs as that QEMU would run it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from contextlib import ExitStack

from ..errors import BadInput
from .helplayout import HelpLayout
from .sessionargs import older_qemu_options, positive_int, say_notes

TYPE_CHECKING = False     # typing itself is 2 ms of every start
if TYPE_CHECKING:
    from ..machine.results import RunResult

__all__ = ["register", "split_privlab_options"]

# privlab's options of this command, and whether each takes a value.
OWN: dict[str, bool] = {"--pmp-before-qemu7": False, "--dtb-before-qemu7.2": False,
                        "--no-known-firmware": False, "--max-insns": True, "--trace-out": True}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # prefix_chars="+": no word is an option to argparse, so QEMU's `-m`, `-S`,
    # `-help` all reach split_privlab_options and the QEMU grammar untouched.
    p = sub.add_parser("qemu", help="run a QEMU command line (-machine virt ...) on privlab",
                       description=__doc__, prefix_chars="+", add_help=False,
                       formatter_class=HelpLayout)
    p.add_argument("words", nargs="*", metavar="[PRIVLAB-OPTIONS] QEMU-OPTIONS")
    p.set_defaults(func=run, leave_at_once=True)   # cli/main.py leave_at_once


def split_privlab_options(words: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """privlab's leading options (OWN) as a Namespace, and the QEMU words after them."""
    i, mine = 0, list[str]()
    while i < len(words):
        name = words[i].split("=", 1)[0]
        if name not in OWN:
            break
        takes = OWN[name] and "=" not in words[i]
        if takes and i + 1 >= len(words):
            raise BadInput(f"{name} needs a value")
        mine += words[i:i + 1 + takes]
        i += 1 + takes
    p = argparse.ArgumentParser(prog="privlab qemu", add_help=False, formatter_class=HelpLayout)
    p.add_argument("--pmp-before-qemu7", action="store_true")
    p.add_argument("--dtb-before-qemu7.2", dest="dtb_before_qemu72", action="store_true")
    p.add_argument("--no-known-firmware", action="store_true")
    p.add_argument("--max-insns", type=positive_int)
    p.add_argument("--trace-out")
    try:
        args = p.parse_args(mine)
    except SystemExit:   # argparse has printed its one line
        raise BadInput("bad privlab option before the QEMU ones (privlab qemu -help)") \
            from None
    return args, list(words[i:])


def run(args: argparse.Namespace) -> int:
    from ..devices import Console, StdinInput
    from ..qemucmd import HELP, parse_qemu_line
    from ..qemucmd.boot import boot_qemu_line
    from ..qemucmd.keyboard import Typed
    from .console import interrupt_stops, report_run, terminal_input
    from .run_cmd import _trace_out

    own, words = split_privlab_options(args.words)
    line = parse_qemu_line(words)
    if line.help:
        sys.stdout.write(HELP)
        return 0
    if line.gdb is not None:
        from ..gdb import parse_address
        parse_address(line.gdb)       # a bad port before anything is built
    if line.bios not in ("none", "default"):
        from pathlib import Path

        from ..boot.knownfirmware import run_as_written_for

        said = run_as_written_for(Path(line.bios), own)
        if said:
            say_notes([said])
    with ExitStack() as stack:
        keys = Typed(StdinInput())
        machine = boot_qemu_line(line, Console(echo=True), keys,
                                 pmp_before_qemu7=own.pmp_before_qemu7,
                                 dtb_before_qemu72=own.dtb_before_qemu72)
        keys.attach(machine.uart)
        if own.trace_out is not None:
            _trace_out(own.trace_out, machine, stack)
        machine.events.keep = False
        stack.enter_context(terminal_input())
        if line.gdb is not None:
            from ..gdb import GdbServer, parse_address

            server = GdbServer(machine, parse_address(line.gdb), wait=line.freeze,
                               max_insns=own.max_insns)
            result: RunResult = server.serve()
        else:
            stack.enter_context(interrupt_stops(machine))
            result = machine.run(max_insns=own.max_insns)
    return report_run(result, own.max_insns, sys.stderr,
                      older_qemu=older_qemu_options(own) if line.bios not in ("none", "default")
                      else ())
