"""`privlab`: the command-line entry point.

Each subcommand lives in its own module, `harness/cli/<name>_cmd.py`, exposing
`register(subparsers)`, which adds its parser and sets `func` (args -> exit status);
COMMANDS below is the table of them, in `privlab --help` order. `register` runs for
every command on every run, so a command module imports only argparse-level helpers
at its top and loads the machine, rich and the rest inside the function it runs. Errors
from the `PrivlabError` hierarchy become one line on stderr and their exit status;
an OSError (a file that cannot be written, say) becomes one line and status 1, never a
traceback; Ctrl-C is status 130 (harness/sigint.py) and a closed output pipe 141, as
for `cat`.

A command that runs a guest and then has nothing left to write (`run`, `qemu`: the
commands a Makefile runs once per test) sets `leave_at_once`: its process ends as soon
as its output is flushed and the exit handlers have run, without the interpreter's
teardown of every module and the guest's memory: 3 ms of a bare run's 47 (`leave_at_once`
below says what it still does).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from ..errors import BuildError, ExitStatus, PrivlabError
from ..sigint import interrupts_exit, run_cleanups
from .helplayout import HelpLayout
from .sessionargs import set_program, split_program

__all__ = ["COMMANDS", "leave_at_once", "main"]

# Every command, in `privlab --help` order: the two a newcomer needs first, then the
# views of a run, then the tools around them. Command NAME lives in NAME_cmd.py.
COMMANDS: tuple[str, ...] = (
    "run", "build", "tour", "trace", "inspect", "step", "pagetable",
    "translate", "disk", "qemu", "lab", "grade",
)
EXIT_BROKEN_PIPE = 141      # 128 + SIGPIPE: what `cat` exits with when its reader has gone


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """argparse errors are bad input: one line, exit status 2."""
        self.exit(ExitStatus.BAD_INPUT, f"privlab: {message}\n")


def command_module(name: str) -> ModuleType:
    """The module of command `name` (one of COMMANDS)."""
    return importlib.import_module(f"{__package__}.{name}_cmd")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only` (a command's name), the parser of that
    command alone: the one a run needs, without importing and registering the other
    eleven (a tenth of `privlab run`'s start-up)."""
    parser = _Parser(prog="privlab", description="A RISC-V hart for teaching kernels.",
                     formatter_class=HelpLayout)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in (only,) if only in COMMANDS else COMMANDS:
        command_module(name).register(sub)
    return parser


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The command line as a Namespace: a command that boots a machine gets the words
    after `--user PROG` (or `--`) as the program's, unseen by argparse
    (harness/cli/sessionargs.py)."""
    words = list(argv)
    parser = build_parser(words[0] if words else None)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = sub.choices.get(words[0]) if words else None
    if command is None or not command.get_default("takes_program"):
        return parser.parse_args(words)
    mine, program = split_program(words[1:], command._option_string_actions)
    args, extra = parser.parse_known_args([words[0], *mine])
    if extra:
        hint = ("" if all(w.startswith("-") for w in extra) else
                " (a program and its arguments go last: --user PROG ARG...)")
        parser.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
    set_program(args, program, command._option_string_actions)
    return args


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: the reader has gone, and the interpreter's own flush
    at exit must not complain about it."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def leave_at_once(status: int) -> None:
    """End the process with `status` now, as the interpreter's own exit would end it but
    without tearing down its modules and objects: stdout and stderr flushed, the exit
    handlers run (atexit, weakref.finalize: the compiled-code table, temporary
    directories). Files a command opened are its own to close (they are: an ExitStack,
    the disk's unbuffered writes). Returns instead, for the usual exit, when a thread
    other than a daemon is still running, which that exit would wait for, or when a
    profiler or tracer is on (`python -m cProfile`, a debugger, coverage): they report
    after the program returns."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return
    threading = sys.modules.get("threading")
    if threading is not None and any(
            not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


def _run(argv: Sequence[str], leave: list[bool]) -> int:
    try:
        args = parse(argv)
        status: int = args.func(args)
        leave.append(bool(getattr(args, "leave_at_once", False)))
        sys.stdout.flush()              # a closed pipe shows here, not at the exit
    except PrivlabError as e:
        sys.stdout.flush()
        if isinstance(e, BuildError) and e.output:   # the compiler's words, verbatim
            sys.stderr.write(e.output if e.output.endswith("\n") else e.output + "\n")
        print(f"privlab: {e}", file=sys.stderr)
        return e.exit_status
    except BrokenPipeError:             # `privlab trace | head`: the reader has had enough
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as e:                # a file the user named could not be read or written
        where = f"{e.filename}: " if e.filename else ""
        print(f"privlab: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status. Ctrl-C anywhere ends it with 130 and one line
    (harness/sigint.py), a closed output pipe with 141 and none, a PrivlabError with
    its one line and status, never a traceback."""
    said: list[bool] = []
    leave: list[bool] = []              # the command asked to leave at once (leave_at_once)

    def say_interrupted() -> None:
        if not said:
            said.append(True)
            print("\nprivlab: interrupted", file=sys.stderr, flush=True)

    with interrupts_exit(say_interrupted, restore=argv is not None):
        try:
            try:
                status = _run(sys.argv[1:] if argv is None else argv, leave)
            except KeyboardInterrupt:
                run_cleanups()          # compilers and test processes still running
                with contextlib.suppress(OSError):
                    sys.stdout.flush()
                say_interrupted()
                status = ExitStatus.INTERRUPTED
        except BrokenPipeError:         # a flush in an error's handler, or the message
            _quiet_stdout()
            status = ExitStatus.INTERRUPTED if said else EXIT_BROKEN_PIPE
        if argv is None and status in (ExitStatus.INTERRUPTED, EXIT_BROKEN_PIPE):
            # Interrupted, or nobody is reading: leave now. The interpreter's teardown
            # (freeing the guest's RAM and translations) takes a few tenths of a second.
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
            os._exit(status)
    if argv is None and leave == [True]:
        leave_at_once(status)
    return status


if __name__ == "__main__":
    sys.exit(main())
