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
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

from ..machine.events import event_json
from .flow import FlowRow
from .syscalls import SyscallRecord
from .who import location

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..kernelinfo.symbols import Location

__all__ = ["row_json", "syscall_json", "write_jsonl"]


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


def write_jsonl(rows: Iterable[FlowRow], out: IO[str], harts: int = 1,
                locate: Callable[[FlowRow], Location | None] | None = None) -> int:
    """Write the rows' events (and completed syscalls); returns the lines written. On
    a machine of several `harts`, each event names its `hart`; `locate` gives
    symbols for `location` (without it, or where none covers it, the address)."""
    lines = 0
    for row in rows:
        out.write(json.dumps(row_json(row, harts, locate)) + "\n")
        lines += 1
        call = row.syscall
        if call is not None and (call.exit_seq == row.seq or
                                 (call.outcome == "noreturn" and call.entry_seq == row.seq)):
            out.write(json.dumps(syscall_json(call)) + "\n")
            lines += 1
    return lines
