"""`privlab step` at the terminal sizes students have (120x40, 160x50): every register
name and full value and the trap CSRs of the level that took the last trap are on the
screen without scrolling, the layout follows a resize at once, and stepping back shows
the trap timeline as it was at that moment."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest

from privlab.abi.registers import ABI_NAMES
from privlab.api import Session
from privlab.build.images import Images
from privlab.stepper.app import Pane, StepApp
from privlab.stepper.controller import Stepper


@pytest.fixture
def stepper(images: Images) -> Iterator[Stepper]:
    s = Session.boot("hello", images=images)
    yield Stepper(s, every=100_000)
    s.close()


def fully_shown(app: StepApp, name: str) -> str:
    """The text of pane `name`, after checking the pane lies inside the screen and
    each of its lines fits in it (nothing cut, nothing to scroll to)."""
    pane = app.query_one(f"#{name}", Pane)
    screen = app.screen.region
    region = pane.region
    assert region.width > 0 and region.height > 0, f"{name} is not shown"
    assert screen.contains_region(region), (name, region, screen)
    lines = pane.text.plain.split("\n")
    inner = pane.content_region
    assert len(lines) <= inner.height, f"{name}: {len(lines)} lines in {inner.height} rows"
    widest = max(pane.text.split("\n"), key=lambda t: t.cell_len).cell_len
    assert widest <= inner.width, f"{name}: a line of {widest} cells in {inner.width}"
    return pane.text.plain


def registers_all_there(app: StepApp, stepper: Stepper) -> None:
    text = fully_shown(app, "regs")
    regs = stepper.s.regs()
    for n, name in enumerate(ABI_NAMES):
        value = f"{regs.x[n]:016x}"
        assert re.search(rf"\b{name}\*? +{value}\b", text), (name, value, text)


def trap_csrs_there(app: StepApp, names: tuple[str, ...]) -> str:
    text = fully_shown(app, "trap")
    for name in names:
        assert re.search(rf"^ *{name}\*? +0x[0-9a-f]{{16}}\b", text, re.M), (name, text)
    return text


S_TRAP = ("sstatus", "scause", "sepc", "stval", "satp")
M_TRAP = ("mstatus", "mcause", "mepc", "mtval")


@pytest.mark.parametrize("size", [(120, 40), (160, 50)])
def test_after_y_b_B_every_register_and_the_s_trap_csrs_show_without_scrolling(
        stepper: Stepper, size: tuple[int, int]) -> None:
    async def go() -> None:
        app = StepApp(stepper)
        async with app.run_test(size=size) as pilot:
            for key, level in (("y", "user_ecall"), ("b", "s_external"), ("B", "s_external")):
                await pilot.press(key)
                await pilot.pause()
                await pilot.pause()
                registers_all_there(app, stepper)
                trap = trap_csrs_there(app, S_TRAP)
                title = str(app.query_one("#trap", Pane).border_title)
                assert title.startswith("trap CSRs: S took the last trap"), title
                assert level in title, (key, title)
                if key == "y":
                    assert "user_ecall" in trap and "scause*" in trap
    asyncio.run(go())


def test_at_an_sbi_call_the_trap_pane_shows_the_m_csrs_at_120x40(stepper: Stepper) -> None:
    async def go() -> None:
        app = StepApp(stepper)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("c")
            await pilot.pause()
            await pilot.press(*"trap:supervisor_ecall", "enter")
            await pilot.pause()
            await pilot.pause()
            registers_all_there(app, stepper)
            trap = trap_csrs_there(app, M_TRAP)
            assert "supervisor_ecall" in trap and "scause" not in trap
            assert "M took the last trap" in str(app.query_one("#trap", Pane).border_title)
    asyncio.run(go())


def test_a_resize_reflows_at_once(stepper: Stepper) -> None:
    async def go() -> None:
        app = StepApp(stepper)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("y")
            await pilot.pause()
            assert app.screen.has_class("wide")      # the timeline heads the left column
            await pilot.resize_terminal(120, 40)
            await pilot.pause()
            await pilot.pause()
            assert app.screen.has_class("narrow")    # the timeline across the top
            assert app.query_one("#timeline-top-scroll").region.width == 120
            registers_all_there(app, stepper)
            trap_csrs_there(app, S_TRAP)
            await pilot.resize_terminal(200, 60)
            await pilot.pause()
            await pilot.pause()
            assert app.reg_columns == 4 and app.screen.has_class("wide")
            registers_all_there(app, stepper)
    asyncio.run(go())


def timeline_rows(app: StepApp) -> list[str]:
    """The timeline's event rows as shown (the header line left out)."""
    return [line for line in app.timeline_shown.plain.split("\n")
            if re.match(r"^[▶ ] +\d+ ", line)]


@pytest.mark.parametrize("size", [(120, 40), (160, 50)])
def test_stepping_back_shows_the_timeline_as_it_was_then(
        stepper: Stepper, size: tuple[int, int]) -> None:
    async def go() -> None:
        app = StepApp(stepper)
        async with app.run_test(size=size) as pilot:
            await pilot.press("y")
            await pilot.pause()
            at_call = timeline_rows(app)
            n = len(stepper.s.events)
            assert len(at_call) == n and at_call[-1].startswith("▶")
            await pilot.press("b")                 # before the ecall: one event fewer
            await pilot.pause()
            back = timeline_rows(app)
            assert "(no events yet)" not in app.timeline_shown.plain
            assert len(back) == n - 1 == len(stepper.s.events)
            assert [r[2:] for r in back[:-1]] == [r[2:] for r in at_call[:-2]]
            assert back[-1].startswith("▶") and back[-1].split()[1] == str(n - 2)
            await pilot.press("s")                 # and forward again: the same rows
            await pilot.pause()
            assert timeline_rows(app) == at_call
            await pilot.press("B")                 # back to just after the previous trap
            await pilot.pause()
            seq = len(stepper.s.events) - 1
            rows = timeline_rows(app)
            assert len(rows) == seq + 1 and rows[-1].split()[1] == str(seq)
    asyncio.run(go())
