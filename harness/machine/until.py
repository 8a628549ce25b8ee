"""Conditions a run can stop at: "run until ...".

`Machine.run(until=[...])` stops as soon as any of them holds. Conditions on events
(traps, xRETs, privilege changes) are armed in the native core, which stops right after
a candidate event (the hart then sits at the event's new pc, nothing run there yet);
Python makes the exact decision and resumes if it does not match.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..abi.csr import Exc, Priv
from .events import Event, TrapEvent, XretEvent

__all__ = ["AfterSyscall", "AfterTrap", "AfterXret", "AtAddress", "AtInstret",
           "PrivilegeChange", "Until"]

ALL = (1 << 64) - 1
SYSCALL_NUMBER_REG = 7  # a7 holds the number (index into TrapEvent.args)


@dataclass
class AfterTrap:
    """The `count`th trap from now (1 = the next) matching `code` (any if None) and
    `interrupt` (either if None)."""

    code: int | None = None
    interrupt: bool | None = None
    count: int = 1
    _seen: int = field(default=0, repr=False)

    def masks(self) -> tuple[int, int]:
        bit = ALL if self.code is None else 1 << self.code
        return (0 if self.interrupt is True else bit, 0 if self.interrupt is False else bit)

    def matches(self, e: Event) -> bool:
        if not isinstance(e, TrapEvent):
            return False
        if (self.code is not None and e.code != self.code) or (
                self.interrupt is not None and e.interrupt != self.interrupt):
            return False
        self._seen += 1
        return self._seen >= self.count


@dataclass
class AfterSyscall:
    """The next system call with this number (an ecall from U with it in a7); the hart
    stops at the kernel's trap vector, arguments in `event.args`."""

    number: int

    def matches(self, e: Event) -> bool:
        return (isinstance(e, TrapEvent) and not e.interrupt and e.code == Exc.USER_ECALL
                and e.args[SYSCALL_NUMBER_REG] == self.number)


@dataclass
class AfterXret:
    """The next mret/sret (`insn` "mret" or "sret", or either if None)."""

    insn: str | None = None

    def matches(self, e: Event) -> bool:
        return isinstance(e, XretEvent) and self.insn in (None, e.insn)


@dataclass
class PrivilegeChange:
    """The next trap or xRET that changes privilege (into `to`, if given)."""

    to: Priv | None = None

    def matches(self, e: Event) -> bool:
        return e.priv_from != e.priv_to and self.to in (None, e.priv_to)


@dataclass(frozen=True)
class AtAddress:
    """Before the instruction at this (virtual) address runs: a breakpoint."""

    addr: int


@dataclass(frozen=True)
class AtInstret:
    """When this many instructions have retired since reset."""

    instret: int


Until = AfterTrap | AfterSyscall | AfterXret | PrivilegeChange | AtAddress | AtInstret
