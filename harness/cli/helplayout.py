"""How `privlab --help` and each command's help are laid out.

argparse's own formatter imports `shutil` to ask the terminal's width, and builds a
formatter at every `add_argument` (to check the argument's metavar): `shutil` and the
compression modules it loads are 2 ms of every command, help shown or not. This one asks
the same question of `os` directly, with the answer shutil would give: COLUMNS when it
is a positive number, else the width of the terminal on standard output, else 80.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["HelpLayout", "terminal_columns"]

FALLBACK_COLUMNS = 80


def terminal_columns() -> int:
    """The terminal's width in columns, as shutil.get_terminal_size() gives it."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else FALLBACK_COLUMNS


class HelpLayout(argparse.RawDescriptionHelpFormatter):
    """A description as written (its paragraphs and examples kept), the arguments
    wrapped to the terminal's width."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        # argparse leaves two columns free at the right, as for its own width
        super().__init__(prog, indent_increment, max_help_position,
                         terminal_columns() - 2 if width is None else width)
