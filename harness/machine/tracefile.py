"""The on-disk trace: the native core's event records, as it wrote them, behind a header.

`privlab run --trace-out FILE` writes this unless FILE ends in `.jsonl`. Turning a
million traps into JSON costs ~50 µs each in Python; this format costs a write of the
buffer the core already filled, so a traced run to disk runs at the in-memory trace's
speed. `privlab trace --from FILE` reads it back (as text, calls, JSON Lines, Perfetto
or HTML), and so does `read_trace()` in the API.

Layout (every integer little-endian; docs/inspect/exports.md, "Trace files"):

    8 bytes   magic b"PLTRACE\\0"
    u32       format version (1)
    u32       length of the JSON header that follows
    JSON      {"xlen", "initial" (privilege letter), "record_size",
               "fields": [[name, C type], ...]}   (harness/abi/native_layout.py)
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
from ..abi.native_layout import EVENT_FIELDS
from ..errors import BadInput
from .events import RECORD, EventLog

__all__ = ["MAGIC", "VERSION", "TraceFile", "TraceReader", "TraceWriter", "open_trace",
           "read_trace"]

MAGIC = b"PLTRACE\0"
VERSION = 1
_PREFIX = struct.Struct("<8sII")
_CHUNK = RECORD.size * 8192          # records read per chunk (~1 MiB)
_MAX_HEADER = 1 << 16


def _layout() -> list[list[str]]:
    return [[name, ctype] for name, ctype, _ in EVENT_FIELDS]


class TraceWriter:
    """Appends every event of a run to a trace file, batch by batch as the core hands
    them over: subscribe `write` with `EventLog.subscribe_raw`."""

    def __init__(self, out: IO[bytes], xlen: int, initial: Priv, harts: int = 1) -> None:
        fields: dict[str, object] = {"xlen": xlen, "initial": initial.letter,
                                     "record_size": RECORD.size, "fields": _layout()}
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


def _header(path: Path, f: IO[bytes]) -> tuple[int, Priv, int]:
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
        xlen, initial = int(header["xlen"]), Priv[str(header["initial"])]
        size, fields = int(header["record_size"]), header["fields"]
        harts = int(header.get("harts", 1))
    except (ValueError, KeyError, TypeError) as e:
        raise BadInput(f"{path}: damaged trace header ({e})") from None
    if xlen not in (32, 64):
        raise BadInput(f"{path}: damaged trace header (xlen {xlen})")
    if size != RECORD.size or fields != _layout():
        raise BadInput(f"{path}: its event records ({size} bytes) are not this privlab's "
                       f"({RECORD.size} bytes): record it again with this version")
    return xlen, initial, harts


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

    def chunks(self) -> Iterator[bytes]:
        """Whole records, about a MiB at a time, in event order."""
        carry = b""                  # part of a record, completed by the next read
        with self._file as f:
            while data := f.read(_CHUNK):
                data = carry + data
                whole = len(data) - len(data) % RECORD.size
                carry = data[whole:]
                if whole:
                    yield data[:whole]
        self.trailing_bytes = len(carry)


def open_trace(path: str | Path) -> TraceReader:
    """Open a trace file and check its header; a missing, foreign or damaged file is a
    BadInput."""
    p = Path(path)
    try:
        f = p.open("rb")
    except OSError as e:
        raise BadInput(f"{p}: cannot read: {e.strerror}") from None
    try:
        xlen, initial, harts = _header(p, f)
    except BaseException:
        f.close()
        raise
    return TraceReader(p, xlen, initial, f, harts=harts)


def read_trace(path: str | Path) -> TraceFile:
    """Read a whole trace file into an EventLog."""
    reader = open_trace(path)
    log = EventLog(keep=True)
    log.harts = reader.harts
    for chunk in reader.chunks():
        log.append_raw(chunk)
    return TraceFile(reader.path, reader.xlen, reader.initial, log, reader.trailing_bytes)
