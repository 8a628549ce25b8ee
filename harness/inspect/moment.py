"""One moment of a run, everything at once: what `privlab inspect --at trap:N` shows.

The event that brought the hart here, the registers, the CSRs (with what the event
changed), the code where it trapped and where it is now, and the kernel's process
table and trap frame. The caller gathers the parts (harness/cli/inspect_cmd.py);
any of them may be missing (a bare-metal program has no process table).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.rule import Rule
from rich.text import Text

__all__ = ["MomentView"]


@dataclass
class MomentView:
    """A moment of a run as `privlab inspect` shows it: a headline and titled sections."""
    headline: Text
    sections: list[tuple[str, RenderableType | None]]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.headline
        for title, body in self.sections:
            if body is None:
                continue
            yield Rule(Text(title, "heading"), align="left", style="muted")
            yield body

    def group(self) -> Group:
        return Group(self)
