"""`privlab step` as it looks, at a fixed terminal size: the start, and the moment
after the step into hello's write ecall, compared with golden SVGs.

Each screen is rendered headless by Textual itself (`App.run_test` at SIZE, then
`App.export_screenshot`, the SVG a user's "save screenshot" writes) and compared with
tests/step/snapshots/NAME.svg, byte for byte. The SVG depends only on what the screen
shows (rich derives its element ids from the content), and the run is deterministic,
so the same screen gives the same file. After an intended change (a kernel change
moves addresses and counts, a new pane...), regenerate and review the pictures:

    PRIVLAB_REGEN_SNAPSHOTS=1 pytest tests/step/test_step_snapshots.py

A mismatch names the first differing line of the screen's text and writes the new SVG
beside the test's temporary files, to open in a browser.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import re
from html import unescape
from pathlib import Path

import pytest
from gdb.helpers import ECALL, find_insn

from privlab.api import Session
from privlab.build.images import Images
from privlab.stepper.app import Pane, StepApp
from privlab.stepper.controller import Stepper

SIZE = (180, 56)
SNAPSHOTS = Path(__file__).parent / "snapshots"
REGEN = os.environ.get("PRIVLAB_REGEN_SNAPSHOTS", "") not in ("", "0")
_TEXT = re.compile(r"<text [^>]*>([^<]*)</text>")


SETTLE = 50    # at most this many refresh cycles for the panes to fill and stay put


def screenshot(app: StepApp, keys: tuple[str, ...] = (),
               size: tuple[int, int] = SIZE) -> str:
    """The app's screen as an SVG, after pressing `keys`, once it has settled: the
    panes drawn (the app fills them after its first refresh) and two screenshots in a
    row alike. Waiting counts refresh cycles, not seconds."""
    async def go() -> str:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            if keys:
                await pilot.press(*keys)
            shot = ""
            for _ in range(SETTLE):
                await pilot.pause()
                await pilot.wait_for_scheduled_animations()
                if not app.query_one("#code", Pane).text.plain:   # not drawn yet
                    continue
                now = app.export_screenshot()
                if now == shot:
                    return shot
                shot = now
            raise AssertionError(f"the screen did not settle in {SETTLE} refreshes")
    return asyncio.run(go())


def screen_text(svg: str) -> list[str]:
    """The characters of an SVG screenshot, one string per text run: enough to say
    where two screens differ."""
    return [unescape(t).replace("\xa0", " ") for t in _TEXT.findall(svg)]


def mismatch(svg: str, name: str, out: Path, regen: bool = REGEN) -> str | None:
    """None if `svg` is the golden NAME.svg; else what differs (the new SVG is left in
    `out`). With `regen` (PRIVLAB_REGEN_SNAPSHOTS set), the golden is rewritten instead."""
    golden = SNAPSHOTS / f"{name}.svg"
    if regen:
        SNAPSHOTS.mkdir(exist_ok=True)
        golden.write_text(svg)
        return None
    if not golden.is_file():
        return f"no golden {golden}: regenerate with PRIVLAB_REGEN_SNAPSHOTS=1"
    want = golden.read_text()
    if svg == want:
        return None
    new = out / f"{name}.svg"
    new.write_text(svg)
    diff = list(difflib.unified_diff(screen_text(want), screen_text(svg), "golden", "now",
                                     n=0, lineterm=""))
    shown = "\n".join(diff[2:12]) if diff else "(same text, different styles)"
    return f"{name}: the screen differs from {golden.name} (now: {new})\n{shown}"


def app_at_the_ecall(images: Images, step: bool) -> StepApp:
    s = Session.boot("hello", images=images)
    st = Stepper(s, every=100_000)
    st.continue_to(f"{find_insn(images.users['hello'], 'write', ECALL):#x}")
    if step:
        st.step()
    return StepApp(st)


def the_start(images: Images) -> StepApp:
    return StepApp(Stepper(Session.boot("hello", images=images), every=100_000))


def test_the_start(images: Images, tmp_path: Path) -> None:
    problem = mismatch(screenshot(the_start(images)), "the_start", tmp_path)
    assert problem is None, problem


def test_after_stepping_into_the_ecall(images: Images, tmp_path: Path) -> None:
    svg = screenshot(app_at_the_ecall(images, step=True))
    problem = mismatch(svg, "after_stepping_into_the_ecall", tmp_path)
    assert problem is None, problem


def app_after_y_b_back_trap(images: Images) -> StepApp:
    """y, b, B (the moves the keys make), without the time the backward move took
    (the status line's "(27 ms)", which a screenshot must not depend on)."""
    st = Stepper(Session.boot("hello", images=images), every=100_000)
    st.next_syscall()
    st.back_step()
    st.back_trap()
    st.seconds = None
    return StepApp(st)


@pytest.mark.parametrize("size", [(120, 40), (160, 50)])
def test_after_y_b_back_trap_at_student_sizes(images: Images, tmp_path: Path,
                                              size: tuple[int, int]) -> None:
    """The layouts at 120x40 (the timeline across the top) and 160x50 (in the left
    column): every register and the S trap CSRs on screen."""
    name = f"after_y_b_back_trap_{size[0]}x{size[1]}"
    problem = mismatch(screenshot(app_after_y_b_back_trap(images), size=size), name, tmp_path)
    assert problem is None, problem


def test_the_same_screen_gives_the_same_svg(images: Images) -> None:
    first, second = (screenshot(app_at_the_ecall(images, step=False)) for _ in range(2))
    assert first == second
    assert any("write" in t for t in screen_text(first))


def test_a_changed_screen_fails_the_comparison(images: Images, tmp_path: Path) -> None:
    """One step (key s) from the start: the pc, the registers and the CSR marks move,
    and the comparison with the start's golden says so, naming the text."""
    svg = screenshot(the_start(images), ("s",))
    problem = mismatch(svg, "the_start", tmp_path, regen=False)
    assert problem is not None and problem.startswith(
        "the_start: the screen differs from the_start.svg")
    assert "\n-" in problem and "\n+" in problem
    assert (tmp_path / "the_start.svg").read_text() == svg
