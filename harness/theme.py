"""The inspectors' colours, in one place.

`PALETTE` holds the few colours that carry meaning (one per privilege level, and the
trap kinds); the terminal styles in `STYLES` and the HTML/SVG exporters both derive
from it, so U-mode is the same teal in a terminal, a browser and Perfetto's legend.
Every renderable refers to a style by name ("priv.U", "changed"), never to a colour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO

from rich.console import Console
from rich.text import Text
from rich.theme import Theme

from .abi.csr import Priv

__all__ = ["PALETTE", "STYLES", "THEME", "PipeConsole", "make_console", "priv_style",
           "write_lines"]

PALETTE: dict[str, str] = {
    "U": "#2a9d8f",          # user: teal
    "S": "#c8961e",          # supervisor: amber
    "M": "#d1495b",          # machine: red
    "exception": "#3d5a80",
    "interrupt": "#8e44ad",
    "xret": "#6c757d",
    "syscall": "#0f7bbf",
    "ok": "#2e8b57",
    "error": "#c0392b",
    "changed": "#f4a261",
}

STYLES: dict[str, str] = {
    "priv.U": f"bold {PALETTE['U']}",
    "priv.S": f"bold {PALETTE['S']}",
    "priv.M": f"bold {PALETTE['M']}",
    "trap.exception": f"bold {PALETTE['exception']}",
    "trap.interrupt": f"bold {PALETTE['interrupt']}",
    "xret": PALETTE["xret"],
    "syscall": f"bold {PALETTE['syscall']}",
    "ret.ok": PALETTE["ok"],
    "ret.error": f"bold {PALETTE['error']}",
    "fault": f"bold {PALETTE['error']}",
    "ok": f"bold {PALETTE['ok']}",
    "changed": f"bold black on {PALETTE['changed']}",
    "csr.name": "bold",
    "field.set": "bold",
    "field.clear": "dim",
    "flag.set": "bold",
    "flag.clear": "dim",
    "addr": "cyan",
    "symbol": PALETTE["ok"],
    "source": "dim",
    "muted": "dim",
    "heading": "bold",
    "note": "italic",
    "signal": f"bold {PALETTE['syscall']}",
}

THEME = Theme(STYLES)


def priv_style(p: Priv | str) -> str:
    return f"priv.{p.letter if isinstance(p, Priv) else p}"


PIPE_WIDTH = 100   # width when writing to a file or a pipe, where rich would use 80


class PipeConsole(Console):
    """A rich Console whose closed output pipe is a BrokenPipeError (rich's own choice
    is SystemExit(1), the status of a failure): the command line turns it into
    status 141, as `cat` has (harness/cli/main.py)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(32, "the reader of the output has gone")


def make_console(width: int | None = None, file: IO[str] | None = None,
                 color: bool | None = None, truecolor: bool = False) -> Console:
    """A Console with privlab's theme. color=False gives plain text (tests, pipes);
    truecolor=True the palette's exact colours whatever the terminal says it has (for
    a renderer that downsamples itself, as Textual does)."""
    if color is False:
        c = PipeConsole(width=width, file=file, theme=THEME, color_system=None,
                        force_terminal=False, highlight=False, emoji=False)
    else:
        c = PipeConsole(width=width, file=file, theme=THEME, highlight=False, emoji=False,
                        force_terminal=color,
                        color_system="truecolor" if truecolor else "auto")
    if width is None and not c.is_terminal:
        c.width = PIPE_WIDTH
    return c


def write_lines(console: Console, lines: Sequence[Text]) -> None:
    """Print whole lines now (a streaming view's batch) and flush: on a terminal
    each cut to its width, elsewhere unwrapped; without colour, as plain text written
    straight to the console's file (rich's rendering costs more than the run)."""
    if console.color_system is None and not console.is_terminal:
        console.file.write("".join(line.plain + "\n" for line in lines))
    else:
        terminal, width = console.is_terminal, console.width
        for line in lines:
            if terminal:
                line.truncate(width, overflow="ellipsis")
            console.print(line, soft_wrap=not terminal)
    console.file.flush()
