"""The integer registers, by ABI name, four to a line, with the pc and privilege."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from ..abi.registers import ABI_NAMES
from ..theme import priv_style
from .state import RegisterSnapshot

__all__ = ["RegisterView"]


class RegisterView:
    def __init__(self, regs: RegisterSnapshot, previous: RegisterSnapshot | None = None,
                 title: str | None = "Registers") -> None:
        self.regs = regs
        self.previous = previous
        self.title = title

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
        for _ in range(4):
            grid.add_column(justify="right", no_wrap=True)
            grid.add_column(no_wrap=True)
        for i in range(0, 32, 4):
            row: list[Text] = []
            for n in range(i, i + 4):
                changed = self.previous is not None and self.previous.x[n] != r.x[n]
                row.append(Text(f"{ABI_NAMES[n]}" + ("*" if changed else ""),
                                "changed" if changed else "csr.name"))
                row.append(Text(f"{r.x[n]:0{digits}x}", "changed" if changed else
                                ("muted" if r.x[n] == 0 else "addr")))
            grid.add_row(*row)
        yield grid
