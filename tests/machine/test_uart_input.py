"""The UART's view of console input: input that has ended (harness/devices/uart.py),
and live input that arrives while the guest runs (harness/machine/machine.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from machine.asm import build_asm
from privlab.devices import Console, ScriptedInput, StdinInput
from privlab.devices.uart import IDLE_POLL_LIMIT, Lsr, Reg, Uart


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


# Waits for the receive interrupt in a loop that never touches the UART (as xv6's idle
# scheduler does), then powers off with the byte's value - 'a' as the status.
IDLE_UNTIL_RECEIVED = """
    UART_RX_INTERRUPTS_TO_M
1:  addi a0, a0, 1
    j 1b
    .align 2
trap:
    li t0, PLATFORM_UART0_BASE
    lbu t1, 0(t0)                   // RBR
    addi t1, t1, -'a'
    slli t1, t1, 16
    li t6, PLATFORM_FINISHER_BASE
    li t5, FINISHER_FAIL
    or t5, t5, t1
    beqz t1, 2f
    sw t5, 0(t6)
2:  PASS
"""


def test_stdin_that_arrives_while_the_guest_idles_raises_the_receive_interrupt() -> None:
    elf = build_asm(IDLE_UNTIL_RECEIVED)
    proc = subprocess.Popen([sys.executable, "-m", "privlab", "run", "--bios", "none",
                             "--kernel", str(elf)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    try:
        time.sleep(1.0)                      # the guest is spinning by now
        assert proc.poll() is None
        proc.stdin.write(b"f")
        proc.stdin.flush()
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 5, err.decode()   # "f" - "a": the byte reached the guest
