"""Export the trap flow as Chrome trace JSON, which ui.perfetto.dev and
chrome://tracing open.

Two kinds of track groups (a Chrome "process" each):

- one per hart, `hart 0 (privlab)`, with one track per privilege level: U-mode,
  S-mode, M-mode. Each trap opens a slice on the track of the level it entered,
  closed by the xRET that returns from it; it is named for what it handles (`write`,
  `sbi DBCN.WRITE`, `s_timer`). Time spent at the outermost level between traps (a
  process running in U, the kernel booting in S) is a slice too, and a flow arrow
  joins each trap to its handler.
- one per process, `pid 2 forktree` (an address space privlab cannot name: `satp
  0x...`), with a track per thread once the process has several: the same trap
  slices, those that process's rows own, and its runs in U (`running on hart 0`).

A trap slice's arguments are the row's who and where (`who`, `hart`, `at`), the CSRs
of the level that took it as the trap left them (`sepc`, `scause`, `stval`,
`sstatus` before and after, the vector it jumped to, `satp`) and the decoded call.
Timestamps count retired instructions, one a nanosecond on the trace's time axis,
whatever the run's pace: the guest's own clock runs 2^N ns an instruction (the run's
`--icount-shift N`, 32 ns by default), and `otherData` records N when it is known.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING, Any

from ..abi.csr import SSTATUS_MASK, Priv
from .flow import FlowRow
from .who import location

if TYPE_CHECKING:
    from ..kernelinfo.symbols import Location

__all__ = ["PROCESS_BASE", "TRACKS", "chrome_trace", "hart_pid", "write_chrome_trace"]

PID = 1                      # hart 0's track group; hart h's is PID + h
PROCESS_BASE = 1000          # process p's track group is PROCESS_BASE + p
SPACE_BASE = 100_000         # then address spaces privlab could not name, in order seen
TRACKS: dict[Priv, int] = {Priv.U: 1, Priv.S: 2, Priv.M: 3}
_NAMES = {Priv.U: "U-mode (user)", Priv.S: "S-mode (kernel)", Priv.M: "M-mode (firmware)"}
_BASE = {Priv.S: "kernel", Priv.M: "firmware"}
_LEVEL = {Priv.S: "s", Priv.M: "m"}

RowLocator = Callable[[FlowRow], "Location | None"]


def hart_pid(hart: int) -> int:
    """The track group of hart `hart`."""
    return PID + hart


def _us(instret: int) -> float:
    return instret / 1000.0


def _slice_name(row: FlowRow) -> tuple[str, str]:
    if row.syscall is not None:
        return row.syscall.name, "syscall"
    if row.note.startswith("sbi "):
        return row.note, "sbi"
    return row.name, "interrupt" if row.interrupt else "exception"


def _csrs(row: FlowRow, xlen: int) -> dict[str, str]:
    """The trap CSRs of the level that took the trap, as it left them (sstatus as
    mstatus's S view)."""
    x = _LEVEL.get(row.priv_to)
    if x is None:
        return {}
    mask = SSTATUS_MASK[xlen] if x == "s" else (1 << xlen) - 1
    out = {f"{x}epc": f"{row.pc:#x}", f"{x}cause": f"{row.cause:#x}",
           f"{x}tval": f"{row.tval:#x}",
           f"{x}status before": f"{row.status_before & mask:#x}",
           f"{x}status after": f"{row.status_after & mask:#x}",
           "vector (pc after)": f"{row.target:#x}"}
    if x == "s":
        out["satp"] = f"{row.satp:#x}"
    return out


def _args(row: FlowRow, xlen: int, locate: RowLocator | None) -> dict[str, Any]:
    a: dict[str, Any] = {"seq": row.seq, "who": row.who, "hart": row.hart,
                         "at": location(row, locate), "cause": row.cause,
                         "epc": f"{row.pc:#x}", "from": row.priv_from.letter,
                         "to": row.priv_to.letter,
                         "path": ">".join(p.letter for p in row.path)}
    if row.tval:
        a["tval"] = f"{row.tval:#x}"
    if row.syscall is not None:
        a["call"] = row.syscall.call_text()
        if row.syscall.pid is not None:
            a["pid"] = row.syscall.pid
    elif row.note:
        a["detail"] = row.note
    if row.signal:
        a["signal"] = row.signal
    a["csrs"] = _csrs(row, xlen)
    return a


class _Tracks:
    """The track groups and tracks met so far, and their name records."""

    def __init__(self, names: dict[int, str]) -> None:
        self.names = names
        self.meta: list[dict[str, Any]] = []
        self._harts: set[int] = set()
        # (owner satp, pid) -> track group: a page-table root freed by one process's
        # exit may be the next one's, so an address space alone does not say whose.
        self._groups: dict[tuple[int, int | None], int] = {}
        self._threads: set[tuple[int, int]] = set()
        self._spaces = 0

    def _name(self, kind: str, pid: int, tid: int, name: str, sort: int) -> None:
        self.meta.append({"ph": "M", "name": f"{kind}_name", "pid": pid, "tid": tid,
                          "args": {"name": name}})
        self.meta.append({"ph": "M", "name": f"{kind}_sort_index", "pid": pid, "tid": tid,
                          "args": {"sort_index": sort}})

    def hart(self, hart: int) -> int:
        pid = hart_pid(hart)
        if hart not in self._harts:
            self._harts.add(hart)
            self._name("process", pid, 0, f"hart {hart} (privlab)", pid)
            for p, tid in TRACKS.items():
                self._name("thread", pid, tid, _NAMES[p], tid)
        return pid

    def process(self, row: FlowRow) -> tuple[int, int] | None:
        """The (group, track) of the row's process and thread; None: the kernel's."""
        if not row.owner:
            return None
        group = self._groups.get((row.owner, row.pid))
        if group is None:
            if row.pid is not None:
                group, name = PROCESS_BASE + row.pid, f"pid {row.pid} {row.process}".rstrip()
            else:
                group, self._spaces = SPACE_BASE + self._spaces, self._spaces + 1
                name = self.names.get(row.owner) or f"satp {row.owner:#x}"
            self._groups[row.owner, row.pid] = group
            self._name("process", group, 0, name, group)
        track = 1 if row.tid is None else 2 + row.tid
        if (group, track) not in self._threads:
            self._threads.add((group, track))
            self._name("thread", group, track,
                       "thread" if row.tid is None else f"tid {row.tid}", track)
        return group, track


def chrome_trace(rows: Iterable[FlowRow], names: dict[int, str] | None = None,
                 locate: RowLocator | None = None, xlen: int = 64,
                 icount_shift: int | None = None) -> dict[str, Any]:
    """The trace as a dict (json.dump it). `names` labels address spaces by satp
    where the rows name no process; `locate` gives symbols for `at`; `icount_shift`
    is the run's pace, recorded in `otherData` (None: not known, as for a trace file
    written before files recorded it)."""
    tracks = _Tracks(names or {})
    tracks.hart(0)
    events: list[dict[str, Any]] = []
    open_: dict[int, tuple[FlowRow, str, str]] = {}     # trap seq -> its slice
    # per hart: the outermost level's current run (level, start, name, its process)
    base: dict[int, tuple[Priv, int, str, tuple[int, int] | None]] = {}
    last = 0

    def close_base(hart: int, at: int) -> None:
        run = base.pop(hart, None)
        if run is not None:
            p, start, name, proc = run
            events.append({"ph": "X", "name": name, "cat": "run", "pid": hart_pid(hart),
                           "tid": TRACKS[p], "ts": _us(start), "dur": _us(at - start)})
            if proc is not None:
                events.append({"ph": "X", "name": f"running on hart {hart}", "cat": "run",
                               "pid": proc[0], "tid": proc[1], "ts": _us(start),
                               "dur": _us(at - start)})

    def run_name(p: Priv, row: FlowRow) -> str:
        if p != Priv.U:
            return _BASE[p]
        if row.pid is not None:
            return f"pid {row.pid} {row.process}".rstrip()
        return tracks.names.get(row.satp) or f"user (satp {row.satp:#x})"

    def start_base(row: FlowRow, p: Priv, at: int) -> None:
        proc = tracks.process(row) if p == Priv.U else None
        base[row.hart] = (p, at, run_name(p, row), proc)

    def slice_(t: FlowRow, name: str, cat: str, end: int, args: dict[str, Any]) -> None:
        common = {"ph": "X", "name": name, "cat": cat, "ts": _us(t.instret),
                  "dur": _us(max(0, end - t.instret)), "args": args}
        events.append({**common, "pid": hart_pid(t.hart), "tid": TRACKS[t.priv_to]})
        proc = tracks.process(t)
        if proc is not None:
            events.append({**common, "pid": proc[0], "tid": proc[1]})

    first = True
    for row in rows:
        tracks.hart(row.hart)
        # What ran from reset to the first event (known only if the rows start there:
        # a filtered trace does not say when the level it starts in was entered).
        if first and row.seq == 0 and len(row.path) <= 2:
            start_base(row, row.priv_from, 0)
        first = False
        last = row.instret
        pid = hart_pid(row.hart)
        if row.is_trap:
            if len(row.path) == 2:
                close_base(row.hart, row.instret)
            name, cat = _slice_name(row)
            open_[row.seq] = (row, name, cat)
            events.append({"ph": "s", "id": row.seq, "name": "trap", "cat": "flow", "pid": pid,
                           "tid": TRACKS[row.priv_from], "ts": _us(row.instret)})
            events.append({"ph": "f", "bp": "e", "id": row.seq, "name": "trap", "cat": "flow",
                           "pid": pid, "tid": TRACKS[row.priv_to], "ts": _us(row.instret)})
            continue
        trap = open_.pop(row.returns_from, None) if row.returns_from is not None else None
        if trap is not None:
            t, name, cat = trap
            args = _args(t, xlen, locate)
            args["returned to"] = location(row, locate)
            if t.syscall is not None and t.syscall.exit_seq == row.seq:
                args["ret"] = t.syscall.ret
            slice_(t, name, cat, row.instret, args)
        if len(row.path) == 1:
            close_base(row.hart, row.instret)
            start_base(row, row.priv_to, row.instret)
    for hart in list(base):
        close_base(hart, last)
    for t, name, cat in open_.values():      # traps never returned from (exit, a fault)
        args = _args(t, xlen, locate)
        args["returned"] = False
        slice_(t, name, cat, last, args)
    other: dict[str, Any] = {"source": "privlab",
                             "clock": "ts: instructions retired, 1 instruction = 1 ns"}
    if icount_shift is not None:
        other["icount_shift"] = icount_shift
        other["guest_ns_per_instruction"] = 1 << icount_shift
    return {"traceEvents": tracks.meta + events, "displayTimeUnit": "ns", "otherData": other}


def write_chrome_trace(rows: Iterable[FlowRow], out: IO[str],
                       names: dict[int, str] | None = None,
                       locate: RowLocator | None = None, xlen: int = 64,
                       icount_shift: int | None = None) -> None:
    json.dump(chrome_trace(rows, names, locate, xlen, icount_shift), out)
    out.write("\n")
