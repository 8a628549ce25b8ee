"""Expectations on the event trace: which system calls a run made, with what
arguments and results, and which traps it took.

The system calls are the trap flow's (harness/trace/flow.py), which the run keeps up
to date as it goes: an ecall from U pairs with the sret that returns to the same
address space at the ecall's pc + 4, so calls that switch processes (yield, a
blocking waitpid) return when their process runs again; exit never returns; a
successful exec returns into the new image; a fork returns to the parent and,
separately, to the child (`child_seq`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import cached_property

from ..abi.csr import Irq, Priv
from ..machine.rawevents import CODE, FROM, INTERRUPT, KIND, TO, TRAP, iter_records
from ..trace import Event, TrapEvent
from ..trace.flow import Flow
from ..trace.syscalls import SyscallRecord

__all__ = ["RecentTraps", "SyscallRecord", "TraceView"]


@dataclass(frozen=True)
class RecentTraps:
    """The traps a diagnosis shows: the last few, and before them the last trap into
    S-mode (`cause`) when it is older than those, with how many traps came between
    (`between`). A panicking kernel prints through the firmware, one S->M ecall per
    write, so the last traps alone are those calls; the trap that led to the panic
    (a system call, a page fault in the kernel, a timer interrupt) is the last one the
    kernel itself took."""

    last: list[TrapEvent]
    cause: TrapEvent | None = None
    between: int = 0


class TraceView:
    """Read-only questions about a run's events, as far as the run has got when the
    view is made (`KernelRun.trace` makes a fresh one each time). The calls are the
    flow's own records: one still pending fills in if the run goes on and a later
    view brings the flow up to date."""

    def __init__(self, flow: Flow) -> None:
        flow.catch_up()
        self.flow = flow
        self._stop = flow.next_seq
        self._calls = len(flow.syscalls)

    @cached_property
    def events(self) -> list[Event]:
        """Every trap and xRET, decoded (index = seq)."""
        start, stop = self.flow.start, self._stop
        out: list[Event] = []
        for e in self.flow.log:
            if e.seq >= stop:
                break
            if e.seq >= start:
                out.append(e)
        return out

    def traps(self, *, code: int | None = None, interrupt: bool | None = None,
              from_priv: Priv | None = None, to_priv: Priv | None = None) -> list[TrapEvent]:
        """The traps taken (those with this code, kind and privileges, if given).
        Only the traps that match are decoded."""
        log, out = self.flow.log, []
        for seq, rec in iter_records(log, self.flow.start, self._stop):
            if rec[KIND] == TRAP and (code is None or rec[CODE] == code) \
                    and (interrupt is None or bool(rec[INTERRUPT]) == interrupt) \
                    and (from_priv is None or rec[FROM] == from_priv) \
                    and (to_priv is None or rec[TO] == to_priv):
                trap = log[seq]
                assert isinstance(trap, TrapEvent)
                out.append(trap)
        return out

    def timer_interrupts_from_user(self) -> list[TrapEvent]:
        """Supervisor timer interrupts that stopped user code: preemption points."""
        return self.traps(code=int(Irq.S_TIMER), interrupt=True, from_priv=Priv.U,
                          to_priv=Priv.S)

    def recent_traps(self, n: int = 8) -> RecentTraps:
        """The last `n` traps, and the last trap into S-mode if it is not among them."""
        log = self.flow.log
        last: deque[int] = deque(maxlen=n)
        count = into_s = count_at_s = 0
        for seq, rec in iter_records(log, self.flow.start, self._stop):
            if rec[KIND] != TRAP:
                continue
            count += 1
            last.append(seq)
            if rec[TO] == Priv.S:
                into_s, count_at_s = seq, count
        shown = [log[seq] for seq in last]
        traps = [t for t in shown if isinstance(t, TrapEvent)]
        if not count_at_s or into_s in last:
            return RecentTraps(traps)
        cause = log[into_s]
        assert isinstance(cause, TrapEvent)
        return RecentTraps(traps, cause, count - count_at_s - len(traps))

    def syscalls(self, name: str | None = None) -> list[SyscallRecord]:
        """The system calls from U, in the order they were made (all, or those named
        `name`; a call the kernel's table lacks is named `syscall_N`)."""
        calls = self.flow.syscalls[:self._calls]
        return calls if name is None else [c for c in calls if c.name == name]

    def count(self, name: str) -> int:
        return len(self.syscalls(name))

