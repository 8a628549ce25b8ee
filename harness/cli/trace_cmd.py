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

from __future__ import annotations

import argparse

from .sessionargs import add_abi_argument, add_machine_arguments

__all__ = ["register"]

CAPTURE_LIMIT = 2000         # stopping at a call costs ~0.1 ms: exact arguments for this many


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("trace", help="show every trap and return of a run (U | S | M)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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


def run(args: argparse.Namespace) -> int:
    # Imported here: every command's parser is built on each run (harness/cli/main.py).
    if args.from_file is not None:
        from .trace_replay import replay

        return replay(args)
    from .trace_run import run as trace

    return trace(args)
