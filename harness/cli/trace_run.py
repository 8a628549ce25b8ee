"""What `privlab trace` runs (its parser is in trace_cmd.py, which imports this
module only when the command runs).

The text formats and jsonl stream: rows are printed as the run makes them, batch by
batch (harness/trace/stream.py), and the run keeps no event nor call, so memory stays
bounded whatever its length. The perfetto and html exports need every row at once:
they run to the end, keeping the whole run, then write.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..api import Session
from ..api.locate import locator
from ..errors import BadInput
from ..inspect import SyscallSummary, make_console
from ..inspect.calltable import CallsWriter
from ..inspect.timeline import RowLocator, TimelineWriter
from ..machine import Stop
from ..machine.results import RunResult
from ..trace.flow import Flow, FlowFilter, FlowRow
from ..trace.html import write_html
from ..trace.jsonl import write_jsonl
from ..trace.perfetto import write_chrome_trace
from ..trace.stream import FlowStream
from .console import interrupt_stops, report_run
from .sessionargs import budget_of, open_session

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["run"]

SLICE = 20_000_000      # instructions run between looks at the rows held (~0.2 s)

def _range(text: str | None, what: str) -> tuple[int | None, int | None]:
    if text is None:
        return (None, None)
    lo, sep, hi = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return (int(lo, 0) if lo else None, int(hi, 0) if hi else None)
    except ValueError:
        raise BadInput(f"{what} {text!r}: expected START:STOP (either may be empty)") from None


def _names(values: list[str] | None) -> frozenset[str]:
    return frozenset(n.strip() for v in values or [] for n in v.split(",") if n.strip())



def row_filter(args: argparse.Namespace, owners: frozenset[int] | None = None) -> FlowFilter:
    return FlowFilter(causes=_names(args.cause), syscalls=_names(args.syscall), owners=owners,
                      seq=_range(args.range, "--range"), instret=_range(args.instret, "--instret"))


def _owners(args: argparse.Namespace, flow: Flow) -> frozenset[int] | None:
    """The address spaces --pid and --satp name (None: no such filter)."""
    owners: frozenset[int] | None = None
    if args.pid is not None:
        owners = frozenset(flow.spaces.get(args.pid, ()))
        if not owners:
            _no_such_pid(args.pid, flow)
    if args.satp is not None:
        owners = (owners or frozenset()) | {args.satp}
    return owners


def _no_such_pid(pid: int, flow: Flow) -> None:
    known = sorted(flow.spaces)
    raise BadInput(f"no process with pid {pid} in this trace "
                   f"(pids seen: {', '.join(map(str, known)) or 'none'})")


def output_to(path: str | None, stack: ExitStack) -> IO[str]:
    if path is None:
        return sys.stdout
    out = Path(path)
    if not out.parent.is_dir():
        raise BadInput(f"{out}: directory {out.parent} does not exist")
    try:
        return stack.enter_context(out.open("w"))
    except OSError as e:
        raise BadInput(f"{out}: cannot write: {e.strerror}") from e


def _run_sliced(s: Session, budget: int | None, stream: FlowStream) -> RunResult:
    """Session.run(budget) in slices of SLICE instructions, showing the rows held
    between them: a run with few traps still shows them as they come."""
    start = s.instret
    while True:
        left = None if budget is None else budget - (s.instret - start)
        step = SLICE if left is None else min(SLICE, left)
        result = s.run(step)
        stream.tick()
        if result.stop is not Stop.BUDGET or (left is not None and step >= left):
            return result


def run(args: argparse.Namespace) -> int:
    if args.capture_limit < 0:
        raise BadInput("--capture-limit must not be negative")
    s = open_session(args, capture=not args.no_capture and args.capture_limit > 0,
                     capture_limit=args.capture_limit)
    if args.format in ("perfetto", "html"):
        return _export(args, s)
    budget = budget_of(args)
    flow = s.tracer.stream()
    filt = row_filter(args)
    with ExitStack() as stack:
        out = output_to(args.output, stack)
        locate = locator(s, flow)
        rows = RowOutput(args, out, lambda console: TimelineWriter(
            console, s.machine.xlen, locate, args.limit, harts=s.machine.smp,
            fold=not args.unfold), harts=s.machine.smp, locate=locate)
        stream = FlowStream(flow, filt, rows.sink, pid=args.pid, satp=args.satp,
                            roots=s.tracer.process_roots, quiet=rows.catch_up)
        s.events.subscribe_raw(stream.feed_chunk)
        with interrupt_stops(s.machine):     # Ctrl-C stops the guest; its rows are shown
            result = _run_sliced(s, budget, stream)
        stream.finish()
        if args.pid is not None and stream.shown == 0 and args.pid not in flow.spaces:
            _no_such_pid(args.pid, flow)
        rows.close(stream, filt)
    say_wrote(args, stream.shown)
    return _status(result, budget, args, s)


class RowOutput:
    """Where streamed rows go for --format text, calls or jsonl: `sink` takes each
    batch; `close` ends the table (text: with the system-call summary)."""

    def __init__(self, args: argparse.Namespace, out: IO[str],
                 timeline: Callable[[Console], TimelineWriter], harts: int = 1,
                 locate: RowLocator | None = None) -> None:
        self.writer: TimelineWriter | CallsWriter | None = None
        self.sink: Callable[[list[FlowRow]], None]
        if args.format == "jsonl":
            def sink(rows: list[FlowRow]) -> None:
                write_jsonl(rows, out, harts, locate)
                out.flush()
            self.sink = sink
            return
        console = make_console(file=out, color=None if args.output is None else False)
        self.writer = (CallsWriter(console, args.limit, locate, harts)
                       if args.format == "calls" else timeline(console))
        self.sink = self.writer.write

    def catch_up(self) -> None:
        """The run has been quiet: show the rows a fold holds back."""
        if isinstance(self.writer, TimelineWriter):
            self.writer.catch_up()

    def close(self, stream: FlowStream, filt: FlowFilter) -> None:
        writer = self.writer
        if writer is None:
            return
        writer.close()
        if isinstance(writer, TimelineWriter) and stream.made and not filt.syscalls:
            writer.console.print(SyscallSummary.counted(stream.made, stream.failed))


def say_wrote(args: argparse.Namespace, events: int) -> None:
    if args.output is not None:
        print(f"privlab: wrote {args.format} trace of {events} events to {args.output}",
              file=sys.stderr)


def _export(args: argparse.Namespace, s: Session) -> int:
    """perfetto and html: the whole run, then every row at once."""
    budget = budget_of(args)
    with interrupt_stops(s.machine):     # Ctrl-C stops the guest; its events are shown
        result = s.run(budget)
    flow = s.flow
    shown = write_export(args, flow, row_filter(args, _owners(args, flow)),
                         f"privlab trace: {args.user or args.kernel or 'system'}",
                         locator(s, flow))
    say_wrote(args, shown)
    return _status(result, budget, args, s)


def write_export(args: argparse.Namespace, flow: Flow, filt: FlowFilter, title: str,
                 locate: RowLocator | None = None) -> int:
    """--format perfetto or html: every row of `flow` that passes `filt`, at once, to
    --output (processes named where the flow knows them, places by `locate`);
    returns the rows written."""
    with ExitStack() as stack:
        out = output_to(args.output, stack)
        rows = list(flow.rows(filt))
        if args.format == "perfetto":
            names = {satp: f"pid {pid} {name}" for satp, (pid, name) in flow.named.items()}
            write_chrome_trace(rows, out, names, locate, flow.xlen)
        else:
            write_html(rows, out, title, locate=locate, xlen=flow.xlen, specs=flow.specs)
    return len(rows)


def _status(result: RunResult, budget: int | None, args: argparse.Namespace,
            s: Session) -> int:
    if result.stop is Stop.HALT:
        return result.status
    return report_run(result, budget, sys.stderr, default=args.max_insns is None,
                      machine=s.machine, info=s.info)
