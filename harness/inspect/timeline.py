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
from ..trace.fold import TIMES, Fold, Folder, Item
from ..trace.who import where

__all__ = ["LANES", "TimelineWriter", "TrapTimeline", "arrow"]

LANES = (Priv.U, Priv.S, Priv.M)
LANE_WIDTH = 6
_FAULTS = {Exc.EXEC_PAGE_FAULT, Exc.LOAD_PAGE_FAULT, Exc.STORE_PAGE_FAULT,
           Exc.FAULT_FETCH, Exc.FAULT_LOAD, Exc.FAULT_STORE,
           Exc.MISALIGNED_FETCH, Exc.MISALIGNED_LOAD, Exc.MISALIGNED_STORE}

RowLocator = Callable[[FlowRow], Location | None]
_DETAILED = _FAULTS | {Exc.ILLEGAL_INSTRUCTION}         # exceptions describe() adds to
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
        elif row.note:
            add((f"  {row.note}", None))
        elif not row.interrupt and row.code in _FAULTS:
            add((f"  address {row.tval:#x}", "fault"))
        elif not row.interrupt and row.code == Exc.ILLEGAL_INSTRUCTION:
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
        for i, cap in sorted(call.outputs.items()):
            name = call.spec.args[i].name if call.spec else f"a{i}"
            add((f"  {name}={cap.text}", "muted"))
    elif row.note:              # also the SBI error code of an mret that ends an SBI call
        add((f"  {row.note}", "note"))
    return out


def describe(row: FlowRow, xlen: int) -> Text:
    """The event column, styled, and who it belongs to (`pid 1`)."""
    t = Text()
    for text, style in describe_parts(row, xlen):
        t.append(text, style)
    t.append(f"  {row.who}", "muted")
    return t


def short_parts(row: FlowRow) -> list[Part]:
    """A row as a fold names the rows after its first: the cause or instruction and
    a result (`sret → 0`)."""
    out: list[Part] = [(row.name, "xret" if not row.is_trap else
                        "trap.interrupt" if row.interrupt else "trap.exception")]
    call = row.syscall
    if not row.is_trap and call is not None and call.exit_seq == row.seq:
        out.append((f" → {call.ret_text()}", "ret.error" if call.failed else "ret.ok"))
    elif row.note.startswith("→"):
        out.append((f" {row.note}", "note"))
    return out


class TrapTimeline:
    """Rows of a Flow (filtered as you like) as a lane diagram."""

    def __init__(self, rows: Iterable[FlowRow], xlen: int = 64,
                 locate: RowLocator | None = None, limit: int | None = None,
                 title: str | None = None, harts: int = 1, fold: bool = False) -> None:
        """`harts`: the machine's; with more than one, a `hart` column names each
        event's. `fold`: runs of identical rows (or nestings) are one line with a
        count (harness/trace/fold.py)."""
        self.rows = rows
        self.xlen = xlen
        self.harts = harts
        self.locate = locate
        self.limit = limit
        self.title = title
        self.fold = fold

    def legend(self) -> Text | None:
        """Under --smp, what the instret column counts (a line above the header)."""
        if self.harts <= 1:
            return None
        return Text("instret: instructions all harts had retired before the row, the count "
                    "--at instret:N uses (privlab inspect also shows the hart's own)",
                    "muted")

    def count(self, row: FlowRow) -> int:
        """The instret column: the machine's count (every hart's instructions) under
        --smp, the one hart's otherwise."""
        return row.clock if self.harts > 1 else row.instret

    def header(self) -> Text:
        t = Text()
        t.append(f"{'seq':>6} {'instret':>10}  ", "muted")
        if self.harts > 1:
            t.append("hart ", "muted")
        for p in LANES:
            t.append(p.letter.ljust(LANE_WIDTH), priv_style(p))
        t.append(f"{'path':<8}event", "muted")
        return t

    def _where(self, row: FlowRow) -> str:
        return f"  {where(row, self.locate)}" if self.locate is not None else ""

    def line(self, row: FlowRow) -> Text:
        t = Text()
        t.append(f"{row.seq:>6} {self.count(row):>10}  ", "muted")
        if self.harts > 1:
            t.append(f"{row.hart:>4} ", "muted")
        t.append_text(arrow(row.priv_from, row.priv_to))
        path = _path(row)
        t.append_text(path)
        t.append(" " * max(1, 8 - len(path)))
        t.append_text(describe(row, self.xlen))
        t.append(self._where(row), "symbol")
        return t

    def fold_line(self, fold: Fold) -> Text:
        """One line for a run of identical rows: the first as line() shows it, the
        rest of its unit by name, and the count (the next line's seq says where the
        run ended)."""
        t = self.line(fold.first)
        for row in fold.unit[1:]:
            t.append(" / ", "muted")
            for text, style in short_parts(row):
                t.append(text, style)
        t.append(f"  {TIMES}{fold.count}", "note")
        return t

    def plain_body(self, row: FlowRow) -> str:
        """line(row).plain after seq and instret, made without styling what is not
        shown (the lanes and the path are the same few strings on every line)."""
        lanes = _ARROWS.get((row.priv_from, row.priv_to))
        if lanes is None:
            lanes = _ARROWS[(row.priv_from, row.priv_to)] = arrow(row.priv_from, row.priv_to).plain
        path = _PATHS.get(row.path)
        if path is None:
            text = _path(row).plain
            path = _PATHS[row.path] = text + " " * max(1, 8 - len(text))
        if row.syscall is None and not row.note and not row.signal and \
                (row.interrupt or not row.is_trap or row.code not in _DETAILED):
            event = row.name        # what describe_parts() gives such a row
        else:
            event = "".join([text for text, _ in describe_parts(row, self.xlen)])
        hart = f"{row.hart:>4} " if self.harts > 1 else ""
        return f"{hart}{lanes}{path}{event}  {row.who}{self._where(row)}"

    def plain_line(self, row: FlowRow, body: str | None = None) -> str:
        """line(row).plain (`body`: its plain_body, if made already)."""
        return f"{row.seq:>6} {self.count(row):>10}  {body or self.plain_body(row)}"

    def plain_fold(self, fold: Fold, body: str | None = None) -> str:
        """fold_line(fold).plain."""
        rest = "".join(" / " + "".join(text for text, _ in short_parts(r))
                       for r in fold.unit[1:])
        return f"{self.plain_line(fold.first, body)}{rest}  {TIMES}{fold.count}"

    def items(self) -> Iterable[Item]:
        """The rows, folded if asked."""
        if not self.fold:
            return self.rows
        folder = Folder(self.plain_body)
        return [*folder.push(self.rows), *folder.flush()]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.title:
            yield Text(self.title, "heading")
        legend = self.legend()
        if legend is not None:
            yield legend
        yield self.header()
        shown = 0
        for item in self.items():
            if self.limit is not None and shown >= self.limit:
                yield Text(f"... stopped after {self.limit} rows", "muted")
                break
            line = self.fold_line(item) if isinstance(item, Fold) else self.line(item)
            if not options.no_wrap:     # print(soft_wrap=True) keeps whole lines
                line.truncate(options.max_width, overflow="ellipsis")
            yield line
            shown += 1
        if shown == 0:
            yield Text("(no events)", "muted")


class TimelineWriter:
    """A TrapTimeline printed batch by batch: the header before the first row, each
    batch's lines written and flushed at once, at most `limit` lines, and "(no
    events)" at `close()` if there were none. Without colour (a pipe, a file) the
    lines are written as plain text straight to the console's file
    (theme.write_lines). With `fold`, a run of identical rows waits until it ends
    (or `catch_up()`), then is printed as one line with its count."""

    def __init__(self, console: Console, xlen: int = 64, locate: RowLocator | None = None,
                 limit: int | None = None, harts: int = 1, fold: bool = False) -> None:
        self.console = console
        self.timeline = TrapTimeline((), xlen, locate, limit, harts=harts)
        self.limit = limit
        self.shown = 0
        self._started = False
        self._stopped = False
        # Decided once: rich looks the terminal up in the environment each time.
        self._plain = console.color_system is None and not console.is_terminal
        self._bodies: dict[int, str] = {}     # seq -> plain body, made as rows are folded
        self._folder = Folder(self._body) if fold else None

    def _body(self, row: FlowRow) -> str:
        body = self._bodies[row.seq] = self.timeline.plain_body(row)
        return body

    def _emit(self, lines: Sequence[Text]) -> None:
        write_lines(self.console, lines)

    def start(self) -> None:
        """Print the header (once)."""
        if not self._started:
            self._started = True
            legend = self.timeline.legend()
            self._emit([*([legend] if legend is not None else []), self.timeline.header()])

    def write(self, rows: Sequence[FlowRow]) -> None:
        if self._stopped:
            return
        self.start()
        if self._folder is not None:
            self._write_items(self._folder.push(rows))
        else:
            self._write_items(rows)

    def catch_up(self) -> None:
        """Print the rows a fold holds back (the run has been quiet a while)."""
        if self._folder is not None and self._folder.pending and not self._stopped:
            self._write_items(self._folder.flush())

    def _write_items(self, items: Sequence[Item]) -> None:
        if self._stopped or not items:
            return
        if self.limit is not None and self.shown + len(items) > self.limit:
            items = items[:self.limit - self.shown]
            self._stopped = True
        self.shown += len(items)
        stopped = [Text(f"... stopped after {self.limit} rows", "muted")] if self._stopped else []
        bodies = self._bodies
        if self._plain:         # most of a trace's time: no Text for what has no style
            tl = self.timeline
            out = []
            pop = bodies.pop
            for it in items:
                if isinstance(it, Fold):
                    out.append(tl.plain_fold(it, pop(it.first.seq, None)) + "\n")
                    for r in it.rows:
                        pop(r.seq, None)
                else:
                    out.append(tl.plain_line(it, pop(it.seq, None)) + "\n")
            file = self.console.file
            file.write("".join(out))
            if stopped:
                self._emit(stopped)
            else:
                file.flush()
            return
        for it in items:
            for r in it.rows if isinstance(it, Fold) else (it,):
                bodies.pop(r.seq, None)
        tl = self.timeline
        self._emit([tl.fold_line(it) if isinstance(it, Fold) else tl.line(it)
                    for it in items] + stopped)

    def close(self) -> None:
        self.catch_up()
        self.start()
        if self.shown == 0:
            self._emit([Text("(no events)", "muted")])
