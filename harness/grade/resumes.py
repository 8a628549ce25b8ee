"""Where user code may resume: the harness's check that the kernel under test returned
to U only where the ABI lets it, so a test program's control flow is its own.

A kernel controls its processes completely; a dishonest one can make the trusted
test program do anything, for instance turn its `exit` into a jump to the program's
own `write` stub on "PASS <token>". Every such trick needs a return to U at a pc the
program did not choose. Per address space (the satp both a trap from U and the sret
that ends it carry), each trap from U opens one resume point, and each return to U
must take one that is open:

- after a system call (`ecall` at E): E + 4. `exit` opens none: it never returns.
  `exec`/`spawn` also allow an ELF entry, `fork` the child's first return (E + 4 in
  the child's new address space), `thread_create` its entry (a0) in this one;
- after any other trap (an interrupt, a page fault the kernel resolves): E itself;
- an ELF entry of a user program or a fork's return point, in any address space: a
  process's first return to U (a new process, an exec, a page table's frame used
  again); landing there again only restarts honest code;
- a handler the ABI defines: the handler `sigalarm` registered (a1, whatever its value), or, once
  `sigaction` installed one, any pc (the action is in user memory the harness does
  not keep); the resume point it interrupted stays saved for the next `sigreturn`,
  which may resume there.

Anything else is a `ResumeViolation` naming the pc and the last trap from U there.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..abi.csr import Exc, Priv
from ..abi.pairing import CallKind
from ..trace import Event, TrapEvent, XretEvent
from ..trace.pairer import call_flags
from ..trace.syscalls import CallSpec

__all__ = ["CallRules", "ResumeViolation", "check_resumes", "is_syscall"]


def is_syscall(trap: TrapEvent) -> bool:
    """Whether `trap` is a system call: an ecall from U (the number in a7)."""
    return not trap.interrupt and trap.code == Exc.USER_ECALL


@dataclass(frozen=True)
class CallRules:
    """What the resume rules need to know of each system call number, read from the
    syscall table the kernel was built from (its CallSpecs): the pairing model's kinds
    (harness/trace/pairer.py's call_flags: no return, fork, exec, sigalarm,
    sigreturn), and the two calls the pairing has no kind for, whose pc the kernel
    may resume at by the ABI: thread_create's entry (a0) and sigaction's handlers."""

    kinds: Mapping[int, CallKind]
    names: Mapping[int, str]
    thread_create: frozenset[int] = frozenset()
    sigaction: frozenset[int] = frozenset()

    @classmethod
    def from_specs(cls, specs: Mapping[int, CallSpec]) -> CallRules:
        return cls({n: CallKind(call_flags(s)) for n, s in specs.items()},
                   {n: s.name for n, s in specs.items()},
                   frozenset(n for n, s in specs.items() if s.name == "thread_create"),
                   frozenset(n for n, s in specs.items() if s.name == "sigaction"))

    def kind(self, number: int) -> CallKind:
        return self.kinds.get(number, CallKind(0))

    def name(self, number: int) -> str:
        return self.names.get(number) or f"syscall_{number}"


@dataclass(frozen=True)
class ResumeViolation:
    """A return to U at a pc the ABI does not allow."""

    seq: int            # the xRET's event number
    pc: int
    satp: int
    last_trap: TrapEvent | None    # the last trap from U in that address space
    syscall: str | None            # its system call's name, if it was one
    noreturn: bool = False         # that system call never returns

    def __str__(self) -> str:
        where = f"U-mode resumed at {self.pc:#x} (event #{self.seq}, satp {self.satp:#x})"
        if self.last_trap is None:
            return (f"{where}, which is no program's entry point: a process's first return "
                    "to user mode must be at an ELF entry or a fork's return")
        t = self.last_trap
        what = (f"its system call {self.syscall} (ecall at {t.epc:#x})" if self.syscall
                else f"its last trap ({t.name} at {t.epc:#x})")
        if self.noreturn:
            return (f"{where} after {what}, which never returns: the kernel made an exited "
                    "process run again")
        return (f"{where}, which is not after {what}: the kernel changed where the "
                "program resumes (not the ecall's next instruction, nor an exec's entry, "
                "nor a handler it registered)")


@dataclass
class _Space:
    """One address space's open resume points."""

    open: Counter[int] = field(default_factory=Counter)
    saved: list[int] = field(default_factory=list)     # interrupted by a handler
    handlers: set[int] = field(default_factory=set)
    any_handler: bool = False
    last_trap: TrapEvent | None = None
    last_syscall: str | None = None
    last_noreturn: bool = False


def check_resumes(events: Iterable[Event], entries: Iterable[int],
                  rules: CallRules) -> ResumeViolation | None:
    """The first return to U that the ABI does not allow, or None. `entries`: the
    ELF entries of the user programs the run may start; `rules`: the system calls'
    kinds and names, from the kernel's syscall table."""
    spaces: defaultdict[int, _Space] = defaultdict(_Space)
    starts = set(entries)      # first returns allowed anywhere: entries, fork returns
    for e in events:
        if isinstance(e, TrapEvent) and e.priv_from is Priv.U:
            _opened(spaces[e.satp], e, starts, rules)
        elif isinstance(e, XretEvent) and e.priv_to is Priv.U:
            space = spaces[e.satp]
            if space.open[e.pc] > 0:
                space.open[e.pc] -= 1
            elif e.pc in space.handlers or space.any_handler:
                if space.last_trap is not None:
                    resumed = _resume_point(space.last_trap)
                    if space.open[resumed] > 0:
                        space.open[resumed] -= 1
                        space.saved.append(resumed)
            elif e.pc in starts:
                pass             # a process's first return (or a program started again)
            else:
                return ResumeViolation(e.seq, e.pc, e.satp, space.last_trap,
                                       space.last_syscall, space.last_noreturn)
    return None


def _resume_point(trap: TrapEvent) -> int:
    return trap.epc + 4 if is_syscall(trap) else trap.epc


def _opened(space: _Space, trap: TrapEvent, starts: set[int], rules: CallRules) -> None:
    space.last_trap = trap
    space.last_syscall, space.last_noreturn = None, False
    if not is_syscall(trap):
        space.open[trap.epc] += 1
        return
    number, after = trap.args[7], trap.epc + 4
    kind = rules.kind(number)
    space.last_syscall, space.last_noreturn = rules.name(number), CallKind.NORETURN in kind
    if CallKind.NORETURN in kind:
        return
    space.open[after] += 1
    if CallKind.FORK in kind:
        starts.add(after)
    elif number in rules.thread_create:
        space.open[trap.args[0]] += 1
    elif CallKind.SIGALARM in kind:
        space.handlers.add(trap.args[1])        # whatever it is: 0 and bad pointers too
    elif number in rules.sigaction and trap.args[1]:
        space.any_handler = True
    elif CallKind.SIGRETURN in kind and space.saved:
        space.open[space.saved.pop()] += 1
