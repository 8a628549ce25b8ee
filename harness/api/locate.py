"""Where a trap flow's rows happened, as symbol+offset (file:line where known): the
locator the timeline views take, for `privlab trace` and the stepper alike."""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..kernelinfo.symbols import Location
from ..trace.flow import Flow, FlowRow
from .session import Session

__all__ = ["LOCATIONS", "locator"]

LOCATIONS = 1 << 14     # symbol lookups remembered


def locator(s: Session, flow: Flow | None = None) -> Callable[[FlowRow], Location | None]:
    """Where each row happened (traps) or went (xRETs), as symbol+offset. With `flow`
    (one that is only fed, as a streamed trace's), lookups are remembered; without,
    each row reads the session's flow as it is then (the stepper goes back in time)."""
    def lookup(addr: int, satp: int, program: str | None) -> Location | None:
        return s.info.symbolize(addr, satp, s.machine.memory, program)

    remembered = functools.lru_cache(maxsize=LOCATIONS)(lookup) if flow is not None \
        else lookup

    def locate(row: FlowRow) -> Location | None:
        # (a Flow is falsy while it has consumed nothing: `flow or s.flow` is not this)
        who = (flow if flow is not None else s.flow).owner_at(row.satp, row.seq)
        return remembered(row.pc if row.is_trap else row.target, row.satp,
                          who[1] if who else None)
    return locate
