"""`privlab`: the command-line entry point.

Each subcommand lives in its own module exposing `register(subparsers)`, which adds its
parser and sets `func` (args -> exit status). Errors from the `PrivlabError` hierarchy
become one line on stderr and their exit status, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

from harness.errors import PrivlabError

__all__ = ["main"]

# Subcommand modules, in the order `privlab --help` lists them.
SUBCOMMANDS = ("run", "build")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """argparse errors are bad input: one line, exit status 2."""
        self.exit(2, f"privlab: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="privlab", description="A RISC-V hart for teaching kernels.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in SUBCOMMANDS:
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
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
