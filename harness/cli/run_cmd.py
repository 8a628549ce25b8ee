"""`privlab run`: boot the system, an S-mode kernel on its firmware, or any bare-metal
ELF, and run it to completion.

The system is built from the kernel/ and userland/ of the directory around the
working directory that has a kernel/ like privlab's (a lab handout: the first line on
stderr names it), else from privlab's bundled ones; --src DIR names the directory.
Options come first: everything after --user PROG is PROG's arguments.

Exit status: the guest's (finisher or HTIF, or the --user program's); 124 when
--max-insns runs out; 3 when the guest gets stuck (trap storm, wfi with nothing to wake
it, misuse of a device); 2 for bad input; 130 on Ctrl-C; 141 when the reader of the
output has gone (as for cat); 0 when the console input (a pipe, a file, --input) has
ended and the guest keeps waiting for more, as `sh < script` ends at the end of its
script.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path

from ..errors import BadInput
from .helplayout import HelpLayout
from .sessionargs import add_machine_arguments, older_qemu_options, scripted_input

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..machine import Machine
    from ..machine.results import RunResult
    from ..qemucmd.keyboard import Typed

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="boot and run a kernel or a bare-metal ELF",
                       description=__doc__, formatter_class=HelpLayout)
    add_machine_arguments(p, interactive=True)
    p.add_argument("--trace-out", metavar="FILE",
                   help="write every trap and xRET: a privlab trace file (read it with "
                        "`privlab trace --from FILE`), or JSON Lines if FILE ends in .jsonl "
                        "(formatted as the run goes: about 1.5x the CPU and the size)")
    p.add_argument("--quiet", action="store_true", help="do not echo the console")
    p.add_argument("--gdb", metavar="[HOST:]PORT",
                   help="serve the GDB remote protocol on PORT (host 127.0.0.1 unless "
                        "given; port 0 picks a free one); see docs/gdb.md")
    p.add_argument("--wait", action="store_true",
                   help="with --gdb: hold the hart at reset until gdb attaches")
    p.add_argument("--history-budget", metavar="SIZE",
                   help="with --gdb: host memory the reverse-execution history may hold "
                        "(512M, 2G; default $PRIVLAB_HISTORY_BUDGET or 1G); past it the "
                        "oldest history goes (monitor status says what is kept)")
    p.set_defaults(func=run, leave_at_once=True)   # cli/main.py leave_at_once


def _input(args: argparse.Namespace) -> Typed:
    """The terminal, a pipe or --input, arriving as typed keys do (harness/qemucmd/
    keyboard.py: firmware that empties the UART at start does not eat the first)."""
    from ..devices import ScriptedInput, StdinInput
    from ..qemucmd.keyboard import Typed

    text = scripted_input(args)
    return Typed(StdinInput() if text is None else ScriptedInput(text, final=True))


def _trace_out(path: str, machine: Machine, stack: ExitStack) -> None:
    """Write the run's events to `path` as they are drained from the core."""
    p = Path(path)
    if not p.parent.is_dir():
        raise BadInput(f"{p}: directory {p.parent} does not exist")
    try:
        out = stack.enter_context(p.open("wb"))
    except OSError as e:
        raise BadInput(f"{p}: cannot write: {e.strerror}") from e
    if p.suffix == ".jsonl":
        from ..trace.jsonl import JsonlWriter

        writer = JsonlWriter(out, machine.events.harts, background=True)
        stack.callback(writer.close)          # before the file closes: the lines queued
        machine.events.subscribe_raw(writer.write)
        return
    from ..machine.tracefile import TraceWriter

    machine.events.subscribe_raw(TraceWriter(out, machine.xlen, machine.hart.priv,
                                             machine.smp, machine.icount_shift).write)


def _history_budget(args: argparse.Namespace) -> int | None:
    """--history-budget in bytes (None: the environment's or the default)."""
    if args.history_budget is None:
        return None
    from ..api.timetravel import history_budget
    return history_budget(args.history_budget)


def _serve_gdb(machine: Machine, args: argparse.Namespace) -> RunResult:
    """Run under the GDB stub (harness/gdb) until the guest ends or gdb kills it."""
    from ..gdb import GdbServer, parse_address

    server = GdbServer(machine, parse_address(args.gdb), wait=args.wait,
                       max_insns=args.max_insns, history_budget=_history_budget(args))
    return server.serve()


def run(args: argparse.Namespace) -> int:
    # Imported here, not above: `privlab --help` and the other commands build this
    # parser without loading the machine.
    from ..devices import Console, StdinInput
    from .console import interrupt_stops, report_run, terminal_input
    from .sessionargs import boot_machine

    if args.wait and args.gdb is None:
        raise BadInput("--wait needs --gdb [HOST:]PORT")
    if args.history_budget is not None and args.gdb is None:
        raise BadInput("--history-budget needs --gdb [HOST:]PORT (it bounds reverse "
                       "execution's history)")
    _history_budget(args)   # a bad size is refused before anything is built
    if args.gdb is not None:
        from ..gdb import parse_address
        parse_address(args.gdb)   # reject a bad address before building anything
    console = Console(echo=not args.quiet)
    with ExitStack() as stack:
        uart_input = _input(args)
        machine = boot_machine(args, console, uart_input).machine
        uart_input.attach(machine.uart)
        if args.trace_out is not None:
            _trace_out(args.trace_out, machine, stack)
        machine.events.keep = False  # the CLI only needs the tail, kept separately
        if isinstance(uart_input.inner, StdinInput):   # after the build: keys reach it
            stack.enter_context(terminal_input())
        if args.gdb is not None:   # the server handles Ctrl-C itself
            result: RunResult = _serve_gdb(machine, args)
        else:
            stack.enter_context(interrupt_stops(machine))
            result = machine.run(max_insns=args.max_insns)
    return report_run(result, args.max_insns, sys.stderr, machine=machine,
                      older_qemu=older_qemu_options(args) if args.bios not in (None, "none")
                      else ())
