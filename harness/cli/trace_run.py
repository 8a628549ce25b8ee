"""What `privlab trace` runs (its parser is in trace_cmd.py, which imports this
module only when the command runs)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from harness.api import Session
from harness.cli.console import interrupt_stops, report_run
from harness.cli.sessionargs import budget_of, open_session
from harness.errors import BadInput
from harness.inspect import SyscallSummary, SyscallTable, TrapTimeline, make_console
from harness.kernelinfo.symbols import Location
from harness.machine import Stop
from harness.trace.flow import FlowFilter, FlowRow
from harness.trace.html import write_html
from harness.trace.jsonl import write_jsonl
from harness.trace.perfetto import write_chrome_trace

__all__ = ["run"]

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



def _filter(args: argparse.Namespace, s: Session) -> FlowFilter:
    owners: frozenset[int] | None = None
    if args.pid is not None:
        owners = frozenset(s.flow.spaces.get(args.pid, ()))
        if not owners:
            known = sorted(s.flow.spaces)
            raise BadInput(f"no process with pid {args.pid} in this trace "
                           f"(pids seen: {', '.join(map(str, known)) or 'none'})")
    if args.satp is not None:
        owners = (owners or frozenset()) | {args.satp}
    return FlowFilter(causes=_names(args.cause), syscalls=_names(args.syscall), owners=owners,
                      seq=_range(args.range, "--range"), instret=_range(args.instret, "--instret"))


def _output(path: str | None, stack: ExitStack) -> IO[str]:
    if path is None:
        return sys.stdout
    out = Path(path)
    if not out.parent.is_dir():
        raise BadInput(f"{out}: directory {out.parent} does not exist")
    try:
        return stack.enter_context(out.open("w"))
    except OSError as e:
        raise BadInput(f"{out}: cannot write: {e.strerror}") from e


def locator(s: Session) -> Callable[[FlowRow], Location | None]:
    """Where each row happened (traps) or went (xRETs), as symbol+offset."""
    def locate(row: FlowRow) -> Location | None:
        who = s.flow.named.get(row.satp)
        addr = row.pc if row.is_trap else row.target
        return s.info.symbolize(addr, row.satp, s.machine.memory, who[1] if who else None)
    return locate


def run(args: argparse.Namespace) -> int:
    if args.capture_limit < 0:
        raise BadInput("--capture-limit must not be negative")
    s = open_session(args, capture=not args.no_capture and args.capture_limit > 0,
                     capture_limit=args.capture_limit)
    budget = budget_of(args)
    with interrupt_stops(s.machine):     # Ctrl-C stops the guest; its events are shown
        result = s.run(budget)
    flow = s.flow
    filt = _filter(args, s)
    with ExitStack() as stack:
        out = _output(args.output, stack)
        rows = list(flow.rows(filt))
        if args.format == "jsonl":
            write_jsonl(rows, out)
        elif args.format == "perfetto":
            names = {satp: f"pid {pid} {name}" for satp, (pid, name) in flow.named.items()}
            write_chrome_trace(rows, out, names)
        elif args.format == "html":
            title = f"privlab trace: {args.user or args.kernel or 'system'}"
            write_html(rows, out, title)
        else:
            console = make_console(file=out, color=None if args.output is None else False)
            # the calls whose ecall is among the rows (all of them, whatever --limit shows)
            calls = [r.syscall for r in rows if r.syscall is not None and r.is_trap]
            if args.format == "calls":
                console.print(SyscallTable(calls, args.limit), soft_wrap=not console.is_terminal)
            else:
                console.print(TrapTimeline(rows, s.machine.xlen, locator(s), args.limit),
                              soft_wrap=not console.is_terminal)
                if calls and not filt.syscalls:
                    console.print(SyscallSummary(calls))
    if args.output is not None:
        print(f"privlab: wrote {args.format} trace of {len(rows)} events to {args.output}",
              file=sys.stderr)
    if result.stop is Stop.HALT:
        return result.status
    return report_run(result, budget, sys.stderr, default=args.max_insns is None)
