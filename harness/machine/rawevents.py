"""Events as raw tuples: fast bulk reading of an EventLog without Event objects.

A run of a syscall-heavy program records hundreds of thousands of events; building
a dataclass for each costs more than the run. Analyses (harness/trace/flow.py) read
`RECORD` tuples instead, with the field positions named here, and `record_of()` turns
a decoded Event back into the same tuple for live subscribers.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..native import EventKind
from .events import FIELD_NAMES, RECORD, Event, EventLog, TrapEvent

__all__ = [
    "A0",
    "A7",
    "AT",
    "CAUSE",
    "CLOCK",
    "CODE",
    "EPC",
    "FROM",
    "HART",
    "INSTRET",
    "INTERRUPT",
    "KIND",
    "PC",
    "SATP",
    "STATUS_AFTER",
    "STATUS_BEFORE",
    "TO",
    "TRAP",
    "TVAL",
    "XRET",
    "Record",
    "iter_records",
    "record_of",
]

Record = tuple[int, ...]

_I = {name: i for i, name in enumerate(FIELD_NAMES)}
INSTRET = _I["instret"]
CLOCK = _I["clock"]      # every hart's instructions before the event
CAUSE = _I["cause"]
EPC = _I["epc"]          # trap: xepc; xret: the xRET's own address
AT = EPC
TVAL = _I["tval"]
PC = _I["pc"]            # pc after the event: the trap vector, or where the xRET went
STATUS_BEFORE = _I["status_before"]
STATUS_AFTER = _I["status_after"]
SATP = _I["satp"]
A0 = _I["a0"]
A7 = _I["a7"]
CODE = _I["code"]        # xret: 0 mret, 1 sret
KIND = _I["kind"]
INTERRUPT = _I["interrupt"]
FROM = _I["priv_from"]
TO = _I["priv_to"]
HART = _I["hart"]        # mhartid of the hart the event happened on
TRAP = int(EventKind.TRAP)
XRET = int(EventKind.XRET)


def iter_records(log: EventLog, start: int = 0,
                 stop: int | None = None) -> Iterator[tuple[int, Record]]:
    """(seq, record) for each kept event from seq `start` on (up to `stop`, not
    included, if given)."""
    for first, raw in log.raw_chunks(start):
        for seq, rec in enumerate(RECORD.iter_unpack(raw), first):
            if stop is not None and seq >= stop:
                return
            yield seq, rec


def record_of(e: Event) -> Record:
    """The RECORD tuple an Event was decoded from."""
    out = [0] * len(FIELD_NAMES)
    out[INSTRET], out[SATP] = e.instret, e.satp
    out[FROM], out[TO] = int(e.priv_from), int(e.priv_to)
    out[STATUS_BEFORE], out[STATUS_AFTER] = e.status_before, e.status_after
    out[HART], out[CLOCK] = e.hart, e.clock
    if isinstance(e, TrapEvent):
        out[KIND], out[CODE], out[CAUSE] = TRAP, e.code, e.cause
        out[INTERRUPT], out[EPC], out[TVAL], out[PC] = int(e.interrupt), e.epc, e.tval, e.vector
        out[A0:A7 + 1] = e.args
    else:
        out[KIND], out[CODE] = XRET, int(e.insn == "sret")
        out[AT], out[PC], out[A0] = e.at, e.pc, e.a0
    return tuple(out)
