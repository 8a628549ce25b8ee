"""`privlab trace --from FILE`: show a trace file `privlab run --trace-out FILE` wrote,
in any of trace's formats, without running anything again.

The file holds the events only, as the core recorded them (harness/machine/tracefile.py):
system calls are decoded with --abi, address spaces are named by satp (no process
table was read), rows carry no symbol (no kernel is loaded), and string arguments show
as addresses. The text formats stream the file in bounded memory, as a live trace does.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from typing import IO

from ..abi.syscall_table import abi_table
from ..errors import BadInput
from ..inspect.timeline import TimelineWriter
from ..machine.events import EventLog
from ..machine.tracefile import TraceReader, open_trace
from ..trace.flow import Flow, FlowFilter
from ..trace.sbi import SbiNames, load_sbi_names
from ..trace.stream import FlowStream
from ..trace.syscalls import CallSpec, call_specs

__all__ = ["replay"]

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
    from .trace_run import output_to, row_filter, say_wrote, write_export

    _refuse_run_options(args)
    reader = open_trace(args.from_file)
    specs, sbi = call_specs(abi_table(args.abi)), load_sbi_names()
    filt = row_filter(args)
    if args.format in ("perfetto", "html"):
        log = EventLog(keep=True)
        for chunk in reader.chunks():
            log.append_raw(chunk)
        flow = Flow(log, specs, reader.xlen, sbi, initial=reader.initial, start=0)
        shown = write_export(args, flow, filt, f"privlab trace: {reader.path.name}")
    else:
        with ExitStack() as stack:
            shown = _stream(args, reader, specs, sbi, filt, output_to(args.output, stack))
    _say_cut(reader)
    say_wrote(args, shown)
    return 0


def _stream(args: argparse.Namespace, reader: TraceReader, specs: dict[int, CallSpec],
            sbi: SbiNames, filt: FlowFilter, out: IO[str]) -> int:
    from .trace_run import RowOutput

    log = EventLog(keep=False)
    flow = Flow(log, specs, reader.xlen, sbi, initial=reader.initial, start=0, retain=False)
    rows = RowOutput(args, out, lambda console: TimelineWriter(
        console, reader.xlen, lambda row: None, args.limit, harts=reader.harts,
        fold=not args.unfold), harts=reader.harts, locate=lambda row: None)
    stream = FlowStream(flow, filt, rows.sink, satp=args.satp, quiet=rows.catch_up)
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
