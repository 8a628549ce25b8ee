"""The integer registers, by ABI name, four to a line (or `columns`), with the pc and
privilege. `RegisterView.width(columns, xlen)` is how many cells a grid of that many
columns takes, so a pane can pick the most columns that show every name and full value."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from ..abi.registers import ABI_NAMES
from ..theme import priv_style
from .state import RegisterSnapshot

__all__ = ["RegisterView"]

NAME_CELLS = 5          # "zero*": the longest name, marked changed


class RegisterView:
    def __init__(self, regs: RegisterSnapshot, previous: RegisterSnapshot | None = None,
                 title: str | None = "Registers", columns: int = 4) -> None:
        if not 1 <= columns <= 32:
            raise ValueError(f"columns must be 1 to 32, not {columns}")
        self.regs = regs
        self.previous = previous
        self.title = title
        self.columns = columns

    @staticmethod
    def width(columns: int, xlen: int) -> int:
        """The cells `columns` columns take: each a name (up to 4 letters and a `*`)
        and a full value, one cell of padding either side of each."""
        return columns * (NAME_CELLS + 2 + xlen // 4 + 2)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        r = self.regs
        digits = r.xlen // 4
        head = Text()
        if self.title:
            head.append(self.title + "  ", "heading")
        head.append(f"{r.priv.letter}-mode", priv_style(r.priv))
        head.append(f"  pc {r.pc:#0{digits + 2}x}", "addr")
        yield head
        grid = Table(box=None, padding=(0, 1), show_header=False)
        for _ in range(self.columns):
            grid.add_column(justify="right", no_wrap=True, min_width=NAME_CELLS)
            grid.add_column(no_wrap=True, min_width=digits)
        for i in range(0, 32, self.columns):
            row: list[Text] = []
            for n in range(i, min(i + self.columns, 32)):
                changed = self.previous is not None and self.previous.x[n] != r.x[n]
                row.append(Text(f"{ABI_NAMES[n]}" + ("*" if changed else ""),
                                "changed" if changed else "csr.name"))
                row.append(Text(f"{r.x[n]:0{digits}x}", "changed" if changed else
                                ("muted" if r.x[n] == 0 else "addr")))
            grid.add_row(*row)
        yield grid
