"""The trap flow: every trap and xRET of a run as rows with nesting, decoded syscalls
and SBI calls.

`Flow.feed(seq, record)` consumes events in order (raw tuples, harness/machine/rawevents.py)
and keeps, per event, only what the raw log lacks: which trap an xRET returns from,
the outermost trap of the current nesting (its `root`), and the privilege path
(U>S>M). Rows are rebuilt on demand from the EventLog, so a run with a million
events costs a few bytes per event. A flow made with retain=False keeps nothing per
event or per call: `shape()` gives a chunk's nesting as it is fed, and the calls
made and completed wait in `fresh` until their rows are made
(harness/trace/stream.py: `privlab trace` at any run length).

System calls pair an ecall from U with the sret that returns to the same address
space at the ecall's pc + 4. A call that switches processes (yield, a blocking
waitpid) returns later, when its process is scheduled again; exit never returns; a
successful exec returns into a new address space.

Signals (kernel/signal.c) show as an sret that leaves a trap from U somewhere else in
the same address space, with a0 = a signal number some kill() sent: the kernel has
entered that signal's handler. The handler ends (sigreturn, or a return that traps)
with an sret to where the first trap would have returned, which is also where the
interrupted system call, if it was one, returns its value.

An alarm (kernel/alarm.c) is the same loop started by a tick: an sret that leaves a
timer interrupt from U at the handler that thread's last sigalarm(ticks > 0,
handler) named enters the alarm handler, and its sigreturn's sret goes back to the
interrupted pc.
"""

from __future__ import annotations

import gc
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Protocol

from ..abi.csr import Exc, Priv, cause_name
from ..abi.pairing import CallKind
from ..machine.events import RECORD, Event, EventLog, TrapEvent, XretEvent
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
    Record,
    iter_records,
)
from ..mmu.scheme import decode_satp
from .calllist import CallList, record_of, set_return
from .pairer import (
    ACTION,
    ALARM,
    CALL,
    CALL_SATP,
    CALL_SEQ,
    ID,
    OP,
    RET,
    SEQ,
    C,
    Op,
    Paired,
    Pairer,
    X,
    Y,
    call_flags,
    catchable_signals,
)
from .sbi import SbiNames
from .shaper import NONE, Shaped, Shaper
from .syscalls import CallSpec, SyscallRecord, to_signed
from .who import Threads

__all__ = ["Flow", "FlowFilter", "FlowRow", "LiveMemory", "PairedRun"]

_PRIVS = {int(p): p for p in Priv}
_U, _S = int(Priv.U), int(Priv.S)
_ECALL_U = int(Exc.USER_ECALL)
_RETURN, _DISOWN, _MOVE = int(Op.RETURN), int(Op.DISOWN), int(Op.MOVE)
_COMPLETE = frozenset((int(Op.RETURN), int(Op.NORETURN)))
_NORETURN = int(Op.NORETURN)
_CALL_OPS = frozenset(int(op) for op in (Op.RETURN, Op.NORETURN, Op.FORGET, Op.CHILD))
SEQ_MIN, SEQ_MAX = -(1 << 63), (1 << 63) - 1     # before and after every event


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The records a flow makes hold no cycles, so the cyclic garbage collector is
    paused while it makes them, and they go straight to its oldest generation after
    (gc.freeze, then gc.unfreeze: a list splice, no scan). With a hundred thousand
    calls it would otherwise scan them all at the next allocation, then again as they
    age: that was a quarter of what pairing the calls costs. (Not done if something
    else froze objects: unfreezing would release those too.)"""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if paused:
            gc.enable()


class LiveMemory(Protocol):
    """Reads the machine when it sits exactly at the event being fed."""

    def capture_inputs(self, call: SyscallRecord) -> None: ...
    def capture_outputs(self, call: SyscallRecord) -> None: ...
    def whoami(self) -> tuple[int, str] | None: ...
    def thread(self) -> int | None: ...


@dataclass(slots=True)
class FlowRow:
    """One row of the trap flow: a trap or an xRET, with who made it, where, and the system
    call it belongs to."""
    seq: int
    instret: int
    is_trap: bool
    priv_from: Priv
    priv_to: Priv
    interrupt: bool
    code: int                 # trap: exception/interrupt code; xret: 0 mret, 1 sret
    cause: int
    pc: int                   # trap: epc; xret: address of the xRET
    target: int               # trap: the vector; xret: where it returned
    tval: int
    satp: int
    args: tuple[int, ...]     # a0..a7 at the event
    path: tuple[Priv, ...]    # privilege nesting after the event, outermost first
    returns_from: int | None  # xret: the trap it returns from
    root: int | None          # the outermost trap of this nesting
    owner: int                # satp of the process that trapped at the root (0: none)
    syscall: SyscallRecord | None
    note: str
    status_before: int = 0    # mstatus before and after the event
    status_after: int = 0
    signal: str = ""          # a signal handler entered, ended or left here
    hart: int = 0             # mhartid of the hart the event happened on
    clock: int = 0            # every hart's instructions before it (instret with one hart)
    pid: int | None = None    # the owner's process, when named (harness/trace/who.py)
    process: str = ""         # and its name
    tid: int | None = None    # the thread, when its process has several and it is known
    record: bytes = b""       # the core's record of the event, when kept (a streamed row's)

    @property
    def who(self) -> str:
        """Who the row belongs to: `pid 2`, `pid 1 tid 1`, the address space for a
        process privlab cannot name (`satp 0x8000000000080412`), `user` for U-mode
        code without paging (a bare-metal program: no process to name), or `kernel`."""
        if self.pid is not None:
            return f"pid {self.pid}" if self.tid is None else f"pid {self.pid} tid {self.tid}"
        if self.owner:
            return f"satp {self.owner:#x}"
        return "user" if Priv.U in (self.priv_from, self.priv_to) else "kernel"

    def event(self) -> Event:
        """The event this row shows, as the EventLog holds it."""
        if self.is_trap:
            return TrapEvent(self.seq, self.instret, self.interrupt, self.code, self.cause,
                             self.pc, self.tval, self.priv_from, self.priv_to, self.target,
                             self.status_before, self.status_after, self.satp, self.args,
                             self.hart)
        return XretEvent(self.seq, self.instret, "sret" if self.code else "mret", self.pc,
                         self.target, self.priv_from, self.priv_to, self.status_before,
                         self.status_after, self.satp, self.args[0], self.hart)

    @property
    def name(self) -> str:
        if self.is_trap:
            return cause_name(self.interrupt, self.code)
        return "sret" if self.code else "mret"


@dataclass(frozen=True)
class FlowFilter:
    """Which rows to show. Empty sets and None mean no restriction."""

    causes: frozenset[str] = frozenset()      # trap names; xRETs follow their trap
    syscalls: frozenset[str] = frozenset()    # whole nestings rooted at these calls
    owners: frozenset[int] | None = None      # satps (from --satp, or --pid via pids)
    seq: tuple[int | None, int | None] = (None, None)       # [start, stop)
    instret: tuple[int | None, int | None] = (None, None)   # [start, stop)


@dataclass(slots=True)
class PairedRun:
    """One run of the pairer (harness/trace/pairer.c) over events up to #last, applied
    to the flow as far as `acted` (its actions applied, in order). Its
    calls are numbered on from `base`; `upto` counts the calls made (in all runs) by
    the next DISOWN or MOVE, which must be applied before later calls are made."""

    paired: Paired
    base: int
    last: int
    acted: int = 0
    upto: int = -1
    early: list[int] = field(default_factory=list)   # ecalls of calls made ahead of them
    _seqs: memoryview | None = None

    def __post_init__(self) -> None:
        if self.upto < 0:
            self.upto = self.paired.upto

    def concerns_before(self, stop: int, waiting: dict[int, SyscallRecord]) -> bool:
        """Whether an action not applied yet concerns an event before #stop (the
        pairer concluded it later): its own, or for a call found not to return, the
        ecall's (whose row its line follows). `waiting`: the calls held as records."""
        words = ACTION.size // 8            # op and c, seq, id, ...: 64-bit words
        acts = memoryview(self.paired.raw_actions).cast("q")
        start = self.acted * words
        if min(acts[start + 1::words], default=stop) < stop:
            return True
        ops = memoryview(self.paired.raw_actions).cast("I")[self.acted * 2 * words::2 * words]
        if _NORETURN not in ops.tolist():
            return False
        calls = memoryview(self.paired.raw_calls).cast("q")[CALL_SEQ::CALL.size // 8]
        for op, number in zip(ops, acts[start + 2::words], strict=True):
            if op == _NORETURN:
                if 0 <= number - self.base < len(calls):
                    entry = calls[number - self.base]
                else:
                    call = waiting.get(number)
                    entry = call.entry_seq if call is not None else stop
                if entry < stop:
                    return True
        return False

    def made_before(self, stop: int | None) -> int:
        """The number of the first call (counted over all runs) made at or after event
        #stop (None: the number after the run's last call)."""
        calls = len(self.paired.raw_calls) // CALL.size
        if stop is None:
            return self.base + calls
        if self._seqs is None:
            self._seqs = memoryview(self.paired.raw_calls).cast("q")[CALL_SEQ::CALL.size // 8]
        return self.base + bisect_left(self._seqs, stop)


def _within(v: int, r: tuple[int | None, int | None]) -> bool:
    return (r[0] is None or v >= r[0]) and (r[1] is None or v < r[1])


class Flow:
    def __init__(self, log: EventLog, specs: dict[int, CallSpec], xlen: int,
                 sbi: SbiNames | None = None, initial: Priv = Priv.M,
                 start: int | None = None, retain: bool = True) -> None:
        """Analyse `log` from event #start (default: events logged from now on), the
        hart then being at privilege `initial`. Without `retain`, the flow keeps no
        calls nor per-event state: the calls made and completed by what it was last fed
        wait in `fresh` (harness/trace/stream.py feeds and steps it a chunk at a time)."""
        self.log = log
        self.retain = retain
        self.calls_made = 0                            # system calls fed so far
        # retain=False: seq -> the call made (ecall) or completed there, until read
        self.fresh: dict[int, SyscallRecord] = {}
        self.specs = specs
        self.xlen = xlen
        self.sbi = sbi or SbiNames()
        self.start = len(log) if start is None else start   # the first seq analysed
        self.next_seq = self.start
        # Every call, with retain (made into records as they are read); else none.
        self.syscalls: CallList | list[SyscallRecord] = \
            CallList(specs, xlen) if retain else []
        self.pids: dict[int, tuple[int, str]] = {}     # satp -> (pid, name), current
        self.spaces: dict[int, set[int]] = {}          # pid -> every satp it ever had
        self.named: dict[int, tuple[int, str]] = {}    # satp -> its latest (pid, name)
        self.naming = 0         # counts the changes to named (what was made from it is stale)
        # satp -> each (seq, pid, name) it was learned to be from: a page-table root a
        # process's exit freed may be the next process's, so rows kept from before
        # are named by the owner of their time, not the latest (owner_at).
        self._owners_since: dict[int, list[tuple[int, int, str]]] = {}
        # Threads (kernels that have them): the thread read live at events from and to
        # U, by seq, once some process has a second thread; and those processes'
        # address spaces. Rows between are given their thread by harness/trace/who.py.
        self.tids: dict[int, int] = {}
        self.threaded: set[int] = set()
        # The nesting of each event shaped (harness/native/shape.c), from seq `start`
        # on, kept with retain: the trap an xRET returns from, the root, the path id
        # and the owner.
        self._shaper = Shaper(initial)
        self._returns = array("q")
        self._roots = array("q")
        self._path = array("I")
        self._owners = array("Q")
        self._returns_at: dict[int, int] = {}   # retain: seq of a return -> call's number
        self.notes: dict[int, str] = {}
        self.signal_notes: dict[int, str] = {}
        # The pairing of calls with their returns (harness/native/pairer.c), and the
        # calls it may still tell something of, by the number it gave them.
        self._pairer = Pairer(specs, xlen)
        self._waiting: dict[int, SyscallRecord] = {}
        # calls by number: all of them (syscalls), or those still waited for
        self._records: CallList | dict[int, SyscallRecord] = \
            self.syscalls if isinstance(self.syscalls, CallList) else self._waiting
        self._forks = frozenset(n for n, c in specs.items() if call_flags(c) & CallKind.FORK)
        self._shaped = self.start                      # events _shape has seen
        self._catchable = catchable_signals()

    def __len__(self) -> int:
        return self.next_seq - self.start

    # -- feeding ------------------------------------------------------------------
    # Two passes over the events, each in order: `feed` pairs system calls and names
    # SBI calls (always); `_shape_up` computes the nesting (only when rows are read).

    def catch_up(self, stop: int | None = None) -> None:
        """Consume events the log holds that were not fed yet (up to event #stop, not
        included, if given)."""
        size = RECORD.size
        with _gc_paused():
            for first, raw in self.log.raw_chunks(self.next_seq):
                if stop is not None:
                    if first >= stop:
                        break
                    raw = raw[:(stop - first) * size]
                self.feed_raw(first, raw)

    def feed_raw(self, first: int, raw: bytes) -> None:
        """Consume the events of `raw` (records of events #first...) not fed yet. With
        retain=False, the calls made and completed wait in `fresh`."""
        skip = self.next_seq - first
        if skip < 0 or skip * RECORD.size >= len(raw):
            return
        self._consume(self.next_seq, raw[skip * RECORD.size:] if skip else raw)

    def feed(self, seq: int, rec: Record, live: LiveMemory | None = None) -> SyscallRecord | None:
        """Consume one event, reading the machine (which sits at it) through `live`
        if given; returns a system call that completed with it, if any."""
        if seq != self.next_seq:
            return None
        tid = 0
        if live is not None:
            frm = rec[FROM]
            if rec[KIND] == TRAP and frm == _U:
                if rec[CODE] == _ECALL_U and not rec[INTERRUPT]:
                    who = live.whoami()
                    if who is not None:
                        self._own(rec[SATP], who)
                tid = self._thread(seq, rec[SATP], live.thread())
            elif rec[KIND] != TRAP and rec[TO] == _U and frm == _S and rec[CODE]:
                if rec[SATP] not in self.pids:
                    who = live.whoami()
                    if who is not None:
                        self._own(rec[SATP], who)
                tid = self._thread(seq, rec[SATP], live.thread())
        return self._consume(seq, RECORD.pack(*rec), live, tid)

    def _thread(self, seq: int, satp: int, tid: int | None) -> int:
        """Event #seq, from or to U in address space satp, ran in thread `tid` (None:
        the kernel has no threads); kept once some process has several."""
        if tid is None:
            return 0
        if tid:
            self.threaded.add(satp)
        if self.threaded:
            self.tids[seq] = tid
        return tid

    def _consume(self, first: int, raw: bytes, live: LiveMemory | None = None,
                 tid: int = 0) -> SyscallRecord | None:
        """Consume events #first... (raw records) in order: pair their calls
        (harness/native/pairer.c) and apply what the pairer concluded. Returns a
        system call the last one completed, if any. This runs for every event of a
        traced run: it is written for speed."""
        last = first + len(raw) // RECORD.size - 1
        run = PairedRun(self._pairer.run(raw, first, tid), self.calls_made, last)
        done = self.apply(run, None, live)
        self.next_seq = last + 1
        return done

    def pair_ahead(self, first: int, raw: bytes) -> PairedRun:
        """Pair events #first... (the next to feed) and apply nothing yet: a streamed
        trace (retain=False) applies the run a stretch at a time (`apply` up to an
        event), or shows a stretch natively (`shown_natively`)."""
        if self.retain or first != self.next_seq:
            raise ValueError("pair_ahead: a flow that keeps no calls, fed in order")
        return PairedRun(self._pairer.run(raw, first, 0), self.calls_made,
                         first + len(raw) // RECORD.size - 1)

    def apply(self, run: PairedRun, stop: int | None,
              live: LiveMemory | None = None) -> SyscallRecord | None:
        """Apply what `run` concluded of its events before event #stop (None: all of
        them) that was not applied yet, making the records of the calls they made.
        Returns a system call its last event completed, if that was applied."""
        done = None
        last = run.last
        paired, base = run.paired, run.base
        limit = run.made_before(stop)
        self._make(paired, base, min(run.upto, limit), live)
        fresh, index, waiting = self.fresh, self._returns_at, self._waiting
        kept = self.syscalls if isinstance(self.syscalls, CallList) else None
        if kept is not None:
            rets, exits, made = kept.returns()
        # (unpacked as they are read: a stretch may apply a few of many)
        acts = ACTION.iter_unpack(memoryview(paired.raw_actions)[run.acted * ACTION.size:])
        k = run.acted
        for act in acts:
            op, seq = act[OP], act[SEQ]
            if stop is not None and seq >= stop:
                break
            k += 1
            if op in _CALL_OPS and act[ID] >= self.calls_made:
                # about a call made after `stop` (the pairer concludes things of later
                # events): made now, its ecall's row waits for it in `fresh`
                made_from = self.calls_made
                self._make(paired, base, min(act[ID] + 1, run.upto), live)
                run.early.extend(t[CALL_SEQ] for t in paired.calls(made_from - base,
                                                                  self.calls_made - base))
            if op == _RETURN:
                number = act[ID]
                if kept is not None:
                    rets[number] = act[RET]
                    exits[number] = act
                    index[seq] = number
                    call = made[number]
                    if call is None:
                        if live is None and seq != last:
                            continue
                        call = kept[number]
                    else:
                        set_return(call, act)
                else:
                    call = waiting[number]
                    set_return(call, act)
                    fresh[seq] = call
                    if act[RET] < 0 or call.child_seq is not None or \
                            call.number not in self._forks:
                        del waiting[number]
                if live is not None:
                    live.capture_outputs(call)
                if seq == last:
                    done = call
            else:
                ended = self._apply(act)
                if ended is not None and seq == last:
                    done = ended
                if op in (_DISOWN, _MOVE):
                    run.upto = act[ID]
                    self._make(paired, base, min(run.upto, limit), live)
        run.acted = k
        if stop is not None:
            self.next_seq = max(self.next_seq, min(stop, last + 1))
        return done

    def concerns_before(self, run: PairedRun, stop: int) -> bool:
        """PairedRun.concerns_before, the calls held as records known."""
        return run.concerns_before(stop, self._waiting)

    def waiting_returns(self, run: PairedRun, stop: int) -> list[SyscallRecord]:
        """The calls waiting as records that `run` says, before event #stop, returned
        or will not return: calls a row before then completes."""
        waiting = self._waiting
        if not waiting:
            return []
        words = ACTION.size // 8            # op and c, seq, id, ...: 64-bit words
        acts = memoryview(run.paired.raw_actions).cast("q")
        start = run.acted * words
        ids = acts[start + 2::words].tolist()
        seqs = acts[start + 1::words]
        ops = memoryview(run.paired.raw_actions).cast("I")[run.acted * 2 * words::2 * words]
        found = []
        for number in waiting:              # a few: found by list.index, not a loop
            k = -1
            with suppress(ValueError):      # (none left)
                while True:
                    k = ids.index(number, k + 1)
                    if ops[k] in _COMPLETE and seqs[k] < stop:
                        found.append((k, waiting[number]))
                        break
        return [call for _, call in sorted(found, key=lambda f: f[0])]

    def shown_natively(self, run: PairedRun, stop: int, returned: bytearray, acted: int) -> None:
        """The events of `run` before event #stop were shown without records
        (harness/trace/jsonl.c), which took its first `acted` actions (returns only)
        and wrote the line of each call flagged in `returned` (by its place in the
        run). The calls made there that have not returned wait for their returns as
        records, as if made by `apply`."""
        limit = run.made_before(stop)
        specs, xlen, pids, waiting = self.specs, self.xlen, self.pids, self._waiting
        raw, base = run.paired.raw_calls, run.base
        i, end = self.calls_made - base, limit - base
        while (i := returned.find(0, i, end)) >= 0:
            t = CALL.unpack_from(raw, i * CALL.size)
            waiting[base + i] = record_of(t, specs, xlen, pids.get(t[CALL_SATP]))
            i += 1
        self.calls_made = max(self.calls_made, limit)
        run.acted = acted
        self.next_seq = stop
        if run.early:                # their ecalls' rows are written: they wait no more
            for seq in [seq for seq in run.early if seq < stop]:
                self.fresh.pop(seq, None)
            run.early = [seq for seq in run.early if seq >= stop]

    def _make(self, paired: Paired, base: int, upto: int, live: LiveMemory | None) -> None:
        """The records of the calls made, from the next one to call #upto (not
        included); the pairer's run numbered its first call #base. Each takes its
        process from the owner of its address space now."""
        made = self.calls_made
        if upto <= made:
            return
        if isinstance(self.syscalls, CallList):
            self.syscalls.add(paired.raw(made - base, upto - base), self.pids)
            self.calls_made = upto
            if live is not None:
                for number in range(made, upto):
                    live.capture_inputs(self.syscalls[number])
            return
        specs, xlen, pids, waiting, fresh = \
            self.specs, self.xlen, self.pids, self._waiting, self.fresh
        for t in paired.calls(made - base, upto - base):
            call = record_of(t, specs, xlen, pids.get(t[CALL_SATP]))
            waiting[made] = call
            fresh[t[CALL_SEQ]] = call
            made += 1
            if live is not None:
                live.capture_inputs(call)
        self.calls_made = made

    def _apply(self, act: tuple[int, ...]) -> SyscallRecord | None:
        """The pairer's rarer actions (all but RETURN); returns a call that completed
        with the action's event."""
        op, seq = act[OP], act[SEQ]
        if op == Op.NORETURN:
            call = self._release(act[ID])
            call.outcome = "noreturn"
            if act[C]:
                return call
        elif op == Op.FORGET:
            self._release(act[ID])
        elif op == Op.CHILD:
            fork = self._records[act[ID]]
            fork.child_seq = seq
            self.notes[seq] = f"child's return from fork() #{fork.entry_seq}"
            if fork.outcome != "pending":
                self._release(act[ID])
        elif op == Op.SBI:
            self.notes[seq] = "sbi " + self.sbi.name(act[X], act[Y])
        elif op == Op.ENTER:
            who = self.pids.get(act[Y])
            thread = f" thread {act[C]}" if act[C] else ""
            self.notes[seq] = f"enter pid {who[0]} ({who[1]}){thread}" if who else \
                "enter a new address space"
        elif op == Op.DISOWN:
            self.pids.pop(act[Y], None)
        elif op == Op.MOVE:
            if act[X] in self.pids:
                self._own(act[Y], self.pids.pop(act[X]), tell=False)
        elif op == Op.SIG_ENTER:
            self.signal_notes[seq] = "→ alarm handler" if act[C] == ALARM else \
                f"→ handler for {self._handler_name(act[C])}"
        elif op == Op.SIG_BACK:
            self.signal_notes[seq] = f"back from {self._handler_name(act[C])} handler"
        elif op == Op.SIG_RETURNED:
            self.signal_notes[seq] = f"the {self._handler_name(act[C])} handler returned"
        return None

    def _release(self, number: int) -> SyscallRecord:
        """Call #number, which the pairer will say no more of (a flow that does not
        retain its calls forgets it)."""
        return self._records[number] if self.retain else self._waiting.pop(number)

    def _handler_name(self, signum: int) -> str:
        return "alarm" if signum == ALARM else self._catchable.get(signum, str(signum))

    def _shape_up(self) -> None:
        """Compute the nesting of every event fed so far and not shaped yet: which
        trap each xRET returns from, the outermost trap, the owner and the privilege
        path of each event."""
        size = RECORD.size
        for first, raw in self.log.raw_chunks(self._shaped):
            if first >= self.next_seq:
                break
            shaped = self.shape(first, raw[:(self.next_seq - first) * size])
            self._returns.extend(shaped.returns)
            self._roots.extend(shaped.roots)
            self._path.extend(shaped.paths)
            self._owners.extend(shaped.owners)

    def shape(self, first: int, raw: bytes) -> Shaped:
        """The nesting after each event of `raw` (records of events #first...), which
        come after the last event shaped: what `rows` shows, computed as the events
        come (retain=False flows, harness/trace/stream.py)."""
        shaped = self._shaper.shape(raw, first)
        self._shaped = first + len(shaped.returns)
        return shaped

    def path(self, path_id: int) -> tuple[Priv, ...]:
        """The privilege path a Shaped path id stands for, outermost first."""
        return self._shaper.paths[path_id]

    @property
    def shaped(self) -> int:
        """The seq of the next event to shape."""
        return self._shaped

    @property
    def depth(self) -> int:
        """Traps open after the last event shaped (0: none)."""
        return self._shaper.depth

    def _own(self, satp: int, who: tuple[int, str], tell: bool = True) -> None:
        """Address space satp is process who's (the pairer is told, unless it
        concluded so itself)."""
        if self.named.get(satp) != who:
            self.naming += 1
        self.pids[satp] = self.named[satp] = who
        self.spaces.setdefault(who[0], set()).add(satp)
        since = self._owners_since.setdefault(satp, [])
        if not since or since[-1][1:] != who:
            since.append((self.next_seq, *who))
        if tell:
            self._pairer.own(satp, who[0])

    def owner_at(self, satp: int, seq: int) -> tuple[int, str] | None:
        """The (pid, name) address space `satp` belonged to at event #seq: the owner
        learned last at or before it (the first one learned, for events before any)."""
        since = self._owners_since.get(satp)
        if not since:
            return None
        at = bisect_right(since, seq, key=lambda e: e[0])
        _, pid, name = since[max(at - 1, 0)]
        return pid, name

    def owner_span(self, satp: int, seq: int) -> tuple[int, int]:
        """Events lo..hi (hi not included) around event #seq for which `owner_at(satp,
        ...)` gives what it gives for seq, as far as the owners learned so far say."""
        since = self._owners_since.get(satp)
        if not since:
            return SEQ_MIN, SEQ_MAX
        at = bisect_right(since, seq, key=lambda e: e[0])
        return (since[at - 1][0] if at >= 2 else SEQ_MIN,
                since[at][0] if at < len(since) else SEQ_MAX)

    def resolve_pids(self, roots: dict[int, tuple[int, str]]) -> None:
        """Name address spaces from a process table (page-table root physical address
        -> (pid, name)) for calls whose process was not known when they were made."""
        if isinstance(self.syscalls, CallList):
            self.syscalls.name_unnamed(self._owners_from(roots))
        # (a flow that keeps no calls: harness/trace/stream.py names its own)

    def owner_in(self, satp: int, roots: dict[int, tuple[int, str]]) -> tuple[int, str] | None:
        """The process a process table gives address space `satp` (None: none)."""
        return roots.get(int(decode_satp(satp, self.xlen).ppn.addr))

    def name_space(self, satp: int, roots: dict[int, tuple[int, str]]) -> bool:
        """Name the address space `satp` from a process table, if it is there."""
        who = self.owner_in(satp, roots)
        if who is not None:
            self._own(satp, who)
        return who is not None

    def _owners_from(self, roots: dict[int, tuple[int, str]]
                     ) -> Callable[[int], tuple[int, str] | None]:
        """The process of an address space, asked once per satp: its owner now, else
        the process table's entry for its root (which then owns it)."""
        found: dict[int, tuple[int, str] | None] = {}

        def owner(satp: int) -> tuple[int, str] | None:
            if satp not in found:
                who = self.pids.get(satp) or \
                    roots.get(int(decode_satp(satp, self.xlen).ppn.addr))
                if who is not None and satp not in self.pids:
                    self._own(satp, who)
                found[satp] = who
            return found[satp]

        return owner

    def name_calls(self, calls: list[SyscallRecord], roots: dict[int, tuple[int, str]]) -> None:
        """resolve_pids for these calls."""
        owner = self._owners_from(roots)
        for call in calls:
            if call.pid is not None:
                continue
            who = owner(call.satp)
            if who is not None:
                call.pid, call.process = who

    # -- reading --------------------------------------------------------------------
    def rows(self, filt: FlowFilter | None = None) -> Iterator[FlowRow]:
        self.catch_up()
        self._shape_up()
        f = filt or FlowFilter()
        kept: set[int] = set()
        first = self.start if self.threaded else max(self.start, f.seq[0] or 0)
        threads = Threads(self, keep=True)
        for seq, rec in iter_records(self.log, first):
            if seq >= self.next_seq or (f.seq[1] is not None and seq >= f.seq[1]):
                break
            i = seq - self.start
            row = self._row(seq, rec, i)
            who = self.owner_at(row.owner, seq) if row.owner else None
            if who is not None:
                row.pid, row.process = who
            if self.threaded:
                threads.see(row)
                if seq < (f.seq[0] or 0):
                    continue
            if not _within(row.instret, f.instret):
                continue
            if f.owners is not None and row.owner not in f.owners:
                continue
            if f.syscalls:
                root = self._call_at(row.root) if row.root is not None else None
                if root is None or root.name not in f.syscalls:
                    continue
            if f.causes:
                if row.is_trap:
                    if row.name not in f.causes and str(row.code) not in f.causes:
                        continue
                    kept.add(seq)
                elif row.returns_from not in kept:
                    continue
            yield row

    def _call_at(self, seq: int) -> SyscallRecord | None:
        """The call made or returned at event #seq (with retain)."""
        number = self._returns_at.get(seq)
        if number is None:
            if not isinstance(self.syscalls, CallList):
                return None
            number = self.syscalls.made_at(seq)
        return None if number is None else self.syscalls[number]

    def _row(self, seq: int, rec: Record, i: int) -> FlowRow:
        is_trap = rec[KIND] == TRAP
        ret, root = self._returns[i], self._roots[i]
        note = self.notes.get(seq, "")
        if not note and ret != NONE and self.notes.get(ret, "").startswith("sbi "):
            note = f"→ {to_signed(rec[A0], self.xlen)}"   # a0: the SBI error code
        return FlowRow(
            seq, rec[INSTRET], is_trap, _PRIVS[rec[FROM]], _PRIVS[rec[TO]],
            bool(rec[INTERRUPT]), rec[CODE], rec[CAUSE], rec[EPC] if is_trap else rec[AT],
            rec[PC], rec[TVAL], rec[SATP], rec[A0:A7 + 1], self._shaper.paths[self._path[i]],
            None if ret == NONE else ret, None if root == NONE else root, self._owners[i],
            self._call_at(seq), note, rec[STATUS_BEFORE], rec[STATUS_AFTER],
            self.signal_notes.get(seq, ""), rec[HART], rec[CLOCK])
