"""`privlab step`: step through a run, forward and back, watching every trap.

    privlab step --user hello
    privlab step --at syscall:write --user hello
    privlab step --break sbi_console_write --user hello
    privlab step --web --user hello          # the same app as a web page

A Textual app with the trap timeline, the code around pc, the registers, the S and M
CSRs (what the last move changed marked with *), a page-table walk and the console.
Keys: s step, t next trap, x next xRET, y next system call, c continue to a breakpoint
(a symbol, an address, syscall:NAME, trap:CAUSE), b step back, B back to the previous
trap, e back to an event by number, w walk an address, ? help, q quit. Going back
re-executes from snapshots taken as the run goes (docs/inspect/step.md).
"""

from __future__ import annotations

import argparse

from ..api.points import POINT_HELP
from .helplayout import HelpLayout
from .sessionargs import add_abi_argument, add_machine_arguments, positive_int

__all__ = ["register"]

DEFAULT_PORT = 8000


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("step", help="step through a run, forward and back (a Textual app)",
                       description=__doc__, formatter_class=HelpLayout)
    start = p.add_mutually_exclusive_group()
    start.add_argument("--at", metavar="POINT",
                       help=f"start at this point instead of the first instruction: {POINT_HELP}")
    start.add_argument("--break", dest="break_at", metavar="SYMBOL",
                       help="start where SYMBOL is about to run")
    p.add_argument("--every", type=positive_int, metavar="N",
                   help="at most N instructions between snapshots (default 500000): fewer make "
                        "going back faster and recording slower")
    p.add_argument("--history-budget", metavar="SIZE",
                   help="host memory the history for stepping back may hold (512M, 2G; "
                        "default $PRIVLAB_HISTORY_BUDGET or 1G); past it the oldest history "
                        "goes, and the status line says what is kept")
    p.add_argument("--web", action="store_true",
                   help="serve the app as a web page (textual-serve) instead of the terminal")
    p.add_argument("--host", default="127.0.0.1", help="--web: the address to listen on")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"--web: the port (default {DEFAULT_PORT})")
    add_machine_arguments(p, default_user="hello")
    add_abi_argument(p)
    p.set_defaults(func=run)


def _web_command(args: argparse.Namespace) -> str:
    """The same `privlab step` command line without --web, for textual-serve to run
    once per browser."""
    import shlex
    import sys

    argv = [sys.executable, "-m", "privlab", "step"]
    skip = {"--web"}
    raw = sys.argv[1:]
    i = raw.index("step") + 1 if "step" in raw else len(raw)
    rest = raw[i:]
    k = 0
    while k < len(rest):
        a = rest[k]
        if a in skip:
            k += 1
            continue
        if a in ("--host", "--port"):
            k += 2
            continue
        if a.startswith(("--host=", "--port=")):
            k += 1
            continue
        argv.append(a)
        k += 1
    del args
    return " ".join(shlex.quote(x) for x in argv)


def run(args: argparse.Namespace) -> int:
    # Imported here: every command's parser is built on each run (harness/cli/main.py).
    from ..api import run_to
    from ..api.timetravel import history_budget
    from ..errors import BadInput
    from .sessionargs import budget_of, open_session

    keep = None if args.history_budget is None else history_budget(args.history_budget)

    if args.web:
        if not 0 < args.port < 65536:
            raise BadInput(f"--port must be 1 to 65535, not {args.port}")
        from ..stepper.web import StepServer

        server = StepServer(_web_command(args), host=args.host, port=args.port,
                            title="privlab step")
        server.serve()
        return 0

    from ..stepper.web import watch_parent
    watch_parent()           # an app process of --web ends with its server

    from ..stepper.app import StepApp
    from ..stepper.controller import Stepper

    s = open_session(args)
    budget = budget_of(args)
    try:
        stepper = Stepper(s, args.every, history_budget=keep)
        if args.at is not None:
            run_to(s, args.at, budget)
            stepper.message = f"at {args.at}"
        elif args.break_at is not None:
            r = s.run_until_symbol(args.break_at, max_insns=budget)
            from ..machine import Stop
            if r.stop is not Stop.BREAKPOINT:
                raise BadInput(f"--break {args.break_at}: the run ended before reaching it "
                               f"({r.stop.value})")
            stepper.message = f"at {args.break_at}"
        status = StepApp(stepper).run()
        return status or 0
    finally:
        s.close()
