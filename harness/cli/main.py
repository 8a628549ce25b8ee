"""`privlab`: the command-line entry point.

Each subcommand lives in its own module, `harness/cli/<name>_cmd.py`, exposing
`register(subparsers)`, which adds its parser and sets `func` (args -> exit status);
modules are found by that name, so adding a command touches no shared file. `register`
runs for every command on every run, so a command module imports only argparse-level
helpers at its top and loads the machine, rich and the rest inside the function it runs. Errors
from the `PrivlabError` hierarchy become one line on stderr and their exit status;
an OSError (a file that cannot be written, say) becomes one line and status 1, never a
traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

import harness.cli
from harness.errors import ExitStatus, PrivlabError

__all__ = ["main"]

# Listed first in `privlab --help`; any other *_cmd module follows alphabetically.
FIRST = ("run", "build")
EXIT_BROKEN_PIPE = 1        # what rich exits with when its own output pipe closes


def subcommands() -> list[str]:
    # A listing of the package directory, not pkgutil (whose import costs more than the
    # scan): `privlab` builds its whole parser on every run.
    found = sorted(name.removesuffix("_cmd.py") for d in harness.cli.__path__
                   for name in os.listdir(d) if name.endswith("_cmd.py"))
    return [n for n in FIRST if n in found] + [n for n in found if n not in FIRST]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """argparse errors are bad input: one line, exit status 2."""
        self.exit(ExitStatus.BAD_INPUT, f"privlab: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="privlab", description="A RISC-V hart for teaching kernels.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in subcommands():
        import_module(f"harness.cli.{name}_cmd").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status: int = args.func(args)
    except PrivlabError as e:
        print(f"privlab: {e}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:             # `privlab trace | head`: the reader has had enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as e:                # a file the user named could not be read or written
        where = f"{e.filename}: " if e.filename else ""
        print(f"privlab: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
