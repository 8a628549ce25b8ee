"""`privlab step` driven by Textual's pilot: each key path, with what the panes show
(the CSR panel's S and M sides, the registers, the timeline) after moves forward and
back."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest
from gdb.helpers import ECALL, find_insn

from privlab.api import Session
from privlab.build.images import Images
from privlab.stepper.app import Pane, StepApp
from privlab.stepper.controller import Stepper

SIZE = (200, 60)


@pytest.fixture
def stepper(images: Images) -> Iterator[Stepper]:
    s = Session.boot("hello", images=images)
    yield Stepper(s, every=100_000)
    s.close()


def pane(app: StepApp, name: str) -> str:
    return app.query_one(f"#{name}", Pane).text.plain


def csr_line(text: str, name: str) -> str:
    m = re.search(rf"^ *{name}\*? .*$", text, re.M)
    assert m, (name, text)
    return m.group(0)


async def _test_step_into_the_ecall_and_back_out(stepper: Stepper, images: Images) -> None:
    ecall = find_insn(images.users["hello"], "write", ECALL)
    app = StepApp(stepper)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        await pilot.press(*f"{ecall:#x}", "enter")
        await pilot.pause()
        assert stepper.s.pc == ecall and stepper.s.priv.letter == "U"
        before = {n: csr_line(pane(app, "csrs"), n) for n in ("scause", "sepc", "sstatus")}
        await pilot.press("s")
        await pilot.pause()
        csrs = pane(app, "csrs")
        assert "scause*" in csrs and "user_ecall" in csr_line(csrs, "scause")
        assert "sepc*" in csrs and f"{ecall:#x}"[2:] in csr_line(csrs, "sepc")
        assert "SPP=U" in csr_line(csrs, "sstatus")
        assert "S-mode (was U-mode)" in csrs
        assert stepper.s.priv.letter == "S"
        assert "user_ecall" in app.timeline_shown.plain.splitlines()[-1]   # current row
        await pilot.press("b")
        await pilot.pause()
        assert stepper.s.pc == ecall and stepper.s.priv.letter == "U"
        after = {n: csr_line(pane(app, "csrs"), n) for n in before}
        strip = lambda t: t.replace("*", " ")   # noqa: E731 - what changed is marked
        for n in before:
            assert strip(after[n]).split()[:2] == strip(before[n]).split()[:2], n
        assert "stepped back one instruction" in stepper.message


async def _test_the_sbi_call_shows_the_m_side(stepper: Stepper) -> None:
    app = StepApp(stepper)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        await pilot.press(*"trap:supervisor_ecall", "enter")
        await pilot.pause()
        csrs = pane(app, "csrs")
        assert stepper.s.priv.letter == "M"
        assert "supervisor_ecall" in csr_line(csrs, "mcause")
        assert re.search(r"MPP=(\w→)?S\b", csr_line(csrs, "mstatus"))
        assert "sbi" in csr_line(csrs, "mepc"), csr_line(csrs, "mepc")   # the kernel's ecall


async def _test_next_trap_xret_syscall_and_back_to_event(stepper: Stepper) -> None:
    app = StepApp(stepper)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.pause()
        assert stepper.message == "ran to the next trap" and len(stepper.s.events) >= 1
        await pilot.press("x")
        await pilot.pause()
        n = len(stepper.s.events)
        assert stepper.message == "ran to the next xRET"
        await pilot.press("y")
        await pilot.pause()
        assert stepper.s.csr("scause").cause == "user_ecall" and len(stepper.s.events) > n
        await pilot.press("B")
        await pilot.pause()
        assert stepper.message.startswith("back to the previous trap")
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("0", "enter")
        await pilot.pause()
        assert len(stepper.s.events) == 1 and "#0" in stepper.message
        assert app.timeline_shown.plain.splitlines()[-1].startswith("▶")


async def _test_bad_input_in_a_prompt_is_one_line_in_the_status(stepper: Stepper) -> None:
    app = StepApp(stepper)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        await pilot.press(*"nosuchsymbol", "enter")
        await pilot.pause()
        assert stepper.message == "no symbol 'nosuchsymbol' in the loaded images"
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*"zz", "enter")
        await pilot.pause()
        assert stepper.message == "not an event number: 'zz'"
        await pilot.press("c")
        await pilot.pause()
        await pilot.press(*"trap:nonsense", "enter")
        await pilot.pause()
        assert stepper.message.startswith("unknown trap cause 'nonsense'")
        assert stepper.s.instret == 0


async def _test_help_lists_every_key(stepper: Stepper) -> None:
    app = StepApp(stepper)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        text = str(app.screen.query_one("#help").render())
        for word in ("step one instruction", "step back one instruction",
                     "back to the previous trap", "continue to a breakpoint"):
            assert word in text
        await pilot.press("escape")
        await pilot.pause()
        assert not app.screen.query("#help")


def test_step_into_the_ecall_and_back_out(stepper: Stepper, images: Images) -> None:
    asyncio.run(_test_step_into_the_ecall_and_back_out(stepper, images))


def test_the_sbi_call_shows_the_m_side(stepper: Stepper) -> None:
    asyncio.run(_test_the_sbi_call_shows_the_m_side(stepper))


def test_next_trap_xret_syscall_and_back_to_event(stepper: Stepper) -> None:
    asyncio.run(_test_next_trap_xret_syscall_and_back_to_event(stepper))


def test_bad_input_in_a_prompt_is_one_line_in_the_status(stepper: Stepper) -> None:
    asyncio.run(_test_bad_input_in_a_prompt_is_one_line_in_the_status(stepper))


def test_help_lists_every_key(stepper: Stepper) -> None:
    asyncio.run(_test_help_lists_every_key(stepper))
