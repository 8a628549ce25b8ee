"""The rich scoreboard `privlab grade` prints: one row per test, grouped, with the
first line of each failure, and the total. Nothing in it is read as rich markup: a
submission's path or its kernel's output may hold brackets."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from ..grade.model import GradeReport, format_points
from .reports import display_name

__all__ = ["Scoreboard"]


class Scoreboard:
    def __init__(self, report: GradeReport, *, details: bool = False) -> None:
        self.report = report
        self.details = details

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        r = self.report
        # Every string is a Text: names, paths and the guest's output are never markup.
        table = Table(title=Text(f"{r.lab}: {r.submission}"), title_justify="left",
                      expand=False)
        table.add_column("test", overflow="fold")
        table.add_column("points", justify="right", no_wrap=True)
        table.add_column("", no_wrap=True)
        table.add_column("why", overflow="fold", max_width=60)
        for t in r.tests:
            status = Text("pass", style="green") if t.passed else Text("FAIL", style="bold red")
            lines = t.output.splitlines() if not t.passed else []
            why = "\n".join(lines if self.details else lines[:1])
            table.add_row(Text(display_name(t)),
                          Text(f"{format_points(t.score)}/{format_points(t.max_score)}"),
                          status, Text(why))
        yield table
        for note in r.notes:
            yield Text(note, style="yellow")
        style = "bold green" if r.full_marks else "bold"
        yield Text(f"{format_points(r.score)} of {format_points(r.max_score)} points "
                   f"in {r.execution_time:.1f} s", style=style)
