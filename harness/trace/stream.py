"""The rows of a trap flow as the run makes them, in bounded memory (`privlab trace`).

    flow = session.tracer.stream()
    rows = FlowStream(flow, FlowFilter(...), sink)
    session.events.subscribe_raw(rows.feed_chunk)

Each batch of events the core hands over is fed to a flow that keeps nothing per
event (Flow(retain=False)), and each event becomes a FlowRow at once. Rows are held
until the nesting they belong to is over (the hart back at the level it started at),
so that what the end of a nesting tells about its start (a signal handler that
returned by faulting) is on the rows, then named (processes the flow could not name
are looked up in the kernel's process table), filtered and handed to the sink. At most
HOLD rows are held, and none longer than HOLD_SECONDS once the next batch (or
`tick()`) comes: a nesting that goes on longer is shown as it goes.

The filter is the one Flow.rows() applies, with processes named as the run goes:
`pid` matches the address spaces known to be that process's when its rows are shown.
What needs the whole run, the system-call summary, is counted (`made`, `failed`).

A sink that writes rows as JSON Lines can also take them with no FlowRow at all
(`native`, harness/trace/jsonl.py's RowsJsonl): from the first point of a chunk where
no row is held and no trap is open, the pairer runs ahead over the rest of the chunk
and the C writes rows and call lines itself until an event it cannot show as the rows
would (a process switch, a signal, an SBI call, a call Python holds); rows take over
from there to the end of that nesting, and the C again after it.
Those stretches are neither filtered nor counted in `made` and `failed`: the native
path is only taken unfiltered, by a sink that shows no summary.
"""

from __future__ import annotations

import time
from array import array
from collections import Counter
from collections.abc import Callable
from typing import Protocol

from ..abi.csr import Priv
from ..machine.events import RECORD
from ..machine.rawevents import (
    A0,
    A7,
    AT,
    CAUSE,
    CLOCK,
    CODE,
    EPC,
    FROM,
    HART,
    INSTRET,
    INTERRUPT,
    KIND,
    PC,
    SATP,
    STATUS_AFTER,
    STATUS_BEFORE,
    TO,
    TRAP,
    TVAL,
)
from .flow import Flow, FlowFilter, FlowRow, PairedRun
from .pairer import CALL, CALL_SATP, Op
from .shaper import NONE, Shaped
from .syscalls import SyscallRecord, to_signed
from .who import Threads

__all__ = ["HOLD", "HOLD_SECONDS", "FlowStream", "RowSink"]

HOLD = 512              # rows held at most while a nesting is open
HOLD_SECONDS = 0.2      # and for at most this long
FEED = 128              # events paired at a time: the calls they make wait in flow.fresh
_PRIVS = {int(p): p for p in Priv}

_CALL_WORDS = CALL.size // 8   # a pairer's call record is so many 64-bit words
_RENAMES = frozenset((int(Op.MOVE), int(Op.DISOWN)))

RowSink = Callable[[list[FlowRow]], None]
ProcessRoots = Callable[[], dict[int, tuple[int, str]]]


class NativeShown(Protocol):
    events: int     # events shown
    acted: int      # the pairer's actions taken (returns whose lines were written)


class NativeRows(Protocol):
    def write_flow(self, flow: Flow, raw: bytes, end: int, first: int, i: int,
                   owners: array[int], run: PairedRun, own_from: int,
                   pids: dict[int, int | None], returned: bytearray,
                   row: Callable[[int], FlowRow]) -> NativeShown:
        """Write the rows of events i..end of the chunk `raw` (event #first on), as far
        as it can: harness/trace/jsonl.py's RowsJsonl.write_flow."""


class FlowStream:
    def __init__(self, flow: Flow, filt: FlowFilter, sink: RowSink, *,
                 pid: int | None = None, satp: int | None = None,
                 roots: ProcessRoots | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 quiet: Callable[[], None] | None = None,
                 native: NativeRows | None = None) -> None:
        """Rows of `flow` (a retain=False flow) that pass `filt` and, if given, belong
        to process `pid` or address space `satp`, go to `sink` in batches. `roots`
        reads the kernel's process table (page-table root -> (pid, name)). `quiet` is
        called when HOLD_SECONDS pass without a row for the sink (a sink that folds
        rows shows what it holds back). `native` writes stretches of rows without
        FlowRows, when nothing is filtered (see above)."""
        if flow.retain:
            raise ValueError("FlowStream needs a flow made with retain=False")
        self.flow = flow
        self.filt = filt
        self.sink = sink
        self.pid = pid
        self.satp = satp
        self._roots = roots
        self._native = native
        # Without a filter every row is shown (and _passes keeps no state worth keeping).
        self._filtered = (pid is not None or satp is not None or bool(filt.causes) or
                          bool(filt.syscalls) or filt.seq != (None, None) or
                          filt.instret != (None, None))
        self._clock = clock
        self._held: list[FlowRow] = []
        self._held_since = 0.0
        self._quiet = quiet
        self._delivered = clock()             # when the sink last had rows
        self._depth = 0                       # traps open after the last event fed
        self._ready: list[FlowRow] = []       # shown rows not yet handed to the sink
        self._kept: set[int] = set()          # --cause: traps shown, their returns to come
        self._noted: list[int] = []           # traps of the nesting that have a note
        self._root_call: SyscallRecord | None = None
        self._counted: dict[int, SyscallRecord] = {}   # shown calls still pending
        self._threads = Threads(flow)
        self._tried: set[int] = set()         # address spaces the process table lacked
        self.made: Counter[str] = Counter()    # calls whose ecall was shown, by name
        self.failed: Counter[str] = Counter()  # and of those, the ones that failed
        self.shown = 0                         # rows handed to the sink
        self.seen = 0                          # events fed

    @property
    def held(self) -> int:
        """Rows waiting for their nesting to end (at most HOLD)."""
        return len(self._held)

    # -- feeding -------------------------------------------------------------------
    def feed_chunk(self, first: int, raw: bytes) -> None:
        """EventLog.subscribe_raw's callback: events #first... as raw records."""
        flow = self.flow
        skip = flow.shaped - first        # (a rewound log handing events again)
        if skip > 0:
            first, raw = first + skip, raw[skip * RECORD.size:]
        shaped = flow.shape(first, raw)
        n = len(shaped.returns)
        if self._native is None or self._filtered:
            self._rows(first, raw, shaped, 0, n, None)
        else:
            self._mixed(first, raw, shaped, n, self._native)
        self.seen = flow.next_seq - flow.start
        self.tick()

    def _mixed(self, first: int, raw: bytes, shaped: Shaped, n: int,
               native: NativeRows) -> None:
        """The chunk's events shown natively from the first point where no row is
        held and no trap is open, on until an event the native rows cannot show; rows
        before that point and to the end of that event's nesting, as without `native`,
        then natively again; rows for the nesting still open at the chunk's end.

        The native rows say what the rows would. The pairer runs over the whole chunk
        before the C writes a row, and a row is only written once nothing concluded
        after it concerns it. A chunk is left to rows whole where showing its rows
        would change a name (rows are named when shown, so what their showing learns
        names the rows before too): where an address space changes hands, or a row or
        call shown with it is of a space the process table newly names."""
        flow, depths = self.flow, shaped.depths
        if flow.threaded or flow.next_seq != first:   # (fed ahead: the tracer captures)
            self._rows(first, raw, shaped, 0, n, None)
            return
        run = flow.pair_ahead(first, raw)
        end = n                               # the rows of a nesting still open at
        while end and depths[end - 1]:        # the chunk's end are held, for its end
            end -= 1                          # to tell what it may of them
        pids = None if run.paired.has(_RENAMES) else self._named_already(first, shaped, run, end)
        if pids is None:
            self._rows(first, raw, shaped, 0, n, run)
            return
        i = 0
        if self._held or self._depth:         # a nesting open across the chunk's start
            while i < n and depths[i]:
                i += 1
            i = min(i + 1, n)
            flow.apply(run, first + i)
            if flow.concerns_before(run, first + i):   # concluded later, of a row before
                self._rows(first, raw, shaped, 0, n, run)
                return
            self._rows(first, raw, shaped, 0, i, run)
        while i < end:
            self._deliver()
            i = self._native_rows(first, raw, end, shaped, i, run, pids, native)
            if i == end:
                break
            j = i                             # rows to the end of the nesting stopped in,
            while j < n and depths[j]:        # then natively again if nothing concluded
                j += 1                        # after it concerns those rows
            j = min(j + 1, n)
            flow.apply(run, first + j)
            if flow.concerns_before(run, first + j):
                break
            self._rows(first, raw, shaped, i, j, run)
            i = j
        if i < n:
            self._rows(first, raw, shaped, i, n, run)

    def _native_rows(self, first: int, raw: bytes, end: int, shaped: Shaped, i: int,
                     run: PairedRun, pids: dict[int, int | None], native: NativeRows) -> int:
        """Show events i..end natively, as far as they can be; returns where they
        stopped."""
        flow = self.flow
        returned = bytearray(len(run.paired.raw_calls) // CALL.size)
        shown = native.write_flow(
            flow, raw, end, first, i, shaped.owners, run, flow.calls_made, pids, returned,
            lambda k: self._row(first + k, raw, shaped, k))
        stop = i + shown.events
        flow.shown_natively(run, first + stop, returned, run.acted + shown.acted)
        if stop > i:
            self.shown += shown.events
            self._depth = shaped.depths[stop - 1]
            notes = flow.notes
            if notes:                         # the notes of traps those events returned from
                for opened in shaped.returns[i:stop]:
                    if opened != NONE:
                        notes.pop(opened, None)
        return stop

    def _named_already(self, first: int, shaped: Shaped, run: PairedRun,
                       end: int) -> dict[int, int | None] | None:
        """The process of each address space a call of the run was made in, if showing
        the chunk's rows up to event `end` (the rest are held) names no address space;
        None if it would. `_name` reads the process table for the same spaces (the
        table is the same while a chunk is read); those it lacks are tried."""
        flow, tried, named, pids = self.flow, self._tried, self.flow.named, self.flow.pids
        calls = memoryview(run.paired.raw_calls).cast("Q")
        made = set(calls[CALL_SATP::_CALL_WORDS].tolist())
        shown = run.made_before(first + end) - run.base
        need = set(calls[CALL_SATP:shown * _CALL_WORDS:_CALL_WORDS].tolist()) - pids.keys()
        earlier = flow.waiting_returns(run, first + end)     # calls of earlier chunks
        earlier += [row.syscall for row in self._held if row.syscall is not None]
        need |= {call.satp for call in earlier if call.pid is None and call.satp not in pids}
        need |= set(shaped.owners[:end].tolist()) - named.keys() - tried - {0}
        if need and self._roots is not None:
            roots = self._roots()
            if any(flow.owner_in(satp, roots) is not None for satp in need):
                return None
            tried |= need
        return {satp: who[0] if (who := pids.get(satp)) else None for satp in made}

    def _row(self, seq: int, raw: bytes, shaped: Shaped, i: int) -> FlowRow:
        """The row of event i of a chunk shown natively (its tail is made from it):
        no call, note or thread, named as `_name` names rows."""
        rec = RECORD.unpack_from(raw, i * RECORD.size)
        is_trap = rec[KIND] == TRAP
        row = FlowRow(
            seq, rec[INSTRET], is_trap, _PRIVS[rec[FROM]], _PRIVS[rec[TO]],
            bool(rec[INTERRUPT]), rec[CODE], rec[CAUSE], rec[EPC] if is_trap else rec[AT],
            rec[PC], rec[TVAL], rec[SATP], rec[A0:A7 + 1], (), None, None,
            shaped.owners[i], None, "", rec[STATUS_BEFORE], rec[STATUS_AFTER], "", rec[HART],
            rec[CLOCK])
        who = self.flow.named.get(row.owner) if row.owner else None
        if who is not None:
            row.pid, row.process = who
        return row

    def _rows(self, first: int, raw: bytes, shaped: Shaped, lo: int, hi: int,
              run: PairedRun | None) -> None:
        """Rows of events lo..hi of the chunk, held until their nestings end. The flow is
        fed as they go, FEED events at a time (counted from the chunk's first): without
        `run` by the pairer, with it by applying what the pairer concluded of them."""
        flow, held = self.flow, self._held
        returns, roots, paths, owners, depths = (shaped.returns, shaped.roots, shaped.paths,
                                                 shaped.owners, shaped.depths)
        path_of, fresh, notes, noted = flow.path, flow.fresh, flow.notes, self._noted
        counted = self._counted
        threaded, threads = flow.threaded, self._threads
        xlen = flow.xlen
        complete = 0                          # held rows whose nestings are over
        size = RECORD.size
        for i, rec in enumerate(RECORD.iter_unpack(raw[lo * size:hi * size]), lo):
            seq = first + i
            if seq >= flow.next_seq:          # what the tracer's capture did not feed live
                upto = min((i // FEED + 1) * FEED, hi)   # FEED events at a time, from 0
                if run is None:
                    flow.feed_raw(seq, raw[i * size:upto * size])
                else:                         # (paired already: what it concluded of them)
                    flow.apply(run, first + upto)
            opened: int | None = returns[i]
            if opened == NONE:
                opened = None
            root: int | None = roots[i]
            if root == NONE:
                root = None
            call = fresh.pop(seq, None) if fresh else None
            if call is not None and call.exit_seq == seq and call.entry_seq in counted:
                del counted[call.entry_seq]
                if call.failed:
                    self.failed[call.name] += 1
            is_trap = rec[KIND] == TRAP
            # The chunk's notes are all made: an xRET's is taken now, a trap's waits for
            # the xRET that returns from it (an SBI call's result), or for its nesting's end.
            if not is_trap:
                note = notes.pop(seq, "") if notes else ""
            else:
                note = notes.get(seq, "") if notes else ""
                if note:
                    noted.append(seq)
            if opened is not None:
                opener = notes.pop(opened, "")
                if not note and opener.startswith("sbi "):
                    note = f"→ {to_signed(rec[A0], xlen)}"   # a0: the SBI error code
            if not held:
                self._held_since = self._clock()
            held.append(FlowRow(
                seq, rec[INSTRET], is_trap, _PRIVS[rec[FROM]], _PRIVS[rec[TO]],
                bool(rec[INTERRUPT]), rec[CODE], rec[CAUSE], rec[EPC] if is_trap else rec[AT],
                rec[PC], rec[TVAL], rec[SATP], rec[A0:A7 + 1], path_of(paths[i]), opened, root,
                owners[i], call, note, rec[STATUS_BEFORE], rec[STATUS_AFTER], "", rec[HART],
                rec[CLOCK], None, "", None, raw[i * size:(i + 1) * size]))
            if threaded:
                threads.see(held[-1])
            self._depth = depths[i]
            if self._depth == 0:              # the nesting is over
                for trap in noted:
                    notes.pop(trap, None)
                noted.clear()
                complete = len(held)
            if len(held) >= HOLD:
                # Show the nestings that are over; a nesting that has gone on for HOLD
                # rows by itself is shown as it goes.
                self.flush(complete or None)
                complete = 0
        if complete:                          # one flush for the chunk's nestings
            self.flush(complete)

    def tick(self) -> None:
        """Show the rows held longer than HOLD_SECONDS, and hand the sink every row
        ready to be shown (call it now and then: each chunk ends with it)."""
        if self._held and self._clock() - self._held_since >= HOLD_SECONDS:
            self.flush()
        if self._ready:
            self._deliver()
        elif self._quiet is not None and self._clock() - self._delivered >= HOLD_SECONDS:
            self._delivered = self._clock()
            self._quiet()

    def _deliver(self) -> None:
        """One sink call for all the rows made ready since the last: a chunk ends
        many nestings (one per system call), and each sink call costs a write and a
        flush of its own."""
        if self._ready:
            rows = self._ready
            self._ready = []
            if self._quiet is not None:
                self._delivered = self._clock()
            self.sink(rows)

    def finish(self) -> None:
        """The run is over: show what is held; count the calls' final outcomes."""
        self.flush()
        self._deliver()
        for call in self._counted.values():
            if call.failed:
                self.failed[call.name] += 1
        self._counted.clear()

    # -- showing -------------------------------------------------------------------
    def flush(self, upto: int | None = None) -> None:
        """Show the held rows (the first `upto` of them: whole nestings)."""
        held = self._held
        if not held:
            return
        rows = held[:upto]
        del held[:upto]                # the same list: feed_chunk holds it
        if held:
            self._held_since = self._clock()
        signals = self.flow.signal_notes
        if signals:
            for row in rows:
                row.signal = signals.pop(row.seq, "")
            if not held and self._depth == 0:
                # notes left for events shown already (a handler's return is known
                # only later); those of the events still to come stay
                for seq in [seq for seq in signals if seq <= rows[-1].seq]:
                    del signals[seq]
        self._name(rows)
        shown = [row for row in rows if self._passes(row)] if self._filtered else rows
        for row in shown:
            call = row.syscall
            if call is not None and row.is_trap:
                self.made[call.name] += 1
                if call.outcome == "pending":
                    self._counted[call.entry_seq] = call
                elif call.failed:
                    self.failed[call.name] += 1
        if shown:
            self.shown += len(shown)
            self._ready += shown
            if len(self._ready) >= HOLD:
                self._deliver()

    def _name(self, rows: list[FlowRow]) -> None:
        """Name the processes of these rows and calls the flow could not name, from
        the kernel's process table (read at most once per batch, and only while some
        address space is new to the flow)."""
        flow = self.flow
        named = flow.named
        unnamed = [r.syscall for r in rows if r.syscall is not None and r.syscall.pid is None]
        need = {c.satp for c in unnamed if c.satp not in flow.pids}
        tried = self._tried
        need |= {r.owner for r in rows
                 if r.owner and r.owner not in named and r.owner not in tried}
        roots: dict[int, tuple[int, str]] = {}
        if need and self._roots is not None:
            roots = self._roots()
            for satp in need:
                if not flow.name_space(satp, roots):
                    tried.add(satp)     # a space the table does not know (a foreign kernel)
        if unnamed:
            flow.name_calls(unnamed, roots)
        get = named.get
        for row in rows:
            if row.owner:
                who = get(row.owner)
                if who is not None:
                    row.pid, row.process = who

    def _passes(self, row: FlowRow) -> bool:
        f = self.filt
        if row.root == row.seq:                    # a new nesting: the old ones ended
            self._root_call = row.syscall          # the call that began it, if one
            self._kept.clear()
        lo, hi = f.seq
        if (lo is not None and row.seq < lo) or (hi is not None and row.seq >= hi):
            return False
        lo, hi = f.instret
        if (lo is not None and row.instret < lo) or (hi is not None and row.instret >= hi):
            return False
        if self.pid is not None or self.satp is not None:
            owners = self.flow.spaces.get(self.pid, set()) if self.pid is not None else set()
            if row.owner not in owners and row.owner != self.satp:
                return False
        if f.syscalls:
            root = self._root_call if row.root is not None else None
            if root is None or root.name not in f.syscalls:
                return False
        if f.causes:
            if row.is_trap:
                if row.name not in f.causes and str(row.code) not in f.causes:
                    return False
                self._kept.add(row.seq)
            elif row.returns_from in self._kept:
                self._kept.discard(row.returns_from)
            else:
                return False
        return True
