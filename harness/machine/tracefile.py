"""The on-disk trace: the native core's event records, as it wrote them, behind a header.

`privlab run --trace-out FILE` writes this unless FILE ends in `.jsonl`. It costs a
write of the buffer the core already filled, so a traced run to disk runs at the
in-memory trace's speed; JSON Lines (formatted from the same records in C, jsonl.c)
cost 1.3 to 1.7 times its CPU and take half as much room again. `privlab trace --from
FILE` reads it back (as text, calls, JSON Lines, Perfetto or HTML), and so does
`read_trace()` in the API.

Layout (every integer little-endian; docs/inspect/exports.md, "Trace files"):

    8 bytes   magic b"PLTRACE\\0"
    u32       format version (1)
    u32       length of the JSON header that follows
    JSON      {"xlen", "initial" (privilege letter), "record_size",
               "fields": [[name, C type], ...]   (harness/abi/native_layout.py),
               "icount_shift" (the run's clock: 2^N ns per instruction),
               "harts" (only when more than one)}
    records   record_size bytes each, in event order from event #0

A run cut short (Ctrl-C, a crash, a full disk) leaves whole records up to its last
drain and, at worst, part of one more: the reader keeps the whole ones and says so.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..abi.csr import Priv
from ..abi.native_layout import EVENT_FIELDS, MAX_HARTS, EventKind
from ..errors import BadInput
from ..pace import DEFAULT_ICOUNT_SHIFT, MAX_ICOUNT_SHIFT
from .events import RECORD, EventLog

__all__ = ["MAGIC", "VERSION", "TraceFile", "TraceReader", "TraceWriter", "open_trace",
           "read_trace"]

MAGIC = b"PLTRACE\0"
VERSION = 1
_PREFIX = struct.Struct("<8sII")
_CHUNK = RECORD.size * 8192          # records read per chunk (~1 MiB)
_MAX_HEADER = 1 << 16


def _offsets() -> dict[str, int]:
    sizes = {"uint64_t": 8, "uint32_t": 4, "uint8_t": 1}
    out, at = {}, 0
    for name, ctype, _ in EVENT_FIELDS:
        out[name] = at
        at += sizes[ctype]
    return out


_OFFSETS = _offsets()
# What the core writes in each one-byte field (the hart's: below the header's harts).
_ONE_BYTE_FIELDS = {"kind": bytes([EventKind.TRAP, EventKind.XRET]), "interrupt": b"\0\1",
                    "priv_from": bytes([Priv.U, Priv.S, Priv.M]),
                    "priv_to": bytes([Priv.U, Priv.S, Priv.M])}


def _layout() -> list[list[str]]:
    return [[name, ctype] for name, ctype, _ in EVENT_FIELDS]


class TraceWriter:
    """Appends every event of a run to a trace file, batch by batch as the core hands
    them over: subscribe `write` with `EventLog.subscribe_raw`."""

    def __init__(self, out: IO[bytes], xlen: int, initial: Priv, harts: int = 1,
                 icount_shift: int = DEFAULT_ICOUNT_SHIFT) -> None:
        fields: dict[str, object] = {"xlen": xlen, "initial": initial.letter,
                                     "record_size": RECORD.size, "fields": _layout(),
                                     "icount_shift": icount_shift}
        if harts > 1:
            fields["harts"] = harts        # one hart's header is as it always was
        header = json.dumps(fields, separators=(",", ":")).encode()
        out.write(_PREFIX.pack(MAGIC, VERSION, len(header)) + header)
        self.out = out
        self._records_at = _PREFIX.size + len(header)
        self.events = 0              # events in the file

    def write(self, first: int, raw: bytes) -> None:
        if first != self.events:
            if first > self.events:
                raise BadInput(f"trace file: events #{self.events}..{first - 1} were "
                               "never handed over")
            # gdb's reverse execution went back to event #first and runs forward from
            # there again: the file follows the timeline the run ends on.
            self.out.seek(self._records_at + first * RECORD.size)
            self.out.truncate()
            self.events = first
        self.out.write(raw)
        self.events += len(raw) // RECORD.size


@dataclass(frozen=True)
class TraceFile:
    """A trace file read back: its events (a complete EventLog) and what the run was."""

    path: Path
    xlen: int
    initial: Priv
    events: EventLog
    trailing_bytes: int     # part of a record after the last whole one (a cut-short run)
    icount_shift: int | None = None   # the run's clock (None: a file that did not say)


def _integer(path: Path, header: dict[str, object], key: str) -> int:
    value = header[key]
    if type(value) is not int:          # 1e400, "64", true: not what a writer wrote
        raise BadInput(f"{path}: damaged trace header ({key} is not an integer)")
    return value


def _header(path: Path, f: IO[bytes]) -> tuple[int, Priv, int, int | None]:
    prefix = f.read(_PREFIX.size)
    if len(prefix) < _PREFIX.size or prefix[:len(MAGIC)] != MAGIC:
        raise BadInput(f"{path}: not a privlab trace file (written by `privlab run "
                       "--trace-out FILE`; a .jsonl trace is JSON Lines, not this)")
    _, version, length = _PREFIX.unpack(prefix)
    if version != VERSION:
        raise BadInput(f"{path}: trace format version {version}; this privlab reads "
                       f"version {VERSION}")
    if length > _MAX_HEADER:
        raise BadInput(f"{path}: damaged trace header (length {length})")
    raw = f.read(length)
    try:
        header = json.loads(raw)
    except (ValueError, RecursionError):
        header = None
    if not isinstance(header, dict):
        raise BadInput(f"{path}: damaged trace header (not a JSON object)")
    for key in ("xlen", "initial", "record_size", "fields"):
        if key not in header:
            raise BadInput(f"{path}: damaged trace header (no {key!r})")
    xlen, size = _integer(path, header, "xlen"), _integer(path, header, "record_size")
    harts = _integer(path, header, "harts") if "harts" in header else 1
    # Files written before the clock was recorded say nothing of it: None.
    shift = _integer(path, header, "icount_shift") if "icount_shift" in header else None
    if shift is not None and not 0 <= shift <= MAX_ICOUNT_SHIFT:
        raise BadInput(f"{path}: damaged trace header (icount_shift {shift})")
    initial = Priv.__members__.get(header["initial"]) \
        if isinstance(header["initial"], str) else None
    if initial is None:
        raise BadInput(f"{path}: damaged trace header (initial privilege "
                       f"{header['initial']!r:.40})")
    if xlen not in (32, 64):
        raise BadInput(f"{path}: damaged trace header (xlen {xlen})")
    if not 1 <= harts <= MAX_HARTS:
        raise BadInput(f"{path}: damaged trace header (harts {harts}, not 1 to {MAX_HARTS})")
    if size != RECORD.size or header["fields"] != _layout():
        raise BadInput(f"{path}: its event records ({size} bytes) are not this privlab's "
                       f"({RECORD.size} bytes): record it again with this version")
    return xlen, initial, harts, shift


@dataclass
class TraceReader:
    """A trace file opened for reading in chunks (bounded memory): its header, then
    `chunks()`; `trailing_bytes` is known once they are read."""

    path: Path
    xlen: int
    initial: Priv
    _file: IO[bytes]
    trailing_bytes: int = 0
    harts: int = 1               # the machine's (--smp)
    icount_shift: int | None = None   # the run's clock (None: a file that did not say)

    def chunks(self) -> Iterator[bytes]:
        """Whole records, about a MiB at a time, in event order; a record the core
        could not have written (an unknown kind, privilege or hart) is a BadInput."""
        carry = b""                  # part of a record, completed by the next read
        seen = 0
        with self._file as f:
            while data := f.read(_CHUNK):
                data = carry + data
                whole = len(data) - len(data) % RECORD.size
                carry = data[whole:]
                if whole:
                    self._check(data[:whole], seen)
                    seen += whole // RECORD.size
                    yield data[:whole]
        self.trailing_bytes = len(carry)

    def _check(self, records: bytes, first: int) -> None:
        """Each one-byte field against the values the core writes, at C speed: the
        column of that field, with the allowed bytes deleted, must be empty."""
        allowed = dict(_ONE_BYTE_FIELDS, hart=bytes(range(self.harts)))
        for name, ok in allowed.items():
            column = records[_OFFSETS[name]::RECORD.size]
            if column.translate(None, ok):
                at = next(i for i, v in enumerate(column) if v not in ok)
                raise BadInput(f"{self.path}: damaged event record #{first + at} "
                               f"({name} {column[at]})")


def open_trace(path: str | Path) -> TraceReader:
    """Open a trace file and check its header; a missing, foreign or damaged file is a
    BadInput."""
    p = Path(path)
    try:
        f = p.open("rb")
    except OSError as e:
        raise BadInput(f"{p}: cannot read: {e.strerror}") from None
    try:
        xlen, initial, harts, shift = _header(p, f)
    except BaseException:
        f.close()
        raise
    return TraceReader(p, xlen, initial, f, harts=harts, icount_shift=shift)


def read_trace(path: str | Path) -> TraceFile:
    """Read a whole trace file into an EventLog."""
    reader = open_trace(path)
    log = EventLog(keep=True)
    log.harts = reader.harts
    for chunk in reader.chunks():
        log.append_raw(chunk)
    return TraceFile(reader.path, reader.xlen, reader.initial, log, reader.trailing_bytes,
                     reader.icount_shift)
