"""Block numbers written as runs: "66-76, 78, 80-122"."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["format_runs", "runs"]


def runs(numbers: Iterable[int], *, keep_order: bool = False) -> list[tuple[int, int]]:
    """Consecutive numbers as (first, last) pairs, sorted unless `keep_order`."""
    out: list[tuple[int, int]] = []
    for n in (numbers if keep_order else sorted(numbers)):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def format_runs(numbers: Iterable[int], limit: int | None = None, *,
                keep_order: bool = False) -> str:
    """"70-72, 80"; past `limit` runs, "... and N more runs"."""
    found = runs(numbers, keep_order=keep_order)
    shown = found if limit is None else found[:limit]
    text = ", ".join(f"{a}" if a == z else f"{a}-{z}" for a, z in shown)
    return text + (f" and {len(found) - len(shown)} more runs" if len(shown) < len(found)
                   else "")
