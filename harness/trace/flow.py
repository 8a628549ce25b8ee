"""The trap flow: every trap and xRET of a run as rows with nesting, decoded syscalls
and SBI calls.

`Flow.feed(seq, record)` consumes events in order (raw tuples, harness/trace/raw.py)
and keeps, per event, only what the raw log lacks: which trap an xRET returns from,
the outermost trap of the current nesting (its `root`), and the privilege path
(U>S>M). Rows are rebuilt on demand from the EventLog, so a run with a million
events costs a few bytes per event.

System calls pair an ecall from U with the sret that returns to the same address
space at the ecall's pc + 4. A call that switches processes (yield, a blocking
waitpid) returns later, when its process is scheduled again; exit never returns; a
successful exec returns into a new address space.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from harness.csr import Exc, Priv, cause_name
from harness.mmu.scheme import decode_satp
from harness.trace.events import EventLog
from harness.trace.raw import (
    A0,
    A7,
    AT,
    CAUSE,
    CODE,
    EPC,
    FROM,
    INSTRET,
    INTERRUPT,
    KIND,
    PC,
    SATP,
    TO,
    TRAP,
    TVAL,
    Record,
    iter_records,
)
from harness.trace.sbi import SbiNames
from harness.trace.syscalls import CallSpec, SyscallRecord, to_signed

__all__ = ["Flow", "FlowFilter", "FlowRow", "LiveMemory"]

ECALL_INSN = 4          # ecall is never compressed: the call returns to epc + 4
NONE = -1
_PRIVS = {int(p): p for p in Priv}


class LiveMemory(Protocol):
    """Reads the machine when it sits exactly at the event being fed."""

    def capture_inputs(self, call: SyscallRecord) -> None: ...
    def capture_outputs(self, call: SyscallRecord) -> None: ...
    def whoami(self) -> tuple[int, str] | None: ...


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
                 start: int | None = None) -> None:
        """Analyse `log` from event #start (default: events logged from now on), the
        hart then being at privilege `initial`."""
        self.log = log
        self.specs = specs
        self.xlen = xlen
        self.sbi = sbi or SbiNames()
        self.start = len(log) if start is None else start   # the first seq analysed
        self.next_seq = self.start
        self.syscalls: list[SyscallRecord] = []
        self.pids: dict[int, tuple[int, str]] = {}     # satp -> (pid, name), current
        self.spaces: dict[int, set[int]] = {}          # pid -> every satp it ever had
        self.named: dict[int, tuple[int, str]] = {}    # satp -> its latest (pid, name)
        self._stack: list[tuple[Priv, int, int]] = [(initial, NONE, NONE)]  # priv, trap, root
        self._paths: list[tuple[Priv, ...]] = []
        self._path_ids: dict[tuple[Priv, ...], int] = {}
        self._path = array("B")
        self._returns = array("q")
        self._roots = array("q")
        self._owner = array("Q")
        self._root_satp: dict[int, int] = {}
        self._calls: dict[int, SyscallRecord] = {}     # seq of entry or return -> call
        self._open: dict[int, SyscallRecord] = {}      # satp -> call awaiting its return
        self._forks: dict[int, SyscallRecord] = {}     # return pc -> last fork from there
        self.notes: dict[int, str] = {}
        self._entered: set[int] = set()                # satps an sret has entered

    def __len__(self) -> int:
        return self.next_seq - self.start

    # -- feeding ------------------------------------------------------------------
    def catch_up(self) -> None:
        """Consume events the log holds that were not fed yet."""
        for seq, rec in iter_records(self.log, self.next_seq):
            self.feed(seq, rec)

    def feed(self, seq: int, rec: Record, live: LiveMemory | None = None) -> SyscallRecord | None:
        """Consume one event; returns a system call that completed with it, if any."""
        if seq != self.next_seq:
            return None
        self.next_seq += 1
        stack = self._stack
        frm, to = _PRIVS[rec[FROM]], _PRIVS[rec[TO]]
        done: SyscallRecord | None = None
        if rec[KIND] == TRAP:
            if stack[-1][0] != frm:
                stack[-1] = (frm, stack[-1][1], stack[-1][2])
            root = stack[-1][2] if len(stack) > 1 else seq
            if len(stack) == 1:
                self._root_satp[seq] = rec[SATP] if frm == Priv.U else 0
            stack.append((to, seq, root))
            self._returns.append(NONE)
            if frm == Priv.U and not rec[INTERRUPT] and rec[CODE] == Exc.ECALL_U:
                done = self._ecall(seq, rec, live)
            elif frm == Priv.S and to == Priv.M and not rec[INTERRUPT] \
                    and rec[CODE] == Exc.ECALL_S:
                self.notes[seq] = "sbi " + self.sbi.name(rec[A7], rec[A7 - 1])
        else:
            opened = NONE
            if len(stack) > 1 and stack[-1][0] == frm:
                opened = stack.pop()[1]
            root = stack[-1][2] if len(stack) > 1 else (
                self._roots[opened - self.start] if opened != NONE else NONE)
            if stack[-1][0] != to:
                stack[-1] = (to, NONE, NONE)
            self._returns.append(opened)
            if frm == Priv.S and to == Priv.U and rec[CODE]:
                done = self._sret(seq, rec, opened, live)
        self._roots.append(root)
        if rec[KIND] != TRAP and to == Priv.U:
            self._owner.append(rec[SATP])    # a return to U belongs to the process entered
        else:
            self._owner.append(self._root_satp.get(root, 0) if root != NONE else 0)
        path = tuple(p for p, _, _ in stack)
        pid = self._path_ids.get(path)
        if pid is None:
            pid = self._path_ids[path] = len(self._paths)
            self._paths.append(path)
        self._path.append(pid)
        return done

    def _ecall(self, seq: int, rec: Record, live: LiveMemory | None) -> SyscallRecord | None:
        number = rec[A7]
        spec = self.specs.get(number)
        call = SyscallRecord(number, spec, tuple(rec[A0:A0 + 6]), seq, rec[INSTRET],
                             rec[EPC], rec[SATP], self.xlen)
        if live is not None:
            who = live.whoami()
            if who is not None:
                self._own(rec[SATP], who)
            live.capture_inputs(call)
        if rec[SATP] in self.pids:
            call.pid, call.process = self.pids[rec[SATP]]
        self.syscalls.append(call)
        self._calls[seq] = call
        if spec is not None and spec.noreturn:
            call.outcome = "noreturn"
            self._open.pop(rec[SATP], None)
            self.pids.pop(rec[SATP], None)   # the page table is freed and may be reused
            return call
        self._open[rec[SATP]] = call
        if spec is not None and spec.name == "fork":
            self._forks[rec[EPC] + ECALL_INSN] = call
        return None

    def _sret(self, seq: int, rec: Record, opened: int, live: LiveMemory | None) -> \
            SyscallRecord | None:
        satp, pc = rec[SATP], rec[PC]
        if live is not None and satp not in self.pids:
            who = live.whoami()
            if who is not None:
                self._own(satp, who)
        if satp not in self._entered:
            self._entered.add(satp)
            who = self.pids.get(satp)
            self.notes[seq] = f"enter pid {who[0]} ({who[1]})" if who else \
                "enter a new address space"
        call = self._open.get(satp)
        if call is None or pc != call.epc + ECALL_INSN:
            opener = self._calls.get(opened)
            if opener is not None and opener.name == "exec" and opener.outcome == "pending" \
                    and satp != opener.satp and satp not in self._open:
                call = opener            # exec succeeded: back in a new address space
                call.outcome = "new image"
                self._open.pop(opener.satp, None)
                if opener.satp in self.pids:
                    self._own(satp, self.pids.pop(opener.satp))
            else:
                fork = self._forks.get(pc)
                if fork is not None and satp != fork.satp:
                    self.notes[seq] = f"child's return from fork() #{fork.entry_seq}"
                return None
        else:
            del self._open[satp]
            call.outcome = "returned"
        call.ret = to_signed(rec[A0], self.xlen)
        call.exit_seq, call.exit_instret = seq, rec[INSTRET]
        if live is not None:
            live.capture_outputs(call)
        self._calls[seq] = call
        return call

    def _own(self, satp: int, who: tuple[int, str]) -> None:
        self.pids[satp] = self.named[satp] = who
        self.spaces.setdefault(who[0], set()).add(satp)

    def resolve_pids(self, roots: dict[int, tuple[int, str]]) -> None:
        """Name address spaces from a process table (page-table root physical address
        -> (pid, name)) for calls whose process was not known when they were made."""
        for call in self.syscalls:
            if call.pid is None:
                root = int(decode_satp(call.satp, self.xlen).ppn.addr)
                who = self.pids.get(call.satp) or roots.get(root)
                if who is not None:
                    call.pid, call.process = who
                    if call.satp not in self.pids:
                        self._own(call.satp, who)

    # -- reading --------------------------------------------------------------------
    def rows(self, filt: FlowFilter | None = None) -> Iterator[FlowRow]:
        self.catch_up()
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

    def _row(self, seq: int, rec: Record, i: int) -> FlowRow:
        is_trap = rec[KIND] == TRAP
        ret, root = self._returns[i], self._roots[i]
        return FlowRow(
            seq=seq, instret=rec[INSTRET], is_trap=is_trap, priv_from=_PRIVS[rec[FROM]],
            priv_to=_PRIVS[rec[TO]], interrupt=bool(rec[INTERRUPT]), code=rec[CODE],
            cause=rec[CAUSE], pc=rec[EPC] if is_trap else rec[AT], target=rec[PC],
            tval=rec[TVAL], satp=rec[SATP], args=tuple(rec[A0:A7 + 1]),
            path=self._paths[self._path[i]], returns_from=None if ret == NONE else ret,
            root=None if root == NONE else root, owner=self._owner[i],
            syscall=self._calls.get(seq), note=self.notes.get(seq, ""))
