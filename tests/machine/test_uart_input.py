"""The UART's view of console input that has ended (harness/devices/uart.py)."""

from __future__ import annotations

import os

from harness.devices import Console, ScriptedInput, StdinInput
from harness.devices.uart import IDLE_POLL_LIMIT, Lsr, Reg, Uart


def _uart(source: ScriptedInput | StdinInput) -> tuple[Uart, list[int]]:
    calls: list[int] = []
    uart = Uart(Console(), source)
    uart.on_input_ended = lambda: calls.append(1)
    return uart, calls


def _poll(uart: Uart, times: int) -> None:
    for _ in range(times):
        assert not uart.read(Reg.LSR, 1) & Lsr.DR


def test_an_ended_script_is_reported_once_after_the_poll_limit() -> None:
    uart, calls = _uart(ScriptedInput(b"x", final=True))
    assert uart.read(Reg.LSR, 1) & Lsr.DR and uart.read(Reg.RBR_THR_DLL, 1) == ord("x")
    _poll(uart, IDLE_POLL_LIMIT - 1)
    assert calls == []
    _poll(uart, 1)
    assert calls == [1]
    _poll(uart, IDLE_POLL_LIMIT)
    assert calls == [1]


def test_output_means_the_guest_is_still_working() -> None:
    uart, calls = _uart(ScriptedInput(b"", final=True))
    for _ in range(3):
        _poll(uart, IDLE_POLL_LIMIT - 1)
        uart.write(Reg.RBR_THR_DLL, 1, ord("."))
    assert calls == [] and uart.console.text() == "..."


def test_input_that_may_still_be_fed_never_ends() -> None:
    uart, calls = _uart(ScriptedInput(b""))        # the grader's and the API's default
    _poll(uart, 2 * IDLE_POLL_LIMIT)
    assert calls == []


def test_stdin_ends_at_end_of_file() -> None:
    r, w = os.pipe()
    os.write(w, b"a")
    os.close(w)
    source = StdinInput(r)
    try:
        uart, calls = _uart(source)
        assert not source.ended() and uart.read(Reg.RBR_THR_DLL, 1) == ord("a")
        _poll(uart, IDLE_POLL_LIMIT)
        assert source.ended() and calls == [1]
    finally:
        os.close(r)
