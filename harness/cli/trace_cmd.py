"""`privlab trace`: run a program and show every trap and return, as a lane diagram
(U | S | M), a table of its system calls, JSON Lines, a Perfetto/Chrome trace or a
self-contained HTML page.

    privlab trace --user hello
    privlab trace --format calls --user forktree 2
    privlab trace --syscall write --user hello
    privlab trace --format perfetto -o hello.json --user hello
    privlab trace --cause user_ecall,s_timer --pid 2 --range 100:200 --user forktree
    privlab run --trace-out run.trace --user forktree 2 && privlab trace --from run.trace

Rows are printed as the run makes them (text, calls, jsonl), in bounded memory;
perfetto and html keep the whole run and write at its end.

The trace stops at each of the first 2000 system calls (--capture-limit) to read its
string and buffer arguments at that exact moment, then goes on at full speed, showing
later pointers as addresses; --no-capture never stops. The run stops after 150,000,000
instructions unless --max-insns says otherwise, and at Ctrl-C; either way the events
up to there are shown. Exit status: the guest's, as for `privlab run` (124: the budget
ran out; 130: Ctrl-C).
"""

# The parser is built on every run of `privlab` (harness/cli/main.py): this module
# imports only argparse-level helpers at its top, and the machine, rich and the views
# inside the functions that run the command (tests/cli/test_cli_startup.py).

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..errors import BadInput
from .helplayout import HelpLayout
from .sessionargs import add_abi_argument, add_machine_arguments

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from ..api import Session
    from ..inspect.calltable import CallsWriter
    from ..inspect.timeline import RowLocator, TimelineWriter
    from ..machine.events import EventLog
    from ..machine.results import RunResult
    from ..machine.tracefile import TraceReader
    from ..trace.flow import Flow, FlowFilter, FlowRow
    from ..trace.sbi import SbiNames
    from ..trace.stream import FlowStream
    from ..trace.syscalls import CallSpec

__all__ = ["register", "run"]

CAPTURE_LIMIT = 2000         # stopping at a call costs ~0.1 ms: exact arguments for this many


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("trace", help="show every trap and return of a run (U | S | M)",
                       description=__doc__, formatter_class=HelpLayout)
    p.add_argument("--format", choices=("text", "calls", "jsonl", "perfetto", "html"),
                   default="text", help="text: the timeline; calls: one row per system "
                   "call (strace-like); jsonl, perfetto, html: exports (text, calls and jsonl "
                   "stream; perfetto and html keep the whole run, then write)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p.add_argument("--from", dest="from_file", metavar="TRACE",
                   help="show the trace file `privlab run --trace-out TRACE` wrote instead "
                        "of running (address spaces by satp, no symbols)")
    f = p.add_argument_group("filters")
    f.add_argument("--cause", action="append", metavar="NAME[,NAME]",
                   help="only traps with these cause names (or codes), and their returns")
    f.add_argument("--syscall", action="append", metavar="NAME[,NAME]",
                   help="only these system calls, with everything they cause")
    f.add_argument("--pid", type=int, help="only events of this process")
    f.add_argument("--satp", type=lambda t: int(t, 0), help="only events of this address space")
    f.add_argument("--range", metavar="A:B", help="only events #A up to (not including) #B")
    f.add_argument("--instret", metavar="A:B", help="only events in this instret range")
    p.add_argument("--no-capture", action="store_true",
                   help="do not stop at system calls to read their memory arguments")
    p.add_argument("--capture-limit", type=int, default=CAPTURE_LIMIT, metavar="N",
                   help=f"read memory arguments of the first N calls (default {CAPTURE_LIMIT})")
    p.add_argument("--limit", type=int, metavar="N", help="show at most N rows (text)")
    p.add_argument("--unfold", action="store_true",
                   help="text: one line per event, runs of identical rows not folded "
                        "into one with a count")
    add_abi_argument(p)
    add_machine_arguments(p)
    p.set_defaults(func=run)



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
    from ..trace.flow import FlowFilter

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
    from ..machine import Stop

    start = s.instret
    while True:
        left = None if budget is None else budget - (s.instret - start)
        step = SLICE if left is None else min(SLICE, left)
        result = s.run(step)
        stream.tick()
        if result.stop is not Stop.BUDGET or (left is not None and step >= left):
            return result


def run(args: argparse.Namespace) -> int:
    if args.from_file is not None:
        return replay(args)
    from ..api.locate import locator
    from ..inspect.timeline import TimelineWriter
    from ..trace.stream import FlowStream
    from .console import interrupt_stops
    from .sessionargs import budget_of, open_session

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
        stack.callback(rows.end)
        stream = FlowStream(flow, filt, rows.sink, pid=args.pid, satp=args.satp,
                            roots=s.tracer.process_roots, quiet=rows.catch_up,
                            native=rows.native)
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
        from ..inspect import make_console
        from ..inspect.calltable import CallsWriter
        from ..trace.jsonl import RowsJsonl

        self.writer: TimelineWriter | CallsWriter | None = None
        self.sink: Callable[[list[FlowRow]], None]
        # JSON Lines: rows also written natively, on one hart. On several, a nesting
        # of one hart is open while another's close, rows are shown in other groups
        # and a reused page-table root's rows can take the owner learned at another
        # moment: those traces keep to rows.
        self.native: RowsJsonl | None = None
        self._jsonl: RowsJsonl | None = None
        if args.format == "jsonl":
            lines = self._jsonl = RowsJsonl(out, harts, locate)
            self.native = lines if harts == 1 else None

            def sink(rows: list[FlowRow]) -> None:
                lines.write(rows)
                out.flush()
            self.sink = sink
            return
        console = make_console(file=out, color=None if args.output is None else False)
        self.writer = (CallsWriter(console, args.limit, locate, harts)
                       if args.format == "calls" else timeline(console))
        self.sink = self.writer.write

    def end(self) -> None:
        """Wait until the JSON Lines written on a thread of their own are written (also
        when the run ends by an error: every row it made is kept)."""
        if self._jsonl is not None:
            self._jsonl.close()

    def catch_up(self) -> None:
        """The run has been quiet: show the rows a fold holds back."""
        from ..inspect.timeline import TimelineWriter

        if isinstance(self.writer, TimelineWriter):
            self.writer.catch_up()

    def close(self, stream: FlowStream, filt: FlowFilter) -> None:
        from ..inspect import SyscallSummary
        from ..inspect.timeline import TimelineWriter

        writer = self.writer
        if writer is None:
            self.end()
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
    from ..api.locate import locator
    from .console import interrupt_stops
    from .sessionargs import budget_of

    budget = budget_of(args)
    with interrupt_stops(s.machine):     # Ctrl-C stops the guest; its events are shown
        result = s.run(budget)
    flow = s.flow
    shown = write_export(args, flow, row_filter(args, _owners(args, flow)),
                         f"privlab trace: {args.user or args.kernel or 'system'}",
                         locator(s, flow), s.machine.icount_shift)
    say_wrote(args, shown)
    return _status(result, budget, args, s)


def write_export(args: argparse.Namespace, flow: Flow, filt: FlowFilter, title: str,
                 locate: RowLocator | None = None, icount_shift: int | None = None) -> int:
    """--format perfetto or html: every row of `flow` that passes `filt`, at once, to
    --output (processes named where the flow knows them, places by `locate`; a
    Perfetto trace records the run's pace, `icount_shift`); returns the rows written."""
    from ..trace.html import write_html
    from ..trace.perfetto import write_chrome_trace

    with ExitStack() as stack:
        out = output_to(args.output, stack)
        rows = list(flow.rows(filt))
        if args.format == "perfetto":
            names = {satp: f"pid {pid} {name}" for satp, (pid, name) in flow.named.items()}
            write_chrome_trace(rows, out, names, locate, flow.xlen, icount_shift)
        else:
            write_html(rows, out, title, locate=locate, xlen=flow.xlen, specs=flow.specs)
    return len(rows)


def _status(result: RunResult, budget: int | None, args: argparse.Namespace,
            s: Session) -> int:
    from ..machine import Stop
    from .console import report_run

    if result.stop is Stop.HALT:
        return result.status
    return report_run(result, budget, sys.stderr, default=args.max_insns is None,
                      machine=s.machine, info=s.info)


# `--from FILE`: a trace file `privlab run --trace-out FILE` wrote, shown in any of
# the formats above without running anything again. The file holds the events only,
# as the core recorded them (harness/machine/tracefile.py): system calls are decoded
# with --abi, address spaces are named by satp (no process table was read), rows carry
# no symbol (no kernel is loaded), and string arguments show as addresses. The text
# formats stream the file in bounded memory, as a live trace does.

_RUN_OPTIONS = {"user": "--user", "kernel": "--kernel", "max_insns": "--max-insns",
                "drive": "--drive", "input": "--input", "input_file": "--input-file"}


def _refuse_run_options(args: argparse.Namespace) -> None:
    for attr, option in _RUN_OPTIONS.items():
        if getattr(args, attr, None) is not None:
            raise BadInput(f"--from shows a recorded trace and runs nothing: drop {option}")
    if args.pid is not None:
        raise BadInput("--from: a trace file names address spaces, not processes: "
                       "use --satp instead of --pid")


def replay(args: argparse.Namespace) -> int:
    from ..abi.syscall_table import abi_table
    from ..machine.events import EventLog
    from ..machine.tracefile import open_trace
    from ..trace.flow import Flow
    from ..trace.sbi import load_sbi_names
    from ..trace.syscalls import call_specs

    _refuse_run_options(args)
    reader = open_trace(args.from_file)
    specs, sbi = call_specs(abi_table(args.abi)), load_sbi_names()
    filt = row_filter(args)
    if args.format in ("perfetto", "html"):
        log = EventLog(keep=True)
        for chunk in reader.chunks():
            log.append_raw(chunk)
        flow = Flow(log, specs, reader.xlen, sbi, initial=reader.initial, start=0)
        shown = write_export(args, flow, filt, f"privlab trace: {reader.path.name}",
                             icount_shift=reader.icount_shift)
    else:
        with ExitStack() as stack:
            shown = _stream(args, reader, specs, sbi, filt, output_to(args.output, stack))
    _say_cut(reader)
    say_wrote(args, shown)
    return 0


def _stream(args: argparse.Namespace, reader: TraceReader, specs: dict[int, CallSpec],
            sbi: SbiNames, filt: FlowFilter, out: IO[str]) -> int:
    from ..inspect.timeline import TimelineWriter
    from ..machine.events import EventLog
    from ..trace.flow import Flow

    log = EventLog(keep=False)
    flow = Flow(log, specs, reader.xlen, sbi, initial=reader.initial, start=0, retain=False)
    rows = RowOutput(args, out, lambda console: TimelineWriter(
        console, reader.xlen, lambda row: None, args.limit, harts=reader.harts,
        fold=not args.unfold), harts=reader.harts, locate=lambda row: None)
    try:
        return _stream_rows(args, reader, flow, log, rows, filt)
    finally:
        rows.end()


def _stream_rows(args: argparse.Namespace, reader: TraceReader, flow: Flow, log: EventLog,
                 rows: RowOutput, filt: FlowFilter) -> int:
    from ..trace.stream import FlowStream

    stream = FlowStream(flow, filt, rows.sink, satp=args.satp, quiet=rows.catch_up,
                        native=rows.native)
    log.subscribe_raw(stream.feed_chunk)
    for chunk in reader.chunks():
        log.append_raw(chunk)
        stream.tick()
    stream.finish()
    rows.close(stream, filt)
    return stream.shown


def _say_cut(reader: TraceReader) -> None:
    if reader.trailing_bytes:
        print(f"privlab: {reader.path}: the run that wrote it was cut short "
              f"({reader.trailing_bytes} bytes of an unfinished event ignored)",
              file=sys.stderr)
