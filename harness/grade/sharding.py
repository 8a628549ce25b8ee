"""Splitting a lab's tests over N processes: tests tied by `requires` stay together
(a child needs its parent's result), and the parts are balanced by test count."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["shard_items"]

T = TypeVar("T")


def _units(items: Sequence[T], name: Callable[[T], str],
           requires: Callable[[T], list[str]]) -> list[list[T]]:
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    index = {name(item): i for i, item in enumerate(items)}
    for i, item in enumerate(items):
        for needed in requires(item):
            j = index.get(needed)
            if j is not None:
                parent[find(i)] = find(j)
    groups: dict[int, list[T]] = {}
    for i, item in enumerate(items):
        groups.setdefault(find(i), []).append(item)
    return list(groups.values())


def shard_items(items: Sequence[T], requires: Callable[[T], list[str]], index: int,
                count: int, name: Callable[[T], str] | None = None) -> list[T]:
    """The items shard `index` of `count` runs, in their original order. Every process
    computes the same split from the same collection."""
    if count <= 1:
        return list(items)
    key = name or (lambda item: str(getattr(item, "name", item)))
    loads = [0] * count
    chosen: set[int] = set()
    units = sorted(_units(items, key, requires), key=len, reverse=True)
    for unit in units:
        target = loads.index(min(loads))
        loads[target] += len(unit)
        if target == index:
            chosen.update(id(item) for item in unit)
    return [item for item in items if id(item) in chosen]
