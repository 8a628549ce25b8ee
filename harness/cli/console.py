"""Terminal handling shared by commands that run a guest: raw-ish console input,
Ctrl-C that stops the guest cleanly, and the one-paragraph report of how a run ended."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from ..abi.csr import Csr, Priv
from ..errors import ExitStatus
from ..machine.machine import Machine
from ..machine.results import VECTOR_FAULTS, RunResult, Stop
from ..sigint import on_sigint
from ..trace import TrapEvent

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

    from ..kernelinfo.system import SystemInfo

__all__ = ["format_trap", "interrupt_stops", "report_run", "terminal_input"]


def _satp(machine: Machine | None, priv: Priv) -> int | None:
    """The satp to name a pc of `priv` through (None in M-mode or without a machine)."""
    if machine is None or priv is Priv.M:
        return None
    return machine.hart.csr(Csr.SATP)



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


def format_trap(e: TrapEvent, name: Callable[[int, int | None], str] | None = None) -> str:
    """One trap; its epc named (symbol+offset, file:line) by `name` when given."""
    kind = "interrupt" if e.interrupt else "exception"
    epc = name(e.epc, e.satp if e.priv_from is not Priv.M else None) if name else f"{e.epc:#x}"
    return (f"  #{e.seq} instret {e.instret}: {e.name} ({kind} {e.code}) "
            f"{e.priv_from.letter}->{e.priv_to.letter} epc {epc} tval {e.tval:#x}")


def report_run(result: RunResult, budget: int | None, err: IO[str],
               default: bool = False, machine: Machine | None = None,
               info: SystemInfo | None = None, older_qemu: Sequence[str] = ()) -> int:
    """Explain a run that did not end by the guest powering off; return the status.
    `default`: the budget is the default one, not a --max-insns (the message says how
    to change it). With the `machine` (and what it runs, `info`, else read from its
    images), every address is named and a stall or hang shows every hart and the
    process table (harness/cli/diagnose.py). `older_qemu`: the options for firmware
    of an earlier QEMU that the user's own firmware runs without; named when M's trap
    vector faults, as such firmware's does when this QEMU's machine surprises it."""
    if result.stop is Stop.HALT:
        return result.status
    from .diagnose import Namer, describe_machine, info_for  # only a run that ends badly

    if machine is not None and info is None:
        try:
            info = info_for(machine)
        except Exception:        # naming is best effort: the report still goes out
            info = None
    namer = Namer(info, machine)
    satp = _satp(machine, result.priv)
    pc = namer(result.pc, satp)
    more: list[str] = []
    if machine is not None and result.stop in (Stop.USER, Stop.BUDGET, Stop.INPUT_ENDED,
                                               Stop.ERROR):   # a wfi nothing can end
        try:
            more = describe_machine(machine, info)
        except Exception as e:   # a kernel's tables half written: say so, go on
            more = [f"(the process table could not be read: {e})"]
    if result.stop is Stop.INPUT_ENDED:    # like `sh < script` at the end of the script
        err.write(f"\nprivlab: console input ended; the guest was waiting for more "
                  f"(pc {pc}, {result.priv.letter}-mode, after {result.instret} "
                  f"instructions): stopped\n")
        return 0
    if result.stop is Stop.USER:
        err.write(os.linesep.join([
            f"\nprivlab: interrupted at pc {pc} in {result.priv.letter}-mode "
            f"after {result.instret} instructions", *more]) + os.linesep)
        return ExitStatus.INTERRUPTED
    if result.stop is Stop.BUDGET:
        head = (f"privlab: instruction budget of {budget} exhausted at pc {pc} "
                f"in {result.priv.letter}-mode")
        if default:
            head += " (the default budget: --max-insns N for another)"
    else:
        head = (f"privlab: {result.message} (pc {pc}, {result.priv.letter}-mode, "
                f"after {result.instret} instructions)")
    lines = [head]
    if older_qemu and result.stop is Stop.ERROR and VECTOR_FAULTS in result.message:
        lines.append(f"firmware written for an earlier QEMU may need {' or '.join(older_qemu)}"
                     " (docs/moving-from-qemu.md)")
    lines += more
    if result.last_traps:
        lines.append("last traps:")
        lines += [format_trap(e, namer) for e in result.last_traps]
    else:
        lines.append("no traps were taken")
    err.write(os.linesep.join(lines) + os.linesep)
    return result.status
