"""Runs of identical rows folded into one row with a count, after TIMES (the
multiplication sign): `s_external at sleep+0xa8 / sret`, 16 times.

Rows are grouped into units: a nesting from the trap that opens it to the xRET that
ends it (the hart back at the level it started at), or a row on its own. Consecutive
units that look the same (`key`: what a view prints of each row, seq and instret
left out) on the same hart make a `Fold`; a view prints it as one row with a count
and can unfold it into every row it stands for. A unit longer than MAX_UNIT rows, or
one another hart's rows interrupt, is never folded.

`Folder` works as rows come (`push`, then `flush` at the end or when the output
should catch up): a trace streams.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field

from .flow import FlowRow

__all__ = ["MAX_UNIT", "TIMES", "Fold", "Folder", "Item", "fold_rows"]

TIMES = "\N{MULTIPLICATION SIGN}"   # before a fold's count

MAX_UNIT = 16       # rows in a unit that may fold


@dataclass(slots=True)
class Fold:
    """`count` repetitions of a unit of `size` rows; `rows` holds them all, in order."""

    rows: list[FlowRow]
    size: int

    @property
    def count(self) -> int:
        return len(self.rows) // self.size

    @property
    def unit(self) -> list[FlowRow]:
        """The first repetition: what the folded row shows."""
        return self.rows[:self.size]

    @property
    def first(self) -> FlowRow:
        return self.rows[0]

    @property
    def last(self) -> FlowRow:
        return self.rows[-1]


Item = FlowRow | Fold
Key = Callable[[FlowRow], Hashable]


@dataclass
class _Run:
    """Consecutive units with the same keys, folded into one line when there are enough."""
    key: tuple[Hashable, ...]
    size: int
    rows: list[FlowRow] = field(default_factory=list)


class Folder:
    def __init__(self, key: Key, min_count: int = 2) -> None:
        """Units fold when `min_count` or more in a row have the same keys."""
        self.key = key
        self.min_count = min_count
        self._unit: list[FlowRow] = []
        self._keys: list[Hashable] = []
        self._run: _Run | None = None

    def push(self, rows: Iterable[FlowRow]) -> list[Item]:
        """Take rows in order; return the items whose runs are over."""
        out: list[Item] = []
        unit, keys, key = self._unit, self._keys, self.key
        for row in rows:
            if unit and unit[-1].hart != row.hart:
                self._end_run(out)
                out.extend(unit)
                unit.clear()
                keys.clear()
            unit.append(row)
            keys.append(key(row))
            if len(row.path) == 1:            # the nesting is over
                self._unit_done(out)
            elif len(unit) > MAX_UNIT:
                self._end_run(out)
                out.extend(unit)
                unit.clear()
                keys.clear()
        return out

    def flush(self) -> list[Item]:
        """Everything taken so far, folded as far as it goes (a later row identical
        to the last ones starts a new run)."""
        out: list[Item] = []
        self._end_run(out)
        out.extend(self._unit)
        self._unit.clear()
        self._keys.clear()
        return out

    @property
    def pending(self) -> int:
        """Rows taken and not yet given back."""
        return len(self._unit) + (len(self._run.rows) if self._run else 0)

    def _unit_done(self, out: list[Item]) -> None:
        key = tuple(self._keys)
        run = self._run
        if run is not None and run.key == key and run.rows[0].hart == self._unit[0].hart:
            run.rows.extend(self._unit)
        else:
            self._end_run(out)
            self._run = _Run(key, len(self._unit), list(self._unit))
        self._unit.clear()
        self._keys.clear()

    def _end_run(self, out: list[Item]) -> None:
        run = self._run
        if run is None:
            return
        self._run = None
        if len(run.rows) // run.size >= self.min_count:
            out.append(Fold(run.rows, run.size))
        else:
            out.extend(run.rows)


def fold_rows(rows: Iterable[FlowRow], key: Key, min_count: int = 2) -> list[Item]:
    """All of `rows`, runs of identical units folded."""
    folder = Folder(key, min_count)
    return folder.push(rows) + folder.flush()
