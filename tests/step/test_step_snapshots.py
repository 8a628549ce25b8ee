"""`privlab step` as it looks, at a fixed terminal size (pytest-textual-snapshot): the
start, and the moment after the step into hello's write ecall. The SVGs live in
__snapshots__/; after an intended change (a kernel change moves addresses and counts),
regenerate with `pytest tests/step --snapshot-update` and review them.

pytest-textual-snapshot 1.1.0 holds pytest below 9, and under pytest 8 the grader's
inner runs report deliberately broken kernels as passing (tests/grade/test_mutations.py
fails), so it is not among the test extras: these tests run where it is installed
(`pip install pytest-textual-snapshot`, in a venv not used for grading) and skip
otherwise. The pilot tests (test_step_app.py) check the same screens by content."""

from __future__ import annotations

from collections.abc import Callable

import pytest

pytest.importorskip("pytest_textual_snapshot")

from gdb.helpers import ECALL, find_insn

from harness.api import Session
from harness.build.images import Images
from harness.stepper.app import StepApp
from harness.stepper.controller import Stepper

SIZE = (180, 56)


def app_at_the_ecall(images: Images, step: bool) -> StepApp:
    s = Session.boot("hello", images=images)
    st = Stepper(s, every=100_000)
    st.continue_to(f"{find_insn(images.users['hello'], 'write', ECALL):#x}")
    if step:
        st.step()
    return StepApp(st)


def test_the_start(snap_compare: Callable[..., bool], images: Images) -> None:
    s = Session.boot("hello", images=images)
    assert snap_compare(StepApp(Stepper(s, every=100_000)), terminal_size=SIZE)


def test_after_stepping_into_the_ecall(snap_compare: Callable[..., bool],
                                       images: Images) -> None:
    assert snap_compare(app_at_the_ecall(images, step=True), terminal_size=SIZE)
