"""The trap flow: every trap and xRET of a run as rows with nesting, decoded syscalls
and SBI calls.

`Flow.feed(seq, record)` consumes events in order (raw tuples, harness/trace/raw.py)
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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from harness.abi.csr import Exc, Irq, Priv, cause_name
from harness.mmu.scheme import decode_satp
from harness.trace.events import RECORD, Event, EventLog, TrapEvent, XretEvent
from harness.trace.raw import (
    A0,
    A7,
    AT,
    CAUSE,
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
from harness.trace.sbi import SbiNames
from harness.trace.shaper import NONE, Shaped, Shaper
from harness.trace.syscalls import CallSpec, SyscallRecord, signal_names, to_signed

__all__ = ["Flow", "FlowFilter", "FlowRow", "LiveMemory"]

ECALL_INSN = 4          # ecall is never compressed: the call returns to epc + 4
_PRIVS = {int(p): p for p in Priv}
_U, _S, _M = int(Priv.U), int(Priv.S), int(Priv.M)
_ECALL_U, _ECALL_S = int(Exc.ECALL_U), int(Exc.ECALL_S)
_S_TIMER = int(Irq.S_TIMER)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The records a flow makes hold no cycles, so the cyclic garbage collector is
    paused while it makes them: with a hundred thousand calls it would otherwise rescan
    them again and again."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


class LiveMemory(Protocol):
    """Reads the machine when it sits exactly at the event being fed."""

    def capture_inputs(self, call: SyscallRecord) -> None: ...
    def capture_outputs(self, call: SyscallRecord) -> None: ...
    def whoami(self) -> tuple[int, str] | None: ...
    def thread(self) -> int | None: ...


def thread_key(satp: int, tid: int) -> int:
    """What the flow keys a thread's pending call and resume point by: its address
    space, and its thread id when the kernel has threads (tid 0 keys by satp alone)."""
    return satp | (tid << 64)


@dataclass(slots=True)
class _Handler:
    """A signal handler the kernel entered and the flow has not seen end yet."""

    signum: int
    name: str
    resume: int                  # the interrupted pc: where its end returns to
    call: SyscallRecord | None   # the system call it interrupted, to return then


@dataclass(slots=True)
class FlowRow:
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


def _within(v: int, r: tuple[int | None, int | None]) -> bool:
    return (r[0] is None or v >= r[0]) and (r[1] is None or v < r[1])


class Flow:
    def __init__(self, log: EventLog, specs: dict[int, CallSpec], xlen: int,
                 sbi: SbiNames | None = None, initial: Priv = Priv.M,
                 start: int | None = None, retain: bool = True) -> None:
        """Analyse `log` from event #start (default: events logged from now on), the
        hart then being at privilege `initial`. Without `retain`, the flow keeps no
        calls nor per-event state: it is fed and stepped one event at a time."""
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
        self.syscalls: list[SyscallRecord] = []
        self.pids: dict[int, tuple[int, str]] = {}     # satp -> (pid, name), current
        self.spaces: dict[int, set[int]] = {}          # pid -> every satp it ever had
        self.named: dict[int, tuple[int, str]] = {}    # satp -> its latest (pid, name)
        # The nesting of each event shaped (harness/native/shape.c), from seq `start`
        # on, kept with retain: the trap an xRET returns from, the root, the path id
        # and the owner.
        self._shaper = Shaper(initial)
        self._returns = array("q")
        self._roots = array("q")
        self._path = array("I")
        self._owners = array("Q")
        self._calls: dict[int, SyscallRecord] = {}     # seq of entry or return -> call,
                                                       # indexed when rows are read
        self._indexed = 0                              # syscalls indexed so far
        self._unreturned: list[SyscallRecord] = []     # of those, the ones not returned
        self._open: dict[int, SyscallRecord] = {}      # thread_key -> call awaiting its return
        # return pc -> forks made from there whose child has not run yet, oldest first
        self._forks: dict[int, list[SyscallRecord]] = {}
        self.notes: dict[int, str] = {}
        self._entered: set[int] = set()                # satps an sret has entered
        self._last_u: SyscallRecord | None = None      # the last trap from U, if an ecall
        self._shaped = self.start                      # events _shape has seen
        # Signals: thread_key -> (pc the last trap from U returns to, NONE after a
        # fault; its seq), the handlers running per key, the kills not yet seen delivered
        # (by signal number), and the annotations, by seq.
        self._resume: dict[int, tuple[int, int]] = {}
        self._handlers: dict[int, list[_Handler]] = {}
        self._sent: dict[int, int] = {}
        self.signal_notes: dict[int, str] = {}
        self._kills = frozenset(n for n, c in specs.items() if c.name == "kill" and
                                any(a.name == "signum" for a in c.args))
        # Alarms: the sigalarm numbers, thread_key -> the handler its last sigalarm set,
        # and thread_key -> its last timer interrupt from U (the one trap that starts an
        # alarm).
        self._sigalarms = frozenset(n for n, c in specs.items()
                                    if c.name == "sigalarm" and len(c.args) == 2)
        self._alarms: dict[int, int] = {}
        self._ticked: dict[int, int] = {}
        names = signal_names()
        self._catchable = {n: name for n, name in names.items()
                           if name not in ("SIGKILL", "SIGSTOP")}

    def __len__(self) -> int:
        return self.next_seq - self.start

    # -- feeding ------------------------------------------------------------------
    # Two passes over the events, each in order: `feed` pairs system calls and names
    # SBI calls (always); `_shape_up` computes the nesting (only when rows are read).

    def catch_up(self, stop: int | None = None) -> None:
        """Consume events the log holds that were not fed yet (up to event #stop, not
        included, if given)."""
        unpack, size = RECORD.iter_unpack, RECORD.size
        with _gc_paused():
            for first, raw in self.log.raw_chunks(self.next_seq):
                if stop is not None:
                    if first >= stop:
                        break
                    raw = raw[:(stop - first) * size]
                if self.retain:
                    self._consume(first, unpack(raw), None)
                else:
                    for seq, rec in enumerate(unpack(raw), first):
                        self.feed(seq, rec)

    def feed(self, seq: int, rec: Record, live: LiveMemory | None = None) -> SyscallRecord | None:
        """Consume one event; returns a system call that completed with it, if any."""
        if seq != self.next_seq:
            return None
        done = self._consume(seq, (rec,), live)
        if not self.retain:
            if done is not None:
                self.fresh[seq] = done
            made = self._last_u
            if made is not None and made.entry_seq == seq:
                self.fresh[seq] = made
        return done

    def _consume(self, first: int, recs: Iterable[Record],
                 live: LiveMemory | None) -> SyscallRecord | None:
        """Consume events #first... in order; returns a system call the last one
        completed, if any. This runs for every event of a traced run: it is written
        for speed."""
        ecall, sret = self._ecall, self._sret
        done = None
        seq = first - 1
        for seq, rec in enumerate(recs, first):
            done = None
            frm = rec[FROM]
            if rec[KIND] == TRAP:
                if frm == _U:
                    if rec[CODE] == _ECALL_U and not rec[INTERRUPT]:
                        done = ecall(seq, rec, live)
                        continue
                    self._last_u = None
                    tid = live.thread() if live is not None else None
                    key = thread_key(rec[SATP], tid or 0)
                    self._resume[key] = (rec[EPC] if rec[INTERRUPT] else NONE, seq)
                    if rec[INTERRUPT] and rec[CODE] == _S_TIMER:
                        self._ticked[key] = seq
                elif frm == _S and rec[TO] == _M and rec[CODE] == _ECALL_S and \
                        not rec[INTERRUPT]:
                    self.notes[seq] = "sbi " + self.sbi.name(rec[A7], rec[A7 - 1])
            elif rec[TO] == _U and frm == _S and rec[CODE]:
                done = sret(seq, rec, live)
        self.next_seq = seq + 1
        return done

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

    def _ecall(self, seq: int, rec: Record, live: LiveMemory | None) -> SyscallRecord | None:
        number, satp = rec[A7], rec[SATP]
        spec = self.specs.get(number)
        call = SyscallRecord(number, spec, rec[A0:A0 + 6], seq, rec[INSTRET], rec[EPC], satp,
                             self.xlen)
        if live is not None:
            who = live.whoami()
            if who is not None:
                self._own(satp, who)
            call.tid = live.thread() or 0
            live.capture_inputs(call)
        who = self.pids.get(satp)
        if who is not None:
            call.pid, call.process = who
        key = thread_key(satp, call.tid) if call.tid else satp
        self.calls_made += 1
        if self.retain:
            self.syscalls.append(call)
        self._last_u = call
        if number in self._kills:
            signum = to_signed(rec[A0 + 1], 32)
            self._sent[signum] = self._sent.get(signum, 0) + 1
        elif number in self._sigalarms:
            if to_signed(rec[A0], 32) > 0:
                self._alarms[key] = rec[A0 + 1]
            else:
                self._alarms.pop(key, None)
        if spec is not None and spec.noreturn:
            call.outcome = "noreturn"
            self._open.pop(key, None)
            self._resume.pop(key, None)
            self._handlers.pop(key, None)
            self._alarms.pop(key, None)
            if call.tid == 0:                # a thread's exit leaves the process
                self.pids.pop(rec[SATP], None)   # the page table is freed, may be reused
            return call
        self._resume[key] = (rec[EPC] + ECALL_INSN, seq)
        self._open[key] = call
        if spec is not None and spec.name == "fork":
            self._forks.setdefault(rec[EPC] + ECALL_INSN, []).append(call)
        return None

    def _sret(self, seq: int, rec: Record, live: LiveMemory | None) -> SyscallRecord | None:
        satp, pc = rec[SATP], rec[PC]
        if live is not None and satp not in self.pids:
            who = live.whoami()
            if who is not None:
                self._own(satp, who)
        tid = (live.thread() or 0) if live is not None else 0
        key = thread_key(satp, tid) if tid else satp
        if key not in self._entered:
            self._entered.add(key)
            who = self.pids.get(satp)
            thread = f" thread {tid}" if tid else ""
            self.notes[seq] = f"enter pid {who[0]} ({who[1]}){thread}" if who else \
                "enter a new address space"
        call = self._open.get(key)
        if call is None or pc != call.epc + ECALL_INSN:
            opener = self._last_u      # the trap from U this sret ends the handling of
            if opener is not None and opener.name == "exec" and opener.outcome == "pending" \
                    and satp != opener.satp and key not in self._open:
                call = opener            # exec succeeded: back in a new address space
                call.outcome = "new image"
                opened = thread_key(opener.satp, opener.tid)
                self._open.pop(opened, None)
                self._resume.pop(opened, None)
                self._handlers.pop(opened, None)
                self._alarms.pop(opened, None)   # exec ends the alarm
                if opener.satp in self.pids:
                    self._own(satp, self.pids.pop(opener.satp))
            else:
                fork = self._child_of(pc, satp)
                if fork is not None:
                    fork.child_seq = seq
                    self.notes[seq] = f"child's return from fork() #{fork.entry_seq}"
                    return None
                return self._signal_sret(seq, rec, live, key)
        else:
            del self._open[key]
            call.outcome = "returned"
        call.ret = to_signed(rec[A0], self.xlen)
        call.exit_seq, call.exit_instret = seq, rec[INSTRET]
        if call.ret < 0 and call.name == "fork":     # no child will return from it
            forks = self._forks.get(call.epc + ECALL_INSN, [])
            if call in forks:
                forks.remove(call)
        if live is not None:
            live.capture_outputs(call)
        return call

    def _signal_sret(self, seq: int, rec: Record, live: LiveMemory | None,
                     satp: int) -> SyscallRecord | None:
        """An sret to U that none of the rules above explains: the end of a signal
        handler (back at its interrupted pc), the entry to one, or neither. Returns
        the interrupted system call if it completes here. `satp`: the thread_key."""
        pc = rec[PC]
        running = self._handlers.get(satp, [])
        top = running[-1] if running else None
        if top is not None and pc == top.resume:
            running.pop()
            self._handler_ended(satp, top)
            self.signal_notes[seq] = f"back from {top.name} handler"
            call = top.call
            if call is None:
                return None
            call.ret = to_signed(rec[A0], self.xlen)
            call.exit_seq, call.exit_instret, call.outcome = seq, rec[INSTRET], "returned"
            if live is not None:
                live.capture_outputs(call)
            return call
        resume = self._resume.get(satp)
        if resume is not None and pc == self._alarms.get(satp, NONE) and \
                resume[0] not in (NONE, pc) and self._ticked.get(satp) == resume[1]:
            self._handlers.setdefault(satp, []).append(_Handler(0, "alarm", resume[0], None))
            self.signal_notes[seq] = "→ alarm handler"
            return None
        signum = rec[A0]
        name = self._catchable.get(signum)
        if name is None or not self._sent.get(signum) or resume is None:
            return None
        self._sent[signum] -= 1
        if top is not None and self._ending_handler(satp, resume):
            # The handler's end went straight into the next one: same interrupted code.
            running.pop()
            self._handler_ended(satp, top)
            entered = _Handler(signum, name, top.resume, top.call)
        elif resume[0] != NONE:
            call = self._open.get(satp)
            if call is not None and call.epc + ECALL_INSN == resume[0]:
                del self._open[satp]   # it returns when the handler is done
            else:
                call = None
            entered = _Handler(signum, name, resume[0], call)
        else:
            return None
        self._handlers.setdefault(satp, []).append(entered)
        self.signal_notes[seq] = f"→ handler for {name}"
        return None

    def _ending_handler(self, satp: int, resume: tuple[int, int]) -> bool:
        """Is the trap this sret returns from the end of a handler: a sigreturn, or
        the fault a returning handler takes?"""
        call = self._open.get(satp)
        return resume[0] == NONE or (call is not None and call.name == "sigreturn" and
                                     call.epc + ECALL_INSN == resume[0])

    def _handler_ended(self, satp: int, handler: _Handler) -> None:
        """The trap that ended handler: a sigreturn, which does not return to its
        caller, or the fault of a handler that returned (ra = SIGRETURN_PC)."""
        resume = self._resume.get(satp)
        call = self._open.get(satp)
        if call is not None and call.name == "sigreturn":
            del self._open[satp]
            call.outcome = "noreturn"
        elif resume is not None and resume[0] == NONE:
            self.signal_notes[resume[1]] = f"the {handler.name} handler returned"

    def _child_of(self, pc: int, satp: int) -> SyscallRecord | None:
        """The fork whose child this is: an sret to a fork's return address in another
        address space. The fork that returned the child's pid if that pid is known
        (capture reads it from the kernel), else the oldest fork from there whose
        child has not run yet (the scheduler runs new processes in order)."""
        forks = self._forks.get(pc)
        if not forks:
            return None
        who = self.pids.get(satp)
        mine = [f for f in forks if f.satp != satp and (who is None or f.ret == who[0])]
        if not mine:
            return None
        forks.remove(mine[0])
        return mine[0]

    def _own(self, satp: int, who: tuple[int, str]) -> None:
        self.pids[satp] = self.named[satp] = who
        self.spaces.setdefault(who[0], set()).add(satp)

    def resolve_pids(self, roots: dict[int, tuple[int, str]]) -> None:
        """Name address spaces from a process table (page-table root physical address
        -> (pid, name)) for calls whose process was not known when they were made."""
        self.name_calls(self.syscalls, roots)

    def name_space(self, satp: int, roots: dict[int, tuple[int, str]]) -> bool:
        """Name the address space `satp` from a process table, if it is there."""
        who = roots.get(int(decode_satp(satp, self.xlen).ppn.addr))
        if who is not None:
            self._own(satp, who)
        return who is not None

    def name_calls(self, calls: list[SyscallRecord], roots: dict[int, tuple[int, str]]) -> None:
        """resolve_pids for these calls."""
        found: dict[int, tuple[int, str] | None] = {}
        for call in calls:
            if call.pid is not None:
                continue
            if call.satp not in found:
                root = int(decode_satp(call.satp, self.xlen).ppn.addr)
                who = self.pids.get(call.satp) or roots.get(root)
                found[call.satp] = who
                if who is not None and call.satp not in self.pids:
                    self._own(call.satp, who)
            who = found[call.satp]
            if who is not None:
                call.pid, call.process = who

    # -- reading --------------------------------------------------------------------
    def rows(self, filt: FlowFilter | None = None) -> Iterator[FlowRow]:
        self.catch_up()
        self._shape_up()
        self._index_calls()
        f = filt or FlowFilter()
        kept: set[int] = set()
        for seq, rec in iter_records(self.log, max(self.start, f.seq[0] or 0)):
            if seq >= self.next_seq or (f.seq[1] is not None and seq >= f.seq[1]):
                break
            i = seq - self.start
            row = self._row(seq, rec, i)
            if not _within(row.instret, f.instret):
                continue
            if f.owners is not None and row.owner not in f.owners:
                continue
            if f.syscalls:
                root = self._calls.get(row.root) if row.root is not None else None
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

    def _index_calls(self) -> None:
        """Index calls by the seq of their entry and of their return: the calls made
        since the last time, and the returns since then of calls made before (a
        flow read again and again, as the stepper does, indexes each call once)."""
        calls, waiting = self._calls, []
        for c in self._unreturned:
            if c.exit_seq is not None:
                calls[c.exit_seq] = c
            else:
                waiting.append(c)
        for c in self.syscalls[self._indexed:]:
            calls[c.entry_seq] = c
            if c.exit_seq is not None:
                calls[c.exit_seq] = c
            else:
                waiting.append(c)
        self._indexed, self._unreturned = len(self.syscalls), waiting

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
            self._calls.get(seq), note, rec[STATUS_BEFORE], rec[STATUS_AFTER],
            self.signal_notes.get(seq, ""), rec[HART])
