"""JSON Lines export of a (filtered) trap flow.

Trap and xRET lines are the event objects of `Event.to_json()` (their fields:
docs/inspect/exports.md).
Each system call adds one line of kind "syscall" after the event that completes it
(its sret, or the ecall itself for a call that never returns):

    {"kind": "syscall", "seq": 6, "exit_seq": 9, "instret": 2833470, "number": 64,
     "name": "write", "args": [1, 274877898072, 14], "call": "write(1, \\"Hello...\\", 14)",
     "ret": 14, "outcome": "returned", "pid": 1}
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO, Any

from ..machine.events import event_json
from .flow import FlowRow
from .syscalls import SyscallRecord

__all__ = ["syscall_json", "write_jsonl"]


def syscall_json(call: SyscallRecord) -> dict[str, Any]:
    n = len(call.spec.args) if call.spec else len(call.args)
    return {"kind": "syscall", "seq": call.entry_seq, "exit_seq": call.exit_seq,
            "instret": call.entry_instret, "number": call.number, "name": call.name,
            "args": list(call.args[:n]), "call": call.call_text(), "ret": call.ret,
            "outcome": call.outcome, "pid": call.pid}


def write_jsonl(rows: Iterable[FlowRow], out: IO[str], harts: int = 1) -> int:
    """Write the rows' events (and completed syscalls); returns the lines written. On
    a machine of several `harts`, each event names its `hart`."""
    lines = 0
    for row in rows:
        out.write(json.dumps(event_json(row.event(), harts)) + "\n")
        lines += 1
        call = row.syscall
        if call is not None and (call.exit_seq == row.seq or
                                 (call.outcome == "noreturn" and call.entry_seq == row.seq)):
            out.write(json.dumps(syscall_json(call)) + "\n")
            lines += 1
    return lines
