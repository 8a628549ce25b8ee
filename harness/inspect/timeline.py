"""The trap-flow timeline: one line per trap or xRET, with lanes for U, S and M.

    seq    instret  U     S     M     path   event
      6    2833767  ●━━━━━▶     ·     U▸S    user_ecall  write(1, "Hello, world!\\n", 14)

A trap is an arrow from the level it left to the level it entered, an xRET an arrow
back; `path` is the nesting after the event (U▸S▸M while the firmware serves an SBI
call made during a system call). System calls show their decoded arguments at the
ecall and their result at the sret; SBI calls show their extension and function.
An sret into a signal handler reads `→ handler for SIGUSR1`, the one that ends it
`back from SIGUSR1 handler` (with the result of the call it interrupted); an alarm's,
`→ alarm handler` and `back from alarm handler`.

`TimelineWriter` prints the same lines as rows come (`privlab trace` streams them,
harness/trace/stream.py): every column has its width fixed up front, so a line never
depends on the rows after it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from ..abi.csr import Exc, Priv
from ..kernelinfo.symbols import Location
from ..theme import priv_style, write_lines
from ..trace.flow import FlowRow

__all__ = ["LANES", "TimelineWriter", "TrapTimeline", "arrow"]

LANES = (Priv.U, Priv.S, Priv.M)
LANE_WIDTH = 6
_FAULTS = {Exc.INSN_PAGE_FAULT, Exc.LOAD_PAGE_FAULT, Exc.STORE_PAGE_FAULT,
           Exc.INSN_ACCESS_FAULT, Exc.LOAD_ACCESS_FAULT, Exc.STORE_ACCESS_FAULT,
           Exc.INSN_MISALIGNED, Exc.LOAD_MISALIGNED, Exc.STORE_MISALIGNED}

RowLocator = Callable[[FlowRow], Location | None]
_DETAILED = _FAULTS | {Exc.ILLEGAL_INSN}         # exceptions describe() adds to
_ARROWS: dict[tuple[Priv, Priv], str] = {}      # plain lanes, by (from, to)
_PATHS: dict[tuple[Priv, ...], str] = {}        # plain paths, padded


def arrow(src: Priv, dst: Priv) -> Text:
    """The lanes for one event: ● where it starts, an arrow to where it lands."""
    cells = [" "] * (LANE_WIDTH * len(LANES))
    a, b = LANES.index(src) * LANE_WIDTH, LANES.index(dst) * LANE_WIDTH
    for i in range(len(LANES)):
        cells[i * LANE_WIDTH] = "·"
    text = Text()
    if a == b:
        cells[a] = "↻"
        text.append("".join(cells))
        text.stylize(priv_style(src), a, a + 1)
        return text
    lo, hi = min(a, b), max(a, b)
    for i in range(lo + 1, hi):
        cells[i] = "━"
    cells[a] = "●"
    cells[b] = "▶" if b > a else "◀"
    text.append("".join(cells))
    text.stylize(priv_style(src), lo, hi + 1)
    text.stylize(priv_style(dst), b, b + 1)
    return text


def _path(row: FlowRow) -> Text:
    t = Text()
    for i, p in enumerate(row.path):
        if i:
            t.append("▸", "muted")
        t.append(p.letter, priv_style(p))
    return t


Part = tuple[str, str | None]     # a piece of the event column and its style


def describe_parts(row: FlowRow, xlen: int) -> list[Part]:
    """The event column as (text, style) pieces: cause or instruction, then what it
    carried. describe() styles them; a plain line only joins them."""
    out: list[Part] = []
    add = out.append
    if row.is_trap:
        add((row.name, "trap.interrupt" if row.interrupt else "trap.exception"))
        call = row.syscall
        if call is not None:
            add(("  ", None))
            add((call.call_text(outputs=False), "syscall"))   # results: at the sret
            if call.pid is not None:
                add((f"  pid {call.pid}" + (f" tid {call.tid}" if call.tid else ""), "muted"))
        elif row.note:
            add((f"  {row.note}", None))
        elif not row.interrupt and row.code in _FAULTS:
            add((f"  address {row.tval:#x}", "fault"))
        elif not row.interrupt and row.code == Exc.ILLEGAL_INSN:
            add((f"  instruction {row.tval:#x}", "fault"))
        if row.signal:          # the fault of a signal handler that returned
            add((f"  {row.signal}", "signal"))
        return out
    add((row.name, "xret"))
    if row.signal:              # into a signal handler, or back from one
        add((f"  {row.signal}", "signal"))
    call = row.syscall
    if call is not None and call.exit_seq == row.seq:
        add(("  → ", None))
        add((call.ret_text(), "ret.error" if call.failed else "ret.ok"))
        add((f"  {call.name}", "syscall"))
        if call.tid:
            add((f" (tid {call.tid})", "muted"))
        for i, cap in sorted(call.outputs.items()):
            name = call.spec.args[i].name if call.spec else f"a{i}"
            add((f"  {name}={cap.text}", "muted"))
    elif row.note:              # also the SBI error code of an mret that ends an SBI call
        add((f"  {row.note}", "note"))
    return out


def describe(row: FlowRow, xlen: int) -> Text:
    """The event column, styled."""
    t = Text()
    for text, style in describe_parts(row, xlen):
        t.append(text, style)
    return t


class TrapTimeline:
    """Rows of a Flow (filtered as you like) as a lane diagram."""

    def __init__(self, rows: Iterable[FlowRow], xlen: int = 64,
                 locate: RowLocator | None = None, limit: int | None = None,
                 title: str | None = None, harts: int = 1) -> None:
        """`harts`: the machine's; with more than one, a `hart` column names each
        event's."""
        self.rows = rows
        self.xlen = xlen
        self.harts = harts
        self.locate = locate
        self.limit = limit
        self.title = title

    def header(self) -> Text:
        t = Text()
        t.append(f"{'seq':>6} {'instret':>10}  ", "muted")
        if self.harts > 1:
            t.append("hart ", "muted")
        for p in LANES:
            t.append(p.letter.ljust(LANE_WIDTH), priv_style(p))
        t.append(f"{'path':<8}event", "muted")
        return t

    def line(self, row: FlowRow) -> Text:
        t = Text()
        t.append(f"{row.seq:>6} {row.instret:>10}  ", "muted")
        if self.harts > 1:
            t.append(f"{row.hart:>4} ", "muted")
        t.append_text(arrow(row.priv_from, row.priv_to))
        path = _path(row)
        t.append_text(path)
        t.append(" " * max(1, 8 - len(path)))
        t.append_text(describe(row, self.xlen))
        if self.locate is not None:
            loc = self.locate(row)
            if loc is not None and loc.symbol is not None:
                t.append(f"  {'at' if row.is_trap else 'to'} {loc.name}", "symbol")
        return t

    def plain_line(self, row: FlowRow) -> str:
        """line(row).plain, made without styling what is not shown (the lanes and the
        path are the same few strings on every line)."""
        lanes = _ARROWS.get((row.priv_from, row.priv_to))
        if lanes is None:
            lanes = _ARROWS[(row.priv_from, row.priv_to)] = arrow(row.priv_from, row.priv_to).plain
        path = _PATHS.get(row.path)
        if path is None:
            text = _path(row).plain
            path = _PATHS[row.path] = text + " " * max(1, 8 - len(text))
        if row.syscall is None and not row.note and not row.signal and \
                (row.interrupt or not row.is_trap or row.code not in _DETAILED):
            event = row.name        # what describe() gives such a row
        else:
            event = "".join([text for text, _ in describe_parts(row, self.xlen)])
        hart = f"{row.hart:>4} " if self.harts > 1 else ""
        out = f"{row.seq:>6} {row.instret:>10}  {hart}{lanes}{path}{event}"
        if self.locate is not None:
            loc = self.locate(row)
            if loc is not None and loc.symbol is not None:
                out += f"  {'at' if row.is_trap else 'to'} {loc.name}"
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.title:
            yield Text(self.title, "heading")
        yield self.header()
        shown = 0
        for row in self.rows:
            if self.limit is not None and shown >= self.limit:
                yield Text(f"... stopped after {self.limit} rows", "muted")
                break
            line = self.line(row)
            if not options.no_wrap:     # print(soft_wrap=True) keeps whole lines
                line.truncate(options.max_width, overflow="ellipsis")
            yield line
            shown += 1
        if shown == 0:
            yield Text("(no events)", "muted")


class TimelineWriter:
    """A TrapTimeline printed batch by batch: the header before the first row, each
    batch's lines written and flushed at once, at most `limit` rows, and "(no events)"
    at `close()` if there were none. Without colour (a pipe, a file) the lines are
    written as plain text straight to the console's file (theme.write_lines)."""

    def __init__(self, console: Console, xlen: int = 64, locate: RowLocator | None = None,
                 limit: int | None = None, harts: int = 1) -> None:
        self.console = console
        self.timeline = TrapTimeline((), xlen, locate, limit, harts=harts)
        self.limit = limit
        self.shown = 0
        self._started = False
        self._stopped = False
        # Decided once: rich looks the terminal up in the environment each time.
        self._plain = console.color_system is None and not console.is_terminal

    def _emit(self, lines: Sequence[Text]) -> None:
        write_lines(self.console, lines)

    def start(self) -> None:
        """Print the header (once)."""
        if not self._started:
            self._started = True
            self._emit([self.timeline.header()])

    def write(self, rows: Sequence[FlowRow]) -> None:
        if self._stopped:
            return
        self.start()
        if self.limit is not None and self.shown + len(rows) > self.limit:
            rows = rows[:self.limit - self.shown]
            self._stopped = True
        self.shown += len(rows)
        stopped = [Text(f"... stopped after {self.limit} rows", "muted")] if self._stopped else []
        if self._plain:         # most of a trace's time: no Text for what has no style
            line = self.timeline.plain_line
            file = self.console.file
            file.write("".join([line(r) + "\n" for r in rows]))
            if stopped:
                self._emit(stopped)
            else:
                file.flush()
            return
        rich_line = self.timeline.line
        self._emit([rich_line(r) for r in rows] + stopped)

    def close(self) -> None:
        self.start()
        if self.shown == 0:
            self._emit([Text("(no events)", "muted")])
