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
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

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
from .flow import Flow, FlowFilter, FlowRow
from .shaper import NONE
from .syscalls import SyscallRecord, to_signed
from .who import Threads

__all__ = ["HOLD", "HOLD_SECONDS", "FlowStream", "RowSink"]

HOLD = 512              # rows held at most while a nesting is open
HOLD_SECONDS = 0.2      # and for at most this long
FEED = 128              # events paired at a time: the calls they make wait in flow.fresh
_PRIVS = {int(p): p for p in Priv}

RowSink = Callable[[list[FlowRow]], None]
ProcessRoots = Callable[[], dict[int, tuple[int, str]]]


class FlowStream:
    def __init__(self, flow: Flow, filt: FlowFilter, sink: RowSink, *,
                 pid: int | None = None, satp: int | None = None,
                 roots: ProcessRoots | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 quiet: Callable[[], None] | None = None) -> None:
        """Rows of `flow` (a retain=False flow) that pass `filt` and, if given, belong
        to process `pid` or address space `satp`, go to `sink` in batches. `roots`
        reads the kernel's process table (page-table root -> (pid, name)). `quiet` is
        called when HOLD_SECONDS pass without a row for the sink (a sink that folds
        rows shows what it holds back)."""
        if flow.retain:
            raise ValueError("FlowStream needs a flow made with retain=False")
        self.flow = flow
        self.filt = filt
        self.sink = sink
        self.pid = pid
        self.satp = satp
        self._roots = roots
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
        flow, held = self.flow, self._held
        skip = flow.shaped - first        # (a rewound log handing events again)
        if skip > 0:
            first, raw = first + skip, raw[skip * RECORD.size:]
        shaped = flow.shape(first, raw)
        returns, roots, paths, owners, depths = (shaped.returns, shaped.roots, shaped.paths,
                                                 shaped.owners, shaped.depths)
        path_of, fresh, notes, noted = flow.path, flow.fresh, flow.notes, self._noted
        counted = self._counted
        threaded, threads = flow.threaded, self._threads
        xlen = flow.xlen
        complete = 0                          # held rows whose nestings are over
        size = RECORD.size
        for i, rec in enumerate(RECORD.iter_unpack(raw)):
            seq = first + i
            if not i % FEED:                  # what the tracer's capture did not feed live
                flow.feed_raw(seq, raw[i * size:(i + FEED) * size])
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
        self.seen = flow.next_seq - flow.start
        self.tick()

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
