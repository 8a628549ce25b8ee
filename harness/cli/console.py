"""Terminal handling shared by commands that run a guest: raw-ish console input,
Ctrl-C that stops the guest cleanly, and the one-paragraph report of how a run ended."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import IO

from ..errors import ExitStatus
from ..machine.machine import Machine
from ..machine.results import RunResult, Stop
from ..sigint import on_sigint
from ..trace import TrapEvent

__all__ = ["format_trap", "interrupt_stops", "report_run", "terminal_input"]



@contextmanager
def terminal_input() -> Iterator[None]:
    """If stdin is a terminal, pass keys to the guest as typed (no line editing or echo
    by the host: the guest echoes), and restore the terminal afterwards."""
    if not sys.stdin.isatty():
        yield
        return
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def interrupt_stops(machine: Machine) -> AbstractContextManager[None]:
    """Ctrl-C stops the guest at its next block boundary, even in a loop that never
    returns to Python."""
    return on_sigint(machine.request_stop)


def format_trap(e: TrapEvent) -> str:
    kind = "interrupt" if e.interrupt else "exception"
    return (f"  #{e.seq} instret {e.instret}: {e.name} ({kind} {e.code}) "
            f"{e.priv_from.letter}->{e.priv_to.letter} epc {e.epc:#x} tval {e.tval:#x}")


def report_run(result: RunResult, budget: int | None, err: IO[str],
               default: bool = False) -> int:
    """Explain a run that did not end by the guest powering off; return the status.
    `default`: the budget is the default one, not a --max-insns (the message says how
    to change it)."""
    if result.stop is Stop.HALT:
        return result.status
    if result.stop is Stop.INPUT_ENDED:    # like `sh < script` at the end of the script
        err.write(f"\nprivlab: console input ended; the guest was waiting for more "
                  f"(pc {result.pc:#x}, {result.priv.letter}-mode, after {result.instret} "
                  f"instructions): stopped\n")
        return 0
    if result.stop is Stop.USER:
        err.write(f"\nprivlab: interrupted at pc {result.pc:#x} in {result.priv.letter}-mode "
                  f"after {result.instret} instructions\n")
        return ExitStatus.INTERRUPTED
    if result.stop is Stop.BUDGET:
        head = (f"privlab: instruction budget of {budget} exhausted at pc {result.pc:#x} "
                f"in {result.priv.letter}-mode")
        if default:
            head += " (the default budget: --max-insns N for another)"
    else:
        head = (f"privlab: {result.message} (pc {result.pc:#x}, {result.priv.letter}-mode, "
                f"after {result.instret} instructions)")
    lines = [head]
    if result.last_traps:
        lines.append("last traps:")
        lines += [format_trap(e) for e in result.last_traps]
    else:
        lines.append("no traps were taken")
    err.write(os.linesep.join(lines) + os.linesep)
    return result.status
