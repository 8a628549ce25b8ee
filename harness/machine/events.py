"""Trap and xRET events: records, the in-memory log, and the JSON Lines format.

The native core writes fixed-size binary records (layout in harness/abi/native_layout.py);
the log keeps them as bytes and decodes on demand, so recording a million traps costs
little. The JSON fields are documented in docs/inspect/exports.md ("JSON Lines").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..abi.csr import Priv, cause_name
from ..abi.native_layout import EVENT_FIELDS, EVENT_STRUCT
from ..native import EventKind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

__all__ = ["FIELD_NAMES", "RECORD", "Event", "EventLog", "TrapEvent", "XretEvent", "event_json"]

_NAMES = [name for name, _, _ in EVENT_FIELDS]

RECORD = EVENT_STRUCT
"""The binary event record, for bulk decoders (`RECORD.iter_unpack(raw)`)."""
FIELD_NAMES: tuple[str, ...] = tuple(_NAMES)
"""Field names of a RECORD tuple, in order (harness/abi/native_layout.py EVENT_FIELDS)."""


def _priv(value: int) -> str:
    return Priv(value).letter


@dataclass(frozen=True, slots=True)
class TrapEvent:
    """A trap taken: from privilege `priv_from` into `priv_to`."""

    seq: int
    instret: int
    interrupt: bool
    code: int
    cause: int
    epc: int
    tval: int
    priv_from: Priv
    priv_to: Priv
    vector: int
    status_before: int
    status_after: int
    satp: int
    args: tuple[int, ...]   # a0..a7 when the trap was taken
    hart: int = 0           # mhartid of the hart that took it
    clock: int = 0          # every hart's instructions before it (instret with one hart)

    kind = "trap"

    @property
    def name(self) -> str:
        return cause_name(self.interrupt, self.code)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "trap", "seq": self.seq, "instret": self.instret,
                "interrupt": self.interrupt, "code": self.code, "cause": self.cause,
                "name": self.name, "epc": self.epc, "tval": self.tval,
                "from": self.priv_from.letter, "to": self.priv_to.letter,
                "vector": self.vector, "status_before": self.status_before,
                "status_after": self.status_after}


@dataclass(frozen=True, slots=True)
class XretEvent:
    """An mret or sret: from `priv_from` back to `priv_to` at `pc`."""

    seq: int
    instret: int
    insn: str
    at: int
    pc: int
    priv_from: Priv
    priv_to: Priv
    status_before: int
    status_after: int
    satp: int
    a0: int
    hart: int = 0           # mhartid of the hart that executed it
    clock: int = 0          # every hart's instructions before it (instret with one hart)

    kind = "xret"

    def to_json(self) -> dict[str, Any]:
        return {"kind": "xret", "seq": self.seq, "instret": self.instret, "insn": self.insn,
                "from": self.priv_from.letter, "to": self.priv_to.letter, "pc": self.pc,
                "at": self.at, "status_before": self.status_before,
                "status_after": self.status_after}


Event = TrapEvent | XretEvent


def decode(raw: bytes, offset: int, seq: int) -> Event:
    f = dict(zip(_NAMES, RECORD.unpack_from(raw, offset), strict=True))
    args = tuple(f[f"a{i}"] for i in range(8))
    if f["kind"] == EventKind.TRAP:
        return TrapEvent(seq=seq, instret=f["instret"], interrupt=bool(f["interrupt"]),
                         code=f["code"], cause=f["cause"], epc=f["epc"], tval=f["tval"],
                         priv_from=Priv(f["priv_from"]), priv_to=Priv(f["priv_to"]),
                         vector=f["pc"], status_before=f["status_before"],
                         status_after=f["status_after"], satp=f["satp"], args=args,
                         hart=f["hart"], clock=f["clock"])
    return XretEvent(seq=seq, instret=f["instret"], insn="sret" if f["code"] else "mret",
                     at=f["epc"], pc=f["pc"], priv_from=Priv(f["priv_from"]),
                     priv_to=Priv(f["priv_to"]), status_before=f["status_before"],
                     status_after=f["status_after"], satp=f["satp"], a0=args[0],
                     hart=f["hart"], clock=f["clock"])


def event_json(ev: Event, harts: int) -> dict[str, Any]:
    """An event's JSON object; on a machine of several harts it names the hart."""
    out = ev.to_json()
    if harts > 1:
        out["hart"] = ev.hart
    return out


Subscriber = Callable[[Event], None]
RawSubscriber = Callable[[int, bytes], None]


RECENT = 64


class EventLog:
    """Every trap and xRET of a run, in order. Stored as raw records; indexing and
    iteration decode. Subscribers see each event as it is drained from the core. With
    keep=False only the most recent events are kept (for diagnostics)."""

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self._recent: deque[tuple[int, bytes]] = deque(maxlen=RECENT)
        self._chunks: list[bytes] = []
        self._starts: list[int] = []
        self._count = 0
        self._subscribers: list[Subscriber] = []
        self._raw_subscribers: list[RawSubscriber] = []
        # The events of the last batch, as decoded for the subscribers: a run stopped
        # at an event reads them again (`tail`).
        self._decoded: list[Event] = []
        # Harts of the machine: with more than one, JSON lines name each event's
        # `hart` (with one they stay as they always were).
        self.harts = 1

    def __len__(self) -> int:
        return self._count

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """Call fn(event) for every new event; returns a function that unsubscribes."""
        self._subscribers.append(fn)
        return lambda: self._subscribers.remove(fn)

    def subscribe_raw(self, fn: RawSubscriber) -> Callable[[], None]:
        """Call fn(seq of the first, records) for every batch of new events, as the
        core hands them over (after the subscribers have seen each): bulk readers
        unpack them with RECORD, whether or not the log keeps them."""
        self._raw_subscribers.append(fn)
        return lambda: self._raw_subscribers.remove(fn)

    def append_raw(self, raw: bytes) -> None:
        n = len(raw) // RECORD.size
        if not n:
            return
        first = self._count
        self._count += n
        if self.keep:
            self._starts.append(first)
            self._chunks.append(raw)
        size = RECORD.size
        for i in range(max(0, n - RECENT), n):
            self._recent.append((first + i, raw[i * size:(i + 1) * size]))
        self._decoded = []
        if self._subscribers:
            events = self._decoded
            for i in range(n):
                ev = decode(raw, i * RECORD.size, first + i)
                events.append(ev)
                for fn in list(self._subscribers):
                    fn(ev)
        for raw_fn in list(self._raw_subscribers):
            raw_fn(first, raw)

    def restore_position(self, count: int, chunks: list[bytes], starts: list[int]) -> None:
        """Go back (or forward) to the log as it was when it held `count` events, from
        the chunk lists saved then (harness/machine/snapshot.py). Subscribers are not
        told: they see the events that re-execution appends again."""
        self._chunks, self._starts = list(chunks), list(starts)
        self._count = count
        self._recent.clear()
        self._decoded = []
        if self.keep:
            size = RECORD.size
            for first, raw in zip(self._starts, self._chunks, strict=True):
                n = len(raw) // size
                if first + n <= count - RECENT:
                    continue
                for i in range(max(0, count - RECENT - first), n):
                    self._recent.append((first + i, raw[i * size:(i + 1) * size]))

    def __getitem__(self, index: int) -> Event:
        if index < 0:
            index += self._count
        if not self.keep or not 0 <= index < self._count:
            raise IndexError(index)
        lo, hi = 0, len(self._starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._starts[mid] <= index:
                lo = mid
            else:
                hi = mid - 1
        return decode(self._chunks[lo], (index - self._starts[lo]) * RECORD.size, index)

    def __iter__(self) -> Iterator[Event]:
        for start, raw in zip(self._starts, self._chunks, strict=True):
            for i in range(len(raw) // RECORD.size):
                yield decode(raw, i * RECORD.size, start + i)

    def raw_chunks(self, start: int = 0) -> Iterator[tuple[int, bytes]]:
        """(seq of the first record, raw records) for every kept event from `start`
        on: bulk readers unpack them with RECORD without building Event objects."""
        size = RECORD.size
        for first, raw in zip(self._starts, self._chunks, strict=True):
            n = len(raw) // size
            if first + n <= start:
                continue
            skip = max(0, start - first)
            yield first + skip, raw[skip * size:] if skip else raw

    def tail(self, n: int) -> list[Event]:
        """The last n events (at most RECENT when the log does not keep everything)."""
        if 0 < n <= len(self._decoded):
            return self._decoded[-n:]        # (events are frozen: shared as they are)
        if self.keep:
            return [self[i] for i in range(max(0, self._count - n), self._count)]
        return [decode(raw, 0, seq) for seq, raw in list(self._recent)[-n:]] if n else []

    def traps(self) -> list[TrapEvent]:
        return [e for e in self if isinstance(e, TrapEvent)]

    def write_jsonl(self, out: IO[str]) -> None:
        import json  # here: a run that writes no JSON does not load the module

        for ev in self:
            out.write(json.dumps(event_json(ev, self.harts)) + "\n")
