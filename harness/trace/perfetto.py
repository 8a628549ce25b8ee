"""Export the trap flow as Chrome trace JSON, which ui.perfetto.dev and
chrome://tracing open.

One process ("hart 0") with one track per privilege level: U-mode, S-mode, M-mode.
Each trap opens a slice on the track of the level it entered, closed by the xRET that
returns from it; it is named for what it handles (`write`, `sbi DBCN.WRITE`,
`s_timer`) and carries the cause, epc, tval and decoded arguments. Time spent at the
outermost level between traps (a process running in U, the kernel booting in S) is a
slice too, and a flow arrow joins each trap to its handler. Timestamps are guest time:
one retired instruction is one nanosecond (harness/native: time derives from instret).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO, Any

from ..abi.csr import Priv
from .flow import FlowRow

__all__ = ["TRACKS", "chrome_trace", "write_chrome_trace"]

PID = 1
TRACKS: dict[Priv, int] = {Priv.U: 1, Priv.S: 2, Priv.M: 3}
_NAMES = {Priv.U: "U-mode (user)", Priv.S: "S-mode (kernel)", Priv.M: "M-mode (firmware)"}
_BASE = {Priv.S: "kernel", Priv.M: "firmware"}


def _us(instret: int) -> float:
    return instret / 1000.0


def _slice_name(row: FlowRow) -> tuple[str, str]:
    if row.syscall is not None:
        return row.syscall.name, "syscall"
    if row.note.startswith("sbi "):
        return row.note, "sbi"
    return row.name, "interrupt" if row.interrupt else "exception"


def _args(row: FlowRow) -> dict[str, Any]:
    a: dict[str, Any] = {"seq": row.seq, "cause": row.cause, "epc": f"{row.pc:#x}",
                         "from": row.priv_from.letter, "to": row.priv_to.letter,
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
    return a


def _meta() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"ph": "M", "name": "process_name", "pid": PID, "tid": 0,
                                  "args": {"name": "hart 0 (privlab)"}}]
    for p, tid in TRACKS.items():
        out.append({"ph": "M", "name": "thread_name", "pid": PID, "tid": tid,
                    "args": {"name": _NAMES[p]}})
        out.append({"ph": "M", "name": "thread_sort_index", "pid": PID, "tid": tid,
                    "args": {"sort_index": tid}})
    return out


def chrome_trace(rows: Iterable[FlowRow], names: dict[int, str] | None = None) -> dict[str, Any]:
    """The trace as a dict (json.dump it). `names` labels U-mode runs by satp."""
    events = _meta()
    open_: dict[int, tuple[FlowRow, str, str]] = {}     # trap seq -> its slice
    base: tuple[Priv, int, str] | None = None          # the outermost level's current run
    last = 0

    def close_base(at: int) -> None:
        nonlocal base
        if base is not None:
            p, start, name = base
            events.append({"ph": "X", "name": name, "cat": "run", "pid": PID,
                           "tid": TRACKS[p], "ts": _us(start), "dur": _us(at - start)})
            base = None

    def run_name(p: Priv, satp: int) -> str:
        if p != Priv.U:
            return _BASE[p]
        return (names or {}).get(satp) or f"user (satp {satp:#x})"

    first = True
    for row in rows:
        # What ran from reset to the first event (known only if the rows start there:
        # a filtered trace does not say when the level it starts in was entered).
        if first and row.seq == 0 and len(row.path) <= 2:
            base = (row.priv_from, 0, run_name(row.priv_from, row.satp))
        first = False
        last = row.instret
        if row.is_trap:
            if len(row.path) == 2:
                close_base(row.instret)
            name, cat = _slice_name(row)
            open_[row.seq] = (row, name, cat)
            events.append({"ph": "s", "id": row.seq, "name": "trap", "cat": "flow", "pid": PID,
                           "tid": TRACKS[row.priv_from], "ts": _us(row.instret)})
            events.append({"ph": "f", "bp": "e", "id": row.seq, "name": "trap", "cat": "flow",
                           "pid": PID, "tid": TRACKS[row.priv_to], "ts": _us(row.instret)})
            continue
        trap = open_.pop(row.returns_from, None) if row.returns_from is not None else None
        if trap is not None:
            t, name, cat = trap
            args = _args(t)
            if t.syscall is not None and t.syscall.exit_seq == row.seq:
                args["ret"] = t.syscall.ret
            events.append({"ph": "X", "name": name, "cat": cat, "pid": PID,
                           "tid": TRACKS[t.priv_to], "ts": _us(t.instret),
                           "dur": _us(row.instret - t.instret), "args": args})
        if len(row.path) == 1:
            close_base(row.instret)
            base = (row.priv_to, row.instret, run_name(row.priv_to, row.satp))
    close_base(last)
    for t, name, cat in open_.values():      # traps never returned from (exit, a fault)
        args = _args(t)
        args["returned"] = False
        events.append({"ph": "X", "name": name, "cat": cat, "pid": PID,
                       "tid": TRACKS[t.priv_to], "ts": _us(t.instret),
                       "dur": _us(max(0, last - t.instret)), "args": args})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"source": "privlab", "clock": "1 instruction retired = 1 ns"}}


def write_chrome_trace(rows: Iterable[FlowRow], out: IO[str],
                       names: dict[int, str] | None = None) -> None:
    json.dump(chrome_trace(rows, names), out)
    out.write("\n")
