"""The system-call view: one row per call, decoded from the kernel's syscall table.

    SyscallTable(tracer.flow.syscalls)

Arguments appear as the C prototype in kernel/syscall.tbl describes them (strings and
buffers read from the caller's memory when the trace captured them), with the result
(negative values are failures) and the instructions the kernel spent before the
process ran again.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from operator import attrgetter

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from ..kernelinfo.symbols import Location
from ..theme import write_lines
from ..trace.calllist import CallList
from ..trace.flow import FlowRow
from ..trace.syscalls import SyscallRecord, is_failure
from ..trace.who import where

RowLocator = Callable[[FlowRow], Location | None]

__all__ = ["CallsWriter", "SyscallSummary", "SyscallTable"]


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


_KIND = attrgetter("number", "ret")
_NUMBER = attrgetter("number")


class SyscallSummary:
    """How many times each call was made, and how many failed (from the calls, or
    from counts kept as a run went: `SyscallSummary.counted(made, failed)`)."""

    def __init__(self, calls: Sequence[SyscallRecord]) -> None:
        # Counted by (number, ret) at C speed, a trace having a hundred thousand calls
        # and a few dozen distinct ones; a call of each number gives the name (the
        # calls of one trace share one table of specs).
        first_of: Callable[[int], SyscallRecord]
        if isinstance(calls, CallList):
            # A flow's calls: counted from its columns, without making a record of each.
            kinds, first_of = calls.kinds(), calls.first_of
        else:
            kinds = Counter(map(_KIND, calls))
            first_of = dict(zip(map(_NUMBER, calls), calls, strict=True)).__getitem__
        self.made: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        for (number, ret), n in kinds.items():
            name = first_of(number).name
            self.made[name] += n
            if is_failure(ret):
                self.failed[name] += n

    @classmethod
    def counted(cls, made: Counter[str], failed: Counter[str]) -> SyscallSummary:
        summary = cls(())
        summary.made, summary.failed = made, failed
        return summary

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        made, failed = self.made, self.failed
        table = Table(box=None, padding=(0, 1), header_style="muted")
        table.add_column("call")
        table.add_column("calls", justify="right")
        table.add_column("failed", justify="right")
        for name, n in sorted(made.items(), key=lambda kv: (-kv[1], kv[0])):
            table.add_row(Text(name, "syscall"), str(n),
                          Text(str(failed[name]), "ret.error" if failed[name] else "muted"))
        yield table


WINDOW = 64     # calls printed after a call that has not returned, before it is cut


class CallsWriter:
    """SyscallTable's rows printed as a run makes them, in columns of fixed width
    (a longer call pushes the rest of its line right). Calls are printed in the
    order they were made, once they return; a call still waiting while WINDOW
    later ones have returned (a parent in waitpid) is printed as `<unfinished>`, and
    its result later on a `<... name resumed>` line, as strace does."""

    HEADER = f" {'seq':>6}  {'pid':>4}  {'call':<44}  {'result':<16}  {'kernel insns':>12}  where"

    def __init__(self, console: Console, limit: int | None = None,
                 locate: RowLocator | None = None, harts: int = 1) -> None:
        """`locate` names where each call was made (`at write+0x4`); on a machine
        of several `harts`, a column names the hart each call was made on."""
        self.console = console
        self.limit = limit
        self.locate = locate
        self.harts = harts
        self._who: dict[int, tuple[str, str, int]] = {}   # entry seq -> who, where, hart
        self.made = 0                   # calls among the rows
        self.printed = 0                # of those, printed (at most limit)
        self._queue: deque[SyscallRecord] = deque()     # made, not printed yet
        self._waiting: dict[int, SyscallRecord] = {}    # printed unfinished
        self._started = False

    @property
    def header(self) -> str:
        if self.harts > 1:
            return self.HEADER.replace("  pid", "  hart   pid", 1)
        return self.HEADER

    def _line(self, c: SyscallRecord, resumed: bool = False, unfinished: bool = False) -> Text:
        who, at, hart = self._who.get(c.entry_seq, ("", "", 0))
        pid = who.removeprefix("pid ") if who.startswith("pid ") else \
            (str(c.pid) if c.pid is not None else who or "?")
        t = Text(f" {c.entry_seq:>6}  " + (f"{hart:>4}  " if self.harts > 1 else "") +
                 f"{pid:>4}  ")
        call = f"<... {c.name} resumed>" if resumed else c.call_text()
        t.append(call, "syscall")
        t.append(" " * max(2, 46 - len(call)))
        result = Text()
        if unfinished:
            result.append("<unfinished>", "muted")
        else:
            result.append(c.ret_text(), "ret.error" if c.failed else "ret.ok")
            for i, cap in sorted(c.outputs.items()):
                name = c.spec.args[i].name if c.spec else f"a{i}"
                result.append(f"  {name}={cap.text}", "muted")
        t.append_text(result)
        cost = str(c.exit_instret - c.entry_instret) \
            if c.exit_instret is not None and not unfinished else ""
        t.append(" " * max(2, 18 - len(result)) + cost.rjust(12))
        if at and not resumed:
            t.append(f"  {at}", "symbol")
        t.rstrip()
        return t

    def write(self, rows: Sequence[FlowRow]) -> None:
        for r in rows:
            call = r.syscall
            if call is not None and r.is_trap:
                self.made += 1
                if self.limit is None or self.made <= self.limit:
                    self._queue.append(call)
                    self._who[call.entry_seq] = (
                        r.who, where(r, self.locate) if self.locate is not None else "",
                        r.hart)
        self._drain(final=False)

    def _drain(self, final: bool) -> None:
        lines: list[Text] = []
        if not self._started:
            self._started = True
            lines.append(Text(self.header, "muted"))
        for seq, c in list(self._waiting.items()):
            if c.outcome != "pending":
                lines.append(self._line(c, resumed=True))
                del self._waiting[seq]
                self._who.pop(seq, None)
        queue = self._queue
        while queue and (queue[0].outcome != "pending" or len(queue) > WINDOW or final):
            c = queue.popleft()
            self.printed += 1
            if c.outcome == "pending" and not final:
                lines.append(self._line(c, unfinished=True))
                self._waiting[c.entry_seq] = c
            else:
                lines.append(self._line(c))
                self._who.pop(c.entry_seq, None)
        if lines:
            write_lines(self.console, lines)

    def close(self) -> None:
        """The run is over: print what is left, and how many calls were not shown."""
        self._drain(final=True)
        if self.made > self.printed:
            write_lines(self.console, [Text(f"... and {self.made - self.printed} more calls",
                                            "muted")])
