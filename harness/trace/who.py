"""Who did what, and where: the process, thread and code location of a trap-flow row.

A row belongs to its `owner`, the address space of the process whose trap from U
began its nesting (a return to U: the process it enters; harness/trace/shape.c), and
is named from the flow's processes (`FlowRow.pid`, `FlowRow.who`). Threads share an
address space, so which thread a row belongs to comes from the kernel, read while
the trace captures (the stops at ecalls and returns, harness/trace/capture.py): the
flow keeps the thread of each event from or to U read that way (`Flow.tids`), and
`Threads` gives every other row of the same hart the thread last entered there.
Once no thread was read for a return to U (the capture ended), rows of threaded
processes name no thread rather than a guess.

`where(row, locate)` is the row's code location as every view writes it: `at
grow+0x28` for a trap (its epc), `to fork+0x8` for an xRET (where it returned).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..abi.csr import Priv

if TYPE_CHECKING:
    from ..kernelinfo.symbols import Location
    from .flow import Flow, FlowRow

__all__ = ["Threads", "location", "where"]

_U = Priv.U


class Threads:
    """The thread of each row of a flow, rows given in order (only needed once the
    flow has seen a process with several threads: `flow.threaded`)."""

    def __init__(self, flow: Flow, keep: bool = False) -> None:
        """`keep`: leave the flow's tids in place (a flow that keeps its run reads
        them again); else each is dropped once used (a streamed trace)."""
        self.flow = flow
        self.keep = keep
        self.current: dict[int, int | None] = {}     # hart -> the thread it runs in U

    def see(self, row: FlowRow) -> None:
        """Set row.tid: the thread read at it, or the one its hart last entered U in."""
        tids = self.flow.tids
        if row.priv_from is _U or row.priv_to is _U:
            tid = (tids.get(row.seq) if self.keep else tids.pop(row.seq, None)) \
                if tids else None
            if tid is not None or not row.is_trap:
                self.current[row.hart] = tid
        row.tid = self.current.get(row.hart) if row.owner in self.flow.threaded else None


def location(row: FlowRow, locate: Callable[[FlowRow], Location | None] | None) -> str:
    """The symbol+offset the row happened at (a trap) or went to (an xRET), or its
    address when no symbol covers it."""
    loc = locate(row) if locate is not None else None
    if loc is not None and loc.symbol is not None:
        return loc.name
    return f"{row.pc if row.is_trap else row.target:#x}"


def where(row: FlowRow, locate: Callable[[FlowRow], Location | None] | None) -> str:
    """`at SYMBOL+OFF` (a trap) or `to SYMBOL+OFF` (an xRET)."""
    return f"{'at' if row.is_trap else 'to'} {location(row, locate)}"
