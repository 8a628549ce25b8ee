"""`privlab step --smp 2`: a step is one instruction of the machine in the schedule's
order, the status line and the messages name the hart that ran it, the timeline has a
hart column, and stepping back returns to each earlier moment on the hart that ran
the instruction. The program is tests/conformance/smp/ipi.S (hart 0 sends hart 1 an
IPI through msip; hart 1 takes it: event #0)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest
from machine.test_smp import program

from privlab.api import Session
from privlab.stepper.app import StepApp
from privlab.stepper.controller import Stepper

SIZE = (200, 60)


@pytest.fixture
def stepper() -> Iterator[Stepper]:
    s = Session.bare(program("ipi"), smp=2, smp_seed=1)
    yield Stepper(s, every=2_000)
    s.close()


def status(app: StepApp) -> str:
    """The status line as the app shows it."""
    return app.stepper.status().plain


async def _test_steps_name_the_hart_and_step_back_returns(stepper: Stepper) -> None:
    app = StepApp(stepper)
    m = stepper.s.machine
    async with app.run_test(size=SIZE) as pilot:
        assert status(app).startswith("hart 0/2  M-mode")
        await pilot.press("s")                 # the first turn begins: to 30 short of its end
        await pilot.pause()
        k, end = m.turns.turn
        stepper.s.run_until_instret(m.total_instret() + end - m.harts[k].state.instret - 30)
        moments: list[tuple[int, int, int]] = []      # (all harts' instret, hart, pc)
        harts_run: list[int] = []
        for _ in range(60):
            k = m.next_hart()
            moments.append((m.total_instret(), k, m.harts[k].pc))
            await pilot.press("s")
            await pilot.pause()
            assert stepper.message == f"stepped one instruction on hart {k}"
            assert m.hart.state.hart_id == k
            assert re.match(rf"hart {k}/2 ", status(app)), status(app)
            assert f"all harts {m.total_instret():,}" in status(app)
            harts_run.append(k)
        assert set(harts_run) == {0, 1}       # the steps went past a turn switch
        for total, k, pc in reversed(moments[-5:]):
            await pilot.press("b")
            await pilot.pause()
            assert stepper.message == f"stepped back one instruction on hart {k}"
            assert m.total_instret() == total
            assert (m.hart.state.hart_id, m.hart.pc) == (k, pc)
            assert re.match(rf"hart {k}/2 ", status(app))
        # To hart 1's IPI: the trap names hart 1, in the timeline's hart column too.
        await pilot.press("t")
        await pilot.pause()
        assert stepper.message == "ran to the next trap on hart 1"
        assert stepper.s.csr("mcause").cause == "m_software"
        last = app.timeline_shown.plain.splitlines()[-1]
        assert re.search(r"\s1 .*m_software", last), last
        assert "hart" in app.timeline_shown.plain.splitlines()[0]
        await pilot.press("b")               # and back one step: before the trap entry
        await pilot.pause()
        assert len(stepper.s.events) == 0


def test_steps_name_the_hart_and_step_back_returns(stepper: Stepper) -> None:
    asyncio.run(_test_steps_name_the_hart_and_step_back_returns(stepper))


def test_the_timeline_has_a_hart_column(stepper: Stepper) -> None:
    stepper.next_trap()
    timeline, rows, current = stepper.timeline()
    assert timeline.harts == 2 and rows and rows[-1].hart == 1 and current == 0
