"""What a run of the machine returns: why it stopped (`Stop`), and the `RunResult`
with where and how; shared by the run loop (machine.py) and the turns of several
harts (schedule.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..abi.csr import Priv
from ..errors import ExitStatus
from .events import Event, TrapEvent
from .until import Until

__all__ = ["EXIT_GUEST_ERROR", "MAX_BUDGET_STEPS", "TURN_OVER", "VECTOR_FAULTS", "DataAccess",
           "RunResult", "Stop"]

EXIT_GUEST_ERROR = 3
VECTOR_FAULTS = "M's trap vector itself faults"
"""What a trap-storm message adds when the storm is at mtvec in M-mode: the handler's
first instruction traps again, so every trap lands there (mtvec 0: none was set)."""
MAX_BUDGET_STEPS = 1024      # more than a translated block holds (TCG: 512)


class Stop(Enum):
    """Why `Machine.run` returned."""

    HALT = "halt"                # the guest powered off (finisher or HTIF)
    BUDGET = "budget"            # the instruction budget ran out
    BREAKPOINT = "breakpoint"    # a debugger breakpoint (or AtAddress)
    EVENT = "event"              # an `until` event condition matched
    STEP = "step"
    WATCH = "watch"              # a debugger watchpoint, before the access (`access`)
    USER = "user"                # the host asked to stop
    INPUT_ENDED = "input ended"  # the console input ended and the guest waits for more
    ERROR = "error"              # the guest got stuck: trap storm, wfi forever, bad device use


@dataclass(frozen=True)
class DataAccess:
    """The load or store a debugger watchpoint stopped before (Stop.WATCH)."""

    paddr: int          # the first watched byte it touches
    write: bool


@dataclass
class RunResult:
    """How a run stopped, and the machine's state when it did."""
    stop: Stop
    exit_status: int | None = None
    message: str = ""
    pc: int = 0
    priv: Priv = Priv.M
    instret: int = 0
    last_traps: list[TrapEvent] = field(default_factory=list)
    event: Event | None = None          # the event that matched, for Stop.EVENT
    condition: Until | None = None      # the `until` condition that held
    access: DataAccess | None = None    # the access a watchpoint stopped, for Stop.WATCH

    @property
    def status(self) -> int:
        """The process exit status privlab reports for this result."""
        if self.stop is Stop.HALT:
            return self.exit_status or 0
        if self.stop is Stop.BUDGET:
            return ExitStatus.BUDGET
        return EXIT_GUEST_ERROR


# What one hart's turn of a multi-hart run returns when its quantum is used up or it
# waits in wfi: the turn loop reads no more than that (no pc, no recent traps).
TURN_OVER = RunResult(Stop.BUDGET, message="turn over")
