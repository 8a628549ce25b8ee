"""Points in a run, as a student writes them on the command line: `--at trap:6`.

    trap:N         just after trace event #N, which must be a trap (as `privlab trace`
                   numbers events); the hart sits at the first instruction of the handler
    event:N        just after trace event #N, trap or xRET
    syscall:NAME   just after the next ecall making this system call (NAME:K: the Kth;
                   `syscall:*` is any system call)
    sbi:NAME       just after the next SBI call NAME (`DBCN.WRITE`, as `privlab trace`
                   names it; NAME:K: the Kth; `sbi:*` is any): the kernel's ecall
                   from S, taken into M; the hart sits at the firmware's trap vector
    symbol:NAME    just before the instruction at this symbol runs
    pc:ADDR        just before the instruction at this address runs
    priv:U|S|M     just after the next change into this privilege level
    instret:N      when N instructions have retired since reset
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import BadInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..machine import RunResult
    from .session import Session

__all__ = ["POINT_HELP", "NotReached", "Point", "parse_point", "run_to"]

KINDS = ("trap", "event", "syscall", "sbi", "symbol", "pc", "priv", "instret")
POINT_HELP = ("trap:N, event:N, syscall:NAME[:K], sbi:NAME[:K], symbol:NAME, pc:ADDR, "
              "priv:U|S|M or instret:N")


class NotReached(BadInput):
    """The run ended, ran out of budget or was interrupted before the point: `result`
    says how."""

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class Point:
    """A place to stop at, as parsed from `KIND:VALUE[:COUNT]` (`syscall:write`,
    `pc:0x80200000:3`)."""
    kind: str
    value: str | int
    count: int = 1

    def __str__(self) -> str:
        suffix = f":{self.count}" if self.count != 1 else ""
        v = f"{self.value:#x}" if self.kind == "pc" and isinstance(self.value, int) else self.value
        return f"{self.kind}:{v}{suffix}"


def _int(text: str, what: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise BadInput(f"{what}: not a number: {text!r}") from None
    if value < 0:
        raise BadInput(f"{what}: must not be negative: {text!r}")
    return value


def parse_point(text: str) -> Point:
    """Parse `kind:value[:count]`; BadInput with the accepted forms otherwise."""
    kind, sep, rest = text.partition(":")
    if not sep or kind not in KINDS or not rest:
        raise BadInput(f"bad point {text!r}: expected {POINT_HELP}")
    if kind in ("trap", "event", "instret"):
        return Point(kind, _int(rest, text))
    if kind == "pc":
        return Point(kind, _int(rest, text))
    if kind == "priv":
        if rest.upper() not in ("U", "S", "M"):
            raise BadInput(f"bad point {text!r}: privilege must be U, S or M")
        return Point(kind, rest.upper())
    name, _, count = rest.partition(":")
    if not name:
        raise BadInput(f"bad point {text!r}: expected {POINT_HELP}")
    return Point(kind, name, _int(count, text) if count else 1)


def run_to(session: Session, point: Point | str, max_insns: int | None = None) -> RunResult:
    """Run `session` to `point`; NotReached (a BadInput) if the run ends, the budget
    runs out or Ctrl-C stops it before getting there."""
    # Imported here: the command line reads POINT_HELP without loading the machine.
    from ..machine import Stop
    from ..machine.events import TrapEvent
    from ..machine.until import AtAddress

    p = parse_point(point) if isinstance(point, str) else point
    if p.kind in ("trap", "event"):
        assert isinstance(p.value, int)
        result = session.run_until_event(p.value, max_insns)
    elif p.kind == "syscall":
        assert isinstance(p.value, str)
        if p.value == "*":
            result = session.run_until_trap(p.count, "user_ecall", max_insns)
        else:
            result = session.run_until_syscall(int(p.value) if p.value.isdigit() else p.value,
                                               p.count, max_insns)
    elif p.kind == "sbi":
        assert isinstance(p.value, str)
        result = session.run_until_sbi(p.value, p.count, max_insns)
    elif p.kind == "symbol":
        assert isinstance(p.value, str)
        result = session.run_until_symbol(p.value, max_insns=max_insns)
    elif p.kind == "pc":
        assert isinstance(p.value, int)
        result = session.run(max_insns, AtAddress(p.value))
    elif p.kind == "priv":
        assert isinstance(p.value, str)
        result = session.run_until_priv(p.value, max_insns)
    else:
        assert isinstance(p.value, int)
        result = session.run_until_instret(p.value)
    if result.stop not in (Stop.EVENT, Stop.BREAKPOINT):
        how = {Stop.HALT: f"the guest halted with status {result.exit_status}",
               Stop.BUDGET: "the instruction budget ran out"}.get(result.stop, result.message
                                                                   or result.stop.value)
        raise NotReached(f"never reached {p}: {how} after {len(session.events)} events", result)
    if p.kind == "trap" and not isinstance(result.event, TrapEvent):
        raise BadInput(f"event #{p.value} is an {getattr(result.event, 'insn', 'xret')}, "
                       f"not a trap: use event:{p.value}")
    return result
