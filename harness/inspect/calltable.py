"""The system-call view: one row per call, decoded from the kernel's syscall table.

    SyscallTable(tracer.flow.syscalls)

Arguments appear as the C prototype in kernel/syscall.tbl describes them (strings and
buffers read from the caller's memory when the trace captured them), with the result
(negative values are failures) and the instructions the kernel spent before the
process ran again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from harness.trace.syscalls import SyscallRecord

__all__ = ["SyscallSummary", "SyscallTable"]


class SyscallTable:
    def __init__(self, calls: Sequence[SyscallRecord], limit: int | None = 200,
                 title: str | None = None) -> None:
        self.calls = calls
        self.limit = limit
        self.title = title

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(box=None, padding=(0, 1), header_style="muted",
                      title=Text(self.title, "heading") if self.title else None,
                      title_justify="left")
        table.add_column("seq", justify="right", no_wrap=True)
        table.add_column("pid", justify="right", no_wrap=True)
        table.add_column("call", ratio=1)
        table.add_column("result", no_wrap=True)
        table.add_column("kernel insns", justify="right", no_wrap=True)
        shown = self.calls if self.limit is None else self.calls[:self.limit]
        for c in shown:
            result = Text()
            result.append(c.ret_text(), "ret.error" if c.failed else "ret.ok")
            for i, cap in sorted(c.outputs.items()):
                name = c.spec.args[i].name if c.spec else f"a{i}"
                result.append(f"  {name}={cap.text}", "muted")
            cost = str(c.exit_instret - c.entry_instret) if c.exit_instret is not None else ""
            table.add_row(str(c.entry_seq), str(c.pid) if c.pid is not None else "?",
                          Text(c.call_text(), "syscall"), result, cost)
        yield table
        if len(shown) < len(self.calls):
            yield Text(f"... and {len(self.calls) - len(shown)} more calls", "muted")


class SyscallSummary:
    """How many times each call was made, and how many failed."""

    def __init__(self, calls: Sequence[SyscallRecord]) -> None:
        self.calls = calls

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        made = Counter(c.name for c in self.calls)
        failed = Counter(c.name for c in self.calls if c.failed)
        table = Table(box=None, padding=(0, 1), header_style="muted")
        table.add_column("call")
        table.add_column("calls", justify="right")
        table.add_column("failed", justify="right")
        for name, n in sorted(made.items(), key=lambda kv: (-kv[1], kv[0])):
            table.add_row(Text(name, "syscall"), str(n),
                          Text(str(failed[name]), "ret.error" if failed[name] else "muted"))
        yield table
