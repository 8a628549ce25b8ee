"""Expectations on the event trace: which system calls a run made, with what
arguments and results, and which traps it took.

A system call is an ecall from U (a trap with code 8, number in a7); its result is a0
at the sret that next returns to the same address space (same satp), so calls made by
different processes interleave correctly even when one of them yields.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from harness.abi.csr import Priv
from harness.abi.syscall_table import Syscall
from harness.trace import Event, TrapEvent, XretEvent

__all__ = ["SyscallRecord", "TraceView"]

ECALL_FROM_U = 8
S_TIMER = 5


@dataclass(frozen=True)
class SyscallRecord:
    """One system call: number, name (if the kernel's table has it), a0..a5 at the
    ecall, the result (None if it never returned: exit, or the run ended), the
    address space (satp) it came from and when (instret)."""

    number: int
    name: str
    args: tuple[int, ...]
    result: int | None
    satp: int
    instret: int

    def __str__(self) -> str:
        args = ", ".join(hex(a) for a in self.args)
        result = "no return" if self.result is None else str(self.result)
        return f"{self.name}({args}) -> {result}"


def _signed(value: int, xlen: int) -> int:
    return value - (1 << xlen) if value >> (xlen - 1) & 1 else value


class TraceView:
    """Read-only questions about a run's events."""

    def __init__(self, events: Iterable[Event], table: Mapping[int, Syscall],
                 xlen: int) -> None:
        self.events = list(events)
        self._table = table
        self._xlen = xlen

    def traps(self, *, code: int | None = None, interrupt: bool | None = None,
              from_priv: Priv | None = None, to_priv: Priv | None = None) -> list[TrapEvent]:
        return [e for e in self.events if isinstance(e, TrapEvent)
                and (code is None or e.code == code)
                and (interrupt is None or e.interrupt == interrupt)
                and (from_priv is None or e.priv_from == from_priv)
                and (to_priv is None or e.priv_to == to_priv)]

    def timer_interrupts_from_user(self) -> list[TrapEvent]:
        """Supervisor timer interrupts that stopped user code: preemption points."""
        return self.traps(code=S_TIMER, interrupt=True, from_priv=Priv.U, to_priv=Priv.S)

    def syscalls(self, name: str | None = None) -> list[SyscallRecord]:
        out: list[SyscallRecord] = []
        pending: dict[int, int] = {}  # satp -> index into out of its unanswered call
        for e in self.events:
            if isinstance(e, TrapEvent):
                if e.interrupt or e.code != ECALL_FROM_U:
                    continue
                number = e.args[7]
                call = self._table.get(number)
                nargs = len(call.args) if call else 6
                pending[e.satp] = len(out)
                out.append(SyscallRecord(number, call.name if call else f"#{number}",
                                         e.args[:nargs], None, e.satp, e.instret))
            elif isinstance(e, XretEvent) and e.insn == "sret" and e.priv_to == Priv.U:
                index = pending.pop(e.satp, None)
                if index is not None:
                    rec = out[index]
                    out[index] = SyscallRecord(rec.number, rec.name, rec.args,
                                               _signed(e.a0, self._xlen), rec.satp, rec.instret)
        return [r for r in out if name is None or r.name == name]

    def count(self, name: str) -> int:
        return len(self.syscalls(name))
