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

On one hart, FlowStream (harness/trace/stream.py) hands RowsJsonl.write_flow whole
stretches of events with no row made: jsonl.c's jsonl_flow writes each row, its tail
from a cache of the tails Python made (`_remember`), and each call's line from the
pairer's records. The lines go to the file on a thread of their own (Behind) while the
guest runs on.
"""

from __future__ import annotations

import ctypes
import json
import queue
import re
import threading
import weakref
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import IO, TYPE_CHECKING, Any, Generic, TypeVar

from ..abi.csr import EXCEPTION_NAMES, INTERRUPT_NAMES, Priv, cause_name
from ..abi.pairing import ACTION, CALL, JSONL_CALLS_FIELDS, NOBODY, ArgForm, FlowStop
from ..machine.events import RECORD, decode, event_json
from ..machine.rawevents import TRAP, XRET
from .flow import Flow, FlowRow, PairedRun
from .pairer import call_flags
from .syscalls import NOTHING, ArgKind, CallSpec, SyscallRecord
from .who import location

if TYPE_CHECKING:
    from ..kernelinfo.symbols import Location

__all__ = ["LINE_MAX", "JsonlWriter", "RowsJsonl", "row_json", "syscall_json", "write_jsonl"]

T = TypeVar("T")

LINE_MAX = 1024
"""Bytes a line of jsonl.c's can take at most: its keys, a dozen 20-digit numbers and
the longest of the strings below (checked when they are made)."""
_WORDS_MAX = 200
QUEUED = 16
"""Items a Worker holds at most before the run waits for the disk: a background
JsonlWriter's batches of records (a few thousand events each), a Behind's buffers."""


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
        self._worker: Worker[tuple[int, bytes]] | None = \
            Worker(lambda batch: self._lines(*batch), "privlab-jsonl") if background else None

    def write(self, first: int, raw: bytes) -> None:
        """EventLog.subscribe_raw's callback: events #first... as raw records."""
        if self._worker is None:
            self._lines(first, raw)
            return
        self._worker.put((first, raw))

    def close(self) -> None:
        """Wait until every line queued is written; raise what writing them raised."""
        if self._worker is not None:
            self._worker.close()

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
    writer.close()
    return writer.lines


BATCH = 4096
"""Rows write_jsonl formats at a time."""


_U = Priv.U
CACHED = 1 << 16
"""Tails (and call texts) a RowsJsonl remembers before it starts over: a run shows a
few hundred combinations of who and where; this bounds one that shows more."""


_CTYPES: dict[str, type[ctypes._Pointer[Any]] | type[ctypes.c_uint32]] = {
    "const char *const *": ctypes.POINTER(ctypes.c_char_p),
    "const uint8_t *": ctypes.POINTER(ctypes.c_uint8), "uint32_t": ctypes.c_uint32}


class _Calls(ctypes.Structure):
    """jsonl.c's struct jsonl_calls, from the fields harness/abi/pairing.py renders."""

    _fields_ = [(name, _CTYPES[ctype]) for name, ctype, _, _ in JSONL_CALLS_FIELDS]


NUMBERS_MAX = 1 << 16
"""System-call numbers a spec may use for jsonl.c to write call lines (a table
with more, which no kernel here has, leaves every line to Python)."""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
_ROOM = 1 << 20          # bytes jsonl_flow writes at a time
_PROGRESS = ("events", "actions", "lines", "stop")


def _address(data: bytes) -> int:
    """Where a bytes object's data is (valid while it is referenced)."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0


class _CallTable:
    """The spec as jsonl.c reads it (struct jsonl_calls), with the arrays it points
    into. A call whose name is not a plain identifier, or one with an argument shown
    by name (flags, signals), is left to Python."""

    def __init__(self, specs: dict[int, CallSpec], xlen: int) -> None:
        numbers = max((n for n in specs if n >= 0), default=-1) + 1
        self.usable = numbers <= NUMBERS_MAX
        numbers = min(numbers, NUMBERS_MAX)
        names: list[bytes | None] = [None] * numbers
        nargs, form, flags = bytearray(numbers), bytearray(6 * numbers), bytearray(numbers)
        for number, spec in specs.items():
            if not 0 <= number < numbers:
                continue
            names[number] = spec.name.encode()
            flags[number] = call_flags(spec)
            if not _IDENTIFIER.fullmatch(spec.name) or len(spec.args) > 6:
                nargs[number], form[6 * number] = 1, ArgForm.TEXT
                continue
            nargs[number] = len(spec.args)
            for i, arg in enumerate(spec.args):
                form[6 * number + i] = _FORMS.get(arg.kind, ArgForm.POINTER)
        self._arrays = ((ctypes.c_char_p * numbers)(*names), (ctypes.c_uint8 * numbers)(*nargs),
                        (ctypes.c_uint8 * (6 * numbers))(*form),
                        (ctypes.c_uint8 * numbers)(*flags))
        u8 = ctypes.POINTER(ctypes.c_uint8)
        name, nargs_, form_, flags_ = self._arrays
        self.struct = _Calls(ctypes.cast(name, ctypes.POINTER(ctypes.c_char_p)),
                             ctypes.cast(nargs_, u8), ctypes.cast(form_, u8),
                             ctypes.cast(flags_, u8), numbers, xlen)


_FORMS = {ArgKind.INT: ArgForm.INT, ArgKind.UINT: ArgForm.UINT,
          ArgKind.OPEN_FLAGS: ArgForm.TEXT, ArgKind.SIGNAL: ArgForm.TEXT,
          ArgKind.SIGNAL_SET: ArgForm.TEXT}
"""How each kind of argument reads with nothing read from memory (syscalls.py's
SyscallRecord.arg_text); the other kinds are pointers."""


@dataclass(slots=True)
class Shown:
    """What RowsJsonl.write_flow showed: `events` rows, taking the pairer's first
    `acted` actions after those already taken (each a return whose line it wrote)."""

    events: int
    acted: int


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
        self._lib = load_trace_library()
        self._native_tails: int | None = None    # jsonl.c's cache of tails
        self._naming = -1                        # the flow's naming they were made at
        self._spec_table: _CallTable | None = None
        self._spec_for: tuple[dict[int, CallSpec], int] | None = None
        self._progress = (ctypes.c_size_t * len(_PROGRESS))()
        self._behind: Behind | None = None

    def write_flow(self, flow: Flow, raw: bytes, end: int, first: int, i: int,
                   owners: array[int], run: PairedRun, own_from: int,
                   pids: dict[int, int | None], returned: bytearray,
                   row: Callable[[int], FlowRow]) -> Shown:
        """Write the rows of events i..end of `raw` (records of events #first...) and the
        lines of the calls they return from, in C, as far as it can (FlowStream's
        native stretches, harness/trace/stream.py). `owners`: shape.c's owner of each
        event; `run`: the pairer's run from event #first + i, its calls from number
        `own_from` on written here (`returned` flags each whose line was), `pids` the
        process of each address space they were made in; `row(k)` makes the row of
        event k, whose tail Python makes when the C has none for it."""
        lib, progress = self._lib, self._progress
        table = self._call_table(flow)
        if not table.usable:
            return Shown(0, 0)
        if self._native_tails is None:
            self._native_tails = lib.jsonl_tails_new()
            if not self._native_tails:
                raise MemoryError("no memory for the rows' tails")
            weakref.finalize(self, lib.jsonl_tails_free, self._native_tails)
        if flow.naming != self._naming:       # who and where were made from old names
            lib.jsonl_tails_clear(self._native_tails)
            self._naming = flow.naming
        satps = array("Q", pids)
        pid = array("q", (NOBODY if p is None else p for p in pids.values()))
        paired, size = run.paired, RECORD.size
        calls = len(paired.raw_calls) // CALL.size
        owners_at, satps_at, pid_at = (a.buffer_info()[0] for a in (owners, satps, pid))
        returned_at = (ctypes.c_uint8 * len(returned)).from_buffer(returned) if returned else None
        raw_at, acts_at = _address(raw), _address(paired.raw_actions)   # (held: raw, paired)
        nacts = len(paired.raw_actions) // ACTION.size
        k, acted = i, run.acted
        room = _ROOM
        while k < end:
            if len(self._buf) < room:
                self._buf = ctypes.create_string_buffer(room)
            written = lib.jsonl_flow(
                self._native_tails, raw_at + k * size, end - k, first + k, owners_at + 8 * k,
                paired.raw_calls, calls, run.base, own_from, acts_at + acted * ACTION.size,
                nacts - acted, satps_at, pid_at, len(pid), self._harts,
                ctypes.byref(self._table.words), ctypes.byref(table.struct), returned_at,
                LINE_MAX, self._buf, room, progress)
            self._put(written)
            events, actions, lines, stop = progress
            k += events
            acted += actions
            self.lines += lines
            if stop == FlowStop.TAIL:
                self._remember(flow, row(k))
            elif stop == FlowStop.FULL:
                if not events:                # a tail longer than the room
                    room *= 2
            else:
                break
        return Shown(k - i, acted - run.acted)

    def _call_table(self, flow: Flow) -> _CallTable:
        made_for = self._spec_for
        if self._spec_table is None or made_for is None or made_for[0] is not flow.specs \
                or made_for[1] != flow.xlen:
            self._spec_table = _CallTable(flow.specs, flow.xlen)
            self._spec_for = (flow.specs, flow.xlen)
        return self._spec_table

    def _remember(self, flow: Flow, row: FlowRow) -> None:
        """Give jsonl.c the tail of `row` and of the rows like it (the same owner,
        address space, place and touch of U), for as long as the owner of that address
        space is the same."""
        user = row.priv_from is _U or row.priv_to is _U
        tail = self._tail(row, location(row, self._locate))
        lo, hi = flow.owner_span(row.satp, row.seq)
        if self._lib.jsonl_tails_put(self._native_tails, row.owner, row.satp,
                                     row.pc if row.is_trap else row.target, user, lo, hi,
                                     tail.encode("ascii")) < 0:
            raise MemoryError("no memory for the rows' tails")

    def write(self, rows: Sequence[FlowRow]) -> None:
        """Write these rows' lines (and the lines of the calls they complete)."""
        tails, cached = self._tails, []
        seqs = array("q")
        records = []
        calls = 0
        for row in rows:
            records.append(row.record or _record(row))
            seqs.append(row.seq)
            loc = location(row, self._locate)
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
        binary file beneath a text file when there is one, without decoding them and
        encoding them again, on a thread of its own (the guest runs on meanwhile: a
        million traps make most of a gigabyte of rows), and the buffer is a fresh one."""
        if self._behind is None:
            binary = getattr(self._out, "buffer", None)
            if binary is None:
                self._out.write(ctypes.string_at(self._buf, size).decode("ascii"))
                return
            self._out.flush()                 # what the text layer holds goes first
            self._behind = Behind(binary)
        if size < _HAND_OVER and self._behind.idle():
            self._behind.binary.write(memoryview(self._buf)[:size])   # (buffered)
            return
        self._buf = self._behind.put(self._buf, size)

    def _text(self, line: str) -> None:
        """Write a line through the text file, after every buffer handed over and
        before any handed over next (the text layer is flushed: the buffers go to the
        binary file beneath it)."""
        if self._behind is not None:
            self._behind.wait()
        self._out.write(line)
        self._out.flush()

    def close(self) -> None:
        """Wait until every line is written; raise what writing them raised."""
        if self._behind is not None:
            behind, self._behind = self._behind, None
            behind.close()

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
                self._text(line[:-1] + tails[k])
                k += 1
            first = k


BUFFERS = 4
"""Buffers of rows a Behind keeps going between the formatter and the disk."""
_HAND_OVER = 1 << 16
"""Bytes of rows worth a thread's time: fewer (the rows of one stop while the trace
captures) are written at once when nothing is waiting to be."""


class Worker(Generic[T]):
    """A thread of its own doing `work(item)` for each item put, in the order put, and
    then `done(item)`. At most QUEUED items wait: then the run's thread waits too. An
    error working is raised by the run's thread's next call; the items after it are
    not worked on (they are still `done`)."""

    def __init__(self, work: Callable[[T], None], name: str,
                 done: Callable[[T], None] | None = None) -> None:
        self._work = work
        self._done = done
        self._queue: queue.Queue[T | None] = queue.Queue(maxsize=QUEUED)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name=name, daemon=True)
        self._thread.start()

    def put(self, item: T) -> None:
        self._raise()
        self._queue.put(item)

    def idle(self) -> bool:
        """Whether every item put is worked on (only the run's thread puts items: if
        none is left, none comes meanwhile)."""
        return self._queue.unfinished_tasks == 0

    def wait(self) -> None:
        """Return once every item put is worked on."""
        self._queue.join()
        self._raise()

    def close(self) -> None:
        """Wait for every item, end the thread; raise what working on them raised."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _drain(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                if self._error is None:
                    try:
                        self._work(item)
                    except BaseException as e:   # the run's thread raises it (a full disk)
                        self._error = e
                if self._done is not None:
                    self._done(item)
            finally:
                self._queue.task_done()


Buffer = ctypes.Array[ctypes.c_char]


class Behind:
    """Buffers written to a binary file by a Worker, in the order handed over; each
    buffer written is handed out again (`put` returns one)."""

    def __init__(self, binary: IO[bytes]) -> None:
        self.binary = binary
        self._spare: queue.SimpleQueue[Buffer] = queue.SimpleQueue()
        self._made = 1                        # buffers: the first is the writer's own
        self._worker: Worker[tuple[Buffer, int]] = Worker(
            self._write, "privlab-rows", lambda item: self._spare.put(item[0]))

    def put(self, buf: Buffer, size: int) -> Buffer:
        """Hand over the first `size` bytes of `buf`; returns a buffer as large to use
        (one written already, once BUFFERS are made: new pages cost their zeroing)."""
        self._worker.put((buf, size))
        if self._made < BUFFERS:
            try:
                spare = self._spare.get_nowait()
            except queue.Empty:
                self._made += 1
                return ctypes.create_string_buffer(len(buf))
        else:
            spare = self._spare.get()
        return spare if len(spare) >= len(buf) else ctypes.create_string_buffer(len(buf))

    def idle(self) -> bool:
        return self._worker.idle()

    def wait(self) -> None:
        self._worker.wait()

    def close(self) -> None:
        self._worker.close()

    def _write(self, item: tuple[Buffer, int]) -> None:
        buf, size = item
        self.binary.write(memoryview(buf)[:size])


_CALL = ('{"kind": "syscall", "seq": %d, "exit_seq": %s, "instret": %d, "number": %d, '
         '"name": %s, "args": [%s], "call": %s, "ret": %s, "outcome": %s, "pid": %s}\n')
"""syscall_json's line, as json.dumps writes it (%d: an int as int.__repr__ does)."""


def _record(row: FlowRow) -> bytes:
    """The core's record of a row's event, for a row made without it (Flow.rows)."""
    return RECORD.pack(row.instret, row.clock, row.cause, row.pc, row.tval, row.target,
                       row.status_before, row.status_after, row.satp, *row.args,
                       row.code, TRAP if row.is_trap else XRET, int(row.interrupt),
                       int(row.priv_from), int(row.priv_to), row.hart)
