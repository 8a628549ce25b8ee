"""JSON Lines export of a (filtered) trap flow.

Trap and xRET lines are the event objects of `Event.to_json()` (their fields:
docs/inspect/exports.md), and who and where: `owner` (the address space the row
belongs to, 0 for the kernel's own), `who` (`pid 2`, `pid 1 tid 1`, `satp 0x...` or
`kernel`), `pid` (null when not known), `tid` (when its process has several threads)
and `location` (symbol+offset of a trap's epc or where an xRET went).
Each system call adds one line of kind "syscall" after the event that completes it
(its sret, or the ecall itself for a call that never returns):

    {"kind": "syscall", "seq": 6, "exit_seq": 9, "instret": 2833470, "number": 64,
     "name": "write", "args": [1, 274877898072, 14], "call": "write(1, \\"Hello...\\", 14)",
     "ret": 14, "outcome": "returned", "pid": 1}

`privlab run --trace-out FILE.jsonl` writes the events alone, each the line of
`event_json` (harness/machine/events.py): JsonlWriter formats them from the core's
records in C (jsonl.c), a batch at a time, byte for byte as json.dumps would.

`privlab trace --format jsonl` writes rows (RowsJsonl): the C formats each row's
event from its record as JsonlWriter does, and ends it with the members Python adds
(owner, who, pid, tid, location, and the system-call line that follows), made once
for each combination a run shows and reused: a trap-heavy run shows the same few
processes and places on row after row. The lines are those of `row_json` and
`syscall_json`, which make them one at a time (tests/trace check the two agree).
"""

from __future__ import annotations

import ctypes
import json
import queue
import threading
from array import array
from collections.abc import Iterable, Sequence
from json.encoder import encode_basestring_ascii
from typing import IO, TYPE_CHECKING, Any

from ..abi.csr import EXCEPTION_NAMES, INTERRUPT_NAMES, Priv, cause_name
from ..machine.events import RECORD, decode, event_json
from ..machine.rawevents import TRAP, XRET
from .flow import FlowRow
from .syscalls import NOTHING, SyscallRecord
from .who import location

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..kernelinfo.symbols import Location

__all__ = ["LINE_MAX", "JsonlWriter", "RowsJsonl", "row_json", "syscall_json", "write_jsonl"]

LINE_MAX = 1024
"""Bytes a line of jsonl.c's can take at most: its keys, a dozen 20-digit numbers and
the longest of the strings below (checked when they are made)."""
_WORDS_MAX = 200
QUEUED = 16
"""Batches of records a background JsonlWriter holds at most before the run waits
for the disk (a batch is a few thousand events)."""


class _Words(ctypes.Structure):
    """jsonl.c's struct jsonl_words."""

    _fields_ = [("cause", ctypes.POINTER(ctypes.c_char_p)), ("ncodes", ctypes.c_uint32),
                ("letter", ctypes.POINTER(ctypes.c_char_p)), ("xret", ctypes.c_char_p * 2)]


def _quoted(text: str) -> bytes:
    out = json.dumps(text).encode()
    assert len(out) <= _WORDS_MAX, text
    return out


class _Table:
    """The strings jsonl.c puts in a line, JSON-quoted once, from harness/abi (the
    table only names the causes harness/abi names; a line with another is formatted
    in Python). Holds the ctypes arrays the struct points into."""

    def __init__(self) -> None:
        codes = max(*EXCEPTION_NAMES, *INTERRUPT_NAMES) + 1
        cause = [_quoted(cause_name(False, c)) if c in EXCEPTION_NAMES else None
                 for c in range(codes)]
        cause += [_quoted(cause_name(True, c)) if c in INTERRUPT_NAMES else None
                  for c in range(codes)]
        privs = {int(p): p for p in Priv}
        letter = [_quoted(privs[v].letter) if v in privs else None for v in range(4)]
        self._cause = (ctypes.c_char_p * len(cause))(*cause)
        self._letter = (ctypes.c_char_p * 4)(*letter)
        xret = (ctypes.c_char_p * 2)(_quoted("mret"), _quoted("sret"))
        self.words = _Words(self._cause, codes, self._letter, xret)


class JsonlWriter:
    """The events of a run as JSON Lines on `out` (a binary file), as the core hands
    them over: EventLog.subscribe_raw(JsonlWriter(out, harts).write). On a machine of
    several `harts`, each line names its `hart`.

    With `background`, the lines are formatted and written on a thread of their own
    while the guest runs on (a million traps make half a gigabyte of lines, and the
    C formatter and the write both let go of the GIL); close() waits for them. The
    file is the same either way: one thread writes it, batch after batch, in order."""

    def __init__(self, out: IO[bytes], harts: int = 1, *, background: bool = False) -> None:
        from .library import load_trace_library

        self._out = out
        self._harts = harts
        self._format = load_trace_library().jsonl_format
        self._table = _Table()
        self._words = self._table.words
        self._buf = ctypes.create_string_buffer(0)
        self.lines = 0
        self._error: BaseException | None = None
        self._queue: queue.Queue[tuple[int, bytes] | None] | None = None
        self._thread: threading.Thread | None = None
        if background:
            self._queue = queue.Queue(maxsize=QUEUED)
            self._thread = threading.Thread(target=self._drain, name="privlab-jsonl",
                                            daemon=True)
            self._thread.start()

    def write(self, first: int, raw: bytes) -> None:
        """EventLog.subscribe_raw's callback: events #first... as raw records."""
        if self._queue is None:
            self._lines(first, raw)
            return
        self._raise()
        self._queue.put((first, raw))

    def close(self) -> None:
        """Wait until every line queued is written; raise what writing them raised."""
        if self._queue is not None and self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _drain(self) -> None:
        assert self._queue is not None
        while (batch := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._lines(*batch)
                except BaseException as e:   # the run's thread raises it (a full disk)
                    self._error = e

    def _lines(self, first: int, raw: bytes) -> None:
        size = RECORD.size
        n = len(raw) // size
        while n:
            if len(self._buf) < n * LINE_MAX:
                self._buf = ctypes.create_string_buffer(n * LINE_MAX)
            done = ctypes.c_size_t()
            written = self._format(raw, n, first, self._harts, ctypes.byref(self._words),
                                   self._buf, ctypes.byref(done))
            self._out.write(memoryview(self._buf)[:written])
            k = done.value
            if k < n:       # a record the table does not name: as events.py does
                ev = decode(raw, k * size, first + k)
                self._out.write((json.dumps(event_json(ev, self._harts)) + "\n").encode())
                k += 1
            self.lines += k
            first, raw, n = first + k, raw[k * size:], n - k


def syscall_json(call: SyscallRecord) -> dict[str, Any]:
    n = len(call.spec.args) if call.spec else len(call.args)
    return {"kind": "syscall", "seq": call.entry_seq, "exit_seq": call.exit_seq,
            "instret": call.entry_instret, "number": call.number, "name": call.name,
            "args": list(call.args[:n]), "call": call.call_text(), "ret": call.ret,
            "outcome": call.outcome, "pid": call.pid}


def row_json(row: FlowRow, harts: int = 1,
             locate: Callable[[FlowRow], Location | None] | None = None) -> dict[str, Any]:
    """The event's JSON object, with who it belongs to and where it happened."""
    out = event_json(row.event(), harts)
    out["owner"] = row.owner
    out["who"] = row.who
    out["pid"] = row.pid
    if row.tid is not None:
        out["tid"] = row.tid
    out["location"] = location(row, locate)
    return out


def _completes(row: FlowRow, call: SyscallRecord) -> bool:
    """The call's line follows this row's: its return, or an ecall that never returns."""
    return call.exit_seq == row.seq or (call.outcome == "noreturn" and call.entry_seq == row.seq)


def write_jsonl(rows: Iterable[FlowRow], out: IO[str], harts: int = 1,
                locate: Callable[[FlowRow], Location | None] | None = None) -> int:
    """Write the rows' events (and completed syscalls); returns the lines written. On
    a machine of several `harts`, each event names its `hart`; `locate` gives
    symbols for `location` (without it, or where none covers it, the address)."""
    writer = RowsJsonl(out, harts, locate)
    batch: list[FlowRow] = []
    for row in rows:                 # a batch at a time: `rows` may be a whole long run
        batch.append(row)
        if len(batch) == BATCH:
            writer.write(batch)
            batch = []
    writer.write(batch)
    return writer.lines


BATCH = 4096
"""Rows write_jsonl formats at a time."""


_U = Priv.U
CACHED = 1 << 16
"""Tails (and call texts) a RowsJsonl remembers before it starts over: a run shows a
few hundred combinations of who and where; this bounds one that shows more."""


class RowsJsonl:
    """Rows of a trap flow as JSON Lines on `out` (a text file), batch after batch as
    `privlab trace` hands them over: the lines of `row_json` and `syscall_json`, made
    in bulk. Each row's event is formatted by jsonl.c from its record; the members
    after it (who and where, and the system-call line its event completes) are made
    once per combination and remembered."""

    def __init__(self, out: IO[str], harts: int = 1,
                 locate: Callable[[FlowRow], Location | None] | None = None) -> None:
        from .library import load_trace_library

        self._out = out
        self._harts = harts
        self._locate = locate
        self._format = load_trace_library().jsonl_rows
        self._table = _Table()
        self._buf = ctypes.create_string_buffer(0)
        self._tails: dict[tuple[int, int | None, int | None, bool, str], str] = {}
        self._calls: dict[tuple[int, int, tuple[int, ...]], tuple[object, str, str, str]] = {}
        self.lines = 0

    def write(self, rows: Sequence[FlowRow]) -> None:
        """Write these rows' lines (and the lines of the calls they complete)."""
        locate, tails, cached = self._locate, self._tails, []
        seqs = array("q")
        records = []
        calls = 0
        for row in rows:
            records.append(row.record or _record(row))
            seqs.append(row.seq)
            where = locate(row) if locate is not None else None
            loc = where.name if where is not None and where.symbol is not None else \
                f"{row.pc if row.is_trap else row.target:#x}"     # as location() writes it
            key = (row.owner, row.pid, row.tid, row.priv_from is _U or row.priv_to is _U, loc)
            tail = tails.get(key)
            if tail is None:
                if len(tails) >= CACHED:
                    tails.clear()
                tail = tails[key] = self._tail(row, loc)
            call = row.syscall
            if call is not None and _completes(row, call):
                tail += self._call_line(call)
                calls += 1
            cached.append(tail)
        self._lines(b"".join(records), seqs, cached)
        self.lines += len(cached) + calls

    @staticmethod
    def _tail(row: FlowRow, loc: str) -> str:
        """`, "owner": ..., "location": ...}` and the line's end: the members row_json
        adds to the event's, as json.dumps writes them."""
        more: dict[str, Any] = {"owner": row.owner, "who": row.who, "pid": row.pid}
        if row.tid is not None:
            more["tid"] = row.tid
        more["location"] = loc
        return ", " + json.dumps(more)[1:] + "\n"

    def _call_line(self, call: SyscallRecord) -> str:
        """syscall_json(call)'s line. What calls alike share (the same number and
        arguments, nothing read from memory: the name, the arguments and the call's
        text, JSON-encoded) is made once."""
        key = (call.number, call.xlen, call.args)
        known = self._calls.get(key) \
            if call.inputs is NOTHING and call.outputs is NOTHING else None
        if known is None or known[0] is not call.spec:
            n = len(call.spec.args) if call.spec else len(call.args)
            known = (call.spec, encode_basestring_ascii(call.name),
                     ", ".join(map(str, call.args[:n])),
                     encode_basestring_ascii(call.call_text()))
            if call.inputs is NOTHING and call.outputs is NOTHING:
                if len(self._calls) >= CACHED:
                    self._calls.clear()
                self._calls[key] = known
        exit_seq, ret, pid = call.exit_seq, call.ret, call.pid
        return _CALL % (call.entry_seq, "null" if exit_seq is None else exit_seq,
                        call.entry_instret, call.number, known[1], known[2], known[3],
                        "null" if ret is None else ret,
                        encode_basestring_ascii(call.outcome), "null" if pid is None else pid)

    def _put(self, size: int) -> None:
        """Write the first `size` bytes of the buffer (ASCII: JSON's escapes): to the
        binary file beneath a text file when there is one (the text layer flushed
        first, to keep the order), without decoding them and encoding them again."""
        binary = getattr(self._out, "buffer", None)
        if binary is not None:
            self._out.flush()
            binary.write(memoryview(self._buf)[:size])
        else:
            self._out.write(ctypes.string_at(self._buf, size).decode("ascii"))

    def _lines(self, raw: bytes, seqs: array[int], tails: list[str]) -> None:
        """Format the rows whose records are `raw` through jsonl.c, a row the C cannot
        name in Python (as JsonlWriter does), and write them."""
        size = RECORD.size
        first = 0
        while first < len(tails):
            n = len(tails) - first
            block = "\0".join(tails[first:]).encode("ascii")
            need = n * LINE_MAX + len(block)
            if len(self._buf) < need:
                self._buf = ctypes.create_string_buffer(need)
            done = ctypes.c_size_t()
            address, _ = seqs.buffer_info()
            written = self._format(raw[first * size:], n,
                                   ctypes.c_void_p(address + first * seqs.itemsize),
                                   self._harts, ctypes.byref(self._table.words), block,
                                   self._buf, ctypes.byref(done))
            self._put(written)
            k = first + done.value
            if k < len(tails):
                ev = decode(raw, k * size, seqs[k])
                line = json.dumps(event_json(ev, self._harts))
                self._out.write(line[:-1] + tails[k])
                k += 1
            first = k


_CALL = ('{"kind": "syscall", "seq": %d, "exit_seq": %s, "instret": %d, "number": %d, '
         '"name": %s, "args": [%s], "call": %s, "ret": %s, "outcome": %s, "pid": %s}\n')
"""syscall_json's line, as json.dumps writes it (%d: an int as int.__repr__ does)."""


def _record(row: FlowRow) -> bytes:
    """The core's record of a row's event, for a row made without it (Flow.rows)."""
    return RECORD.pack(row.instret, row.clock, row.cause, row.pc, row.tval, row.target,
                       row.status_before, row.status_after, row.satp, *row.args,
                       row.code, TRAP if row.is_trap else XRET, int(row.interrupt),
                       int(row.priv_from), int(row.priv_to), row.hart)
