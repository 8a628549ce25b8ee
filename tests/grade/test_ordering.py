"""Tests run after the tests they require, wherever pytest collected them."""

from __future__ import annotations

from privlab.grade.ordering import prerequisites_first

NEEDS = {"hidden_a": ["visible_x"], "hidden_b": ["hidden_a"], "loop_1": ["loop_2"],
         "loop_2": ["loop_1"], "stray": ["nowhere"]}


def _order(names: list[str]) -> list[str]:
    return prerequisites_first(names, lambda n: n, lambda n: NEEDS.get(n, []))


def test_a_test_moves_after_what_it_requires_and_nothing_else_moves() -> None:
    assert _order(["hidden_b", "hidden_a", "other", "visible_x", "last"]) == \
        ["visible_x", "hidden_a", "hidden_b", "other", "last"]
    assert _order(["visible_x", "hidden_a", "other"]) == ["visible_x", "hidden_a", "other"]


def test_cycles_and_unknown_names_keep_every_test_once() -> None:
    assert _order(["loop_1", "stray", "loop_2"]) == ["loop_2", "loop_1", "stray"]
