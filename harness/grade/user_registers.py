"""Honest user registers: the harness's check that the kernel under test hands a test
program back the registers it had, so its data flow is its own as much as its control
flow (harness/grade/resumes.py checks where it resumes).

A kernel controls its processes completely; one that rewrites `ra` and `a0`-`a2` at a
legal return can make the program's own `write` stub print "PASS <token>" and its own
`exit` stub exit 0. So at every trap from U the harness keeps the trapped registers
(x1..x31, read from the hart while it sits at the trap vector), and at every return to
U (sret or mret) compares the hart's registers with a trap of the same address space
whose resume point is that pc:

- after a system call (an ecall at E, resuming at E + 4): every register but the ABI's
  return register a0 holds what it held at the ecall;
- after any other trap (an interrupt, a page fault the kernel resolved), and after
  sigreturn back to where a handler interrupted: every register, a0 too;
- a fork's child (its first return, at the fork's E + 4, in its own address space):
  its parent's registers at the fork, but a0.

The ABI's other returns start a context afresh and are not compared: a process's
first return at an ELF entry (a new process, an exec), a thread's entry (thread_create's
a0), a handler's entry (sigalarm's handler; any pc once sigaction installed one). A
return no trap of its address space resumes at is not compared either: where U may
resume at all is resumes.py's check.

Several threads of one address space can wait at one resume point (two threads in
one `ecall` stub): the return matches whichever of them it equals.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..abi.csr import Priv
from ..abi.pairing import CallKind
from ..abi.registers import ABI_NAMES
from ..machine.hart import Hart
from ..machine.until import AfterTrap, AfterXret
from ..trace import Event, TrapEvent, XretEvent
from .resumes import CallRules, is_syscall

__all__ = ["RegisterViolation", "RegisterWatch", "Saved"]

A0 = ABI_NAMES.index("a0")
A1 = ABI_NAMES.index("a1")
SYSCALL_NUMBER = ABI_NAMES.index("a7")
ALL_FREE: frozenset[int] = frozenset()
RETURN_REGISTERS = frozenset({A0})     # the ABI's return register (harness/abi: ecall -> a0)
MAX_SAVED = 4096                        # per address space: contexts never resumed (exec)
STORM = 2000    # one trap repeated this often: the watch steps aside (see _Trapped)


@dataclass(frozen=True)
class Saved:
    """The registers of one trap from U: x1..x31 (index 0 is x1), where U resumes
    after it, and which registers a return there may change."""

    seq: int
    satp: int
    resume: int
    regs: tuple[int, ...]
    free: frozenset[int]          # register numbers a return may change
    what: str                     # "its system call write (ecall at 0x1005c)"

    def differences(self, regs: tuple[int, ...]) -> list[int]:
        return [n for n in range(1, 32) if n not in self.free and regs[n - 1] != self.regs[n - 1]]


@dataclass(frozen=True)
class RegisterViolation:
    """A return to U whose registers are not what the trap left."""

    seq: int                      # the xRET's event number
    pc: int
    saved: Saved
    register: int                 # the first register that differs
    value: int                    # its value at the return
    count: int                    # how many registers differ

    def __str__(self) -> str:
        n = self.register
        more = f" (and {self.count - 1} more register{'s' * (self.count > 2)})" \
            if self.count > 1 else ""
        return (f"U-mode resumed at {self.pc:#x} (event #{self.seq}) after {self.saved.what} "
                f"with {ABI_NAMES[n]} (x{n}) = {self.value:#x}, but it was "
                f"{self.saved.regs[n - 1]:#x} at the trap{more}: the kernel changed the "
                "program's registers (only a0, a system call's result, may change)")


@dataclass
class _Space:
    """What the register watch knows of one address space: the registers saved at its
    traps, its threads and its signal handlers."""
    saved: list[Saved] = field(default_factory=list)
    threads: set[int] = field(default_factory=set)
    handlers: set[int] = field(default_factory=set)
    any_handler: bool = False


class _Trapped(AfterTrap):
    """Every trap: the watch reads the trapped registers; never stops the run."""

    def __init__(self, watch: RegisterWatch) -> None:
        super().__init__()
        self.watch = watch

    def matches(self, e: Event) -> bool:
        """False, but True once when the watch disarms: the same trap from U over and
        over (a kernel that never advances sepc) is the machine's trap-storm stop to
        diagnose, which a watch stopping at every trap would keep from happening;
        the run goes on without the watch (KernelRun.run)."""
        if not isinstance(e, TrapEvent):
            return False
        if self.watch.storming(e):
            return True
        if e.priv_from is Priv.U:
            self.watch.trapped(e)
        return False


class _Returned(AfterXret):
    """Every xRET: the watch compares the registers U gets back; never stops the run."""

    def __init__(self, watch: RegisterWatch) -> None:
        super().__init__()
        self.watch = watch

    def matches(self, e: Event) -> bool:
        if isinstance(e, XretEvent):
            self.watch.last_return = (e.pc, e.instret)
            if e.priv_to is Priv.U:
                self.watch.returned(e)
        return False


class RegisterWatch:
    """The register check over one machine's run: pass `conditions` first among a
    run's `until` (they see every trap and xRET, stop nothing); `violation` is the
    first return that broke the rule, None while there is none."""

    def __init__(self, harts: list[Hart], rules: CallRules, entries: Iterable[int]) -> None:
        self.harts = harts
        self.rules = rules
        self.entries = set(entries)
        self.spaces: defaultdict[int, _Space] = defaultdict(_Space)
        self.forks: defaultdict[int, list[Saved]] = defaultdict(list)   # by resume pc
        self.violation: RegisterViolation | None = None
        self.checked = 0
        self.armed = True
        self.watching = (_Trapped(self), _Returned(self))
        self._repeat: tuple[int, int, int] | None = None
        self._repeats = 0
        self.last_return: tuple[int, int] | None = None

    @property
    def conditions(self) -> tuple[AfterTrap | AfterXret, ...]:
        return self.watching if self.armed else ()

    def _regs(self, hart: int) -> tuple[int, ...]:
        h = self.harts[hart] if hart < len(self.harts) else self.harts[0]
        return tuple(h.x(n) for n in range(1, 32))

    def storming(self, trap: TrapEvent) -> bool:
        """Whether this trap (from any privilege) is the same as the last STORM ones,
        each taken at the pc an xRET had just returned to with nothing run there (the
        machine's own rule for a storm): then the watch disarms, leaving the storm to
        the machine's own stop."""
        key = (trap.cause, trap.epc, trap.satp)
        back = self.last_return       # nothing ran between that xRET and this trap
        stuck = back is not None and back[0] == trap.epc and 0 <= trap.instret - back[1] <= 1
        self._repeats = self._repeats + 1 if key == self._repeat and stuck else 0
        self._repeat = key
        if self._repeats >= STORM:
            self.armed = False
        return not self.armed

    def trapped(self, trap: TrapEvent) -> None:
        """Keep the registers of a trap from U."""
        regs = self._regs(trap.hart)
        space = self.spaces[trap.satp]
        if not is_syscall(trap):
            saved = Saved(trap.seq, trap.satp, trap.epc, regs, ALL_FREE,
                          f"its trap ({trap.name} at {trap.epc:#x})")
        else:
            number = regs[SYSCALL_NUMBER - 1]
            kind = self.rules.kind(number)
            what = f"its system call {self.rules.name(number)} (ecall at {trap.epc:#x})"
            saved = Saved(trap.seq, trap.satp, trap.epc + 4, regs, RETURN_REGISTERS, what)
            if CallKind.NORETURN in kind:
                return
            if CallKind.FORK in kind:
                self.forks[saved.resume].append(saved)
                del self.forks[saved.resume][:-MAX_SAVED]
            elif number in self.rules.thread_create:
                space.threads.add(regs[A0 - 1])
            elif CallKind.SIGALARM in kind:
                space.handlers.add(regs[A1 - 1])      # its handler
            elif number in self.rules.sigaction and regs[A1 - 1]:
                space.any_handler = True
        space.saved.append(saved)
        del space.saved[:-MAX_SAVED]

    def returned(self, ret: XretEvent) -> None:
        if self.violation is not None:
            return
        space = self.spaces[ret.satp]
        here = [s for s in space.saved if s.resume == ret.pc]
        forks = [s for s in self.forks.get(ret.pc, ()) if s.satp != ret.satp]
        if not here and not forks:
            return                  # no trap resumes here: resumes.py says if U may
        regs = self._regs(ret.hart)
        self.checked += 1
        for saved in reversed(here):
            if not saved.differences(regs):
                space.saved.remove(saved)
                return
        if any(not s.differences(regs) for s in forks):
            return                  # a fork's child: its parent's registers
        if (ret.pc in self.entries or ret.pc in space.threads or ret.pc in space.handlers
                or space.any_handler):
            return                  # a context the ABI starts afresh
        best = min(reversed(here or forks), key=lambda s: len(s.differences(regs)))
        diff = best.differences(regs)
        self.violation = RegisterViolation(ret.seq, ret.pc, best, diff[0], regs[diff[0] - 1],
                                           len(diff))
