"""The UART's registers and interrupts (harness/devices/uart.py), as QEMU 7.2's
serial.c: reset values, IIR, THRE and received-data interrupts, and its line."""

from __future__ import annotations

from privlab.devices import Console, ScriptedInput
from privlab.devices.uart import Reg, Uart

ETBEI, ERBFI = 0x02, 0x01


class Recorder:
    """A line that remembers every level it was driven to."""

    def __init__(self) -> None:
        self.levels: list[bool] = []

    def set(self, level: bool) -> None:
        self.levels.append(level)

    @property
    def high(self) -> bool:
        return bool(self.levels) and self.levels[-1]


def uart(data: bytes = b"") -> tuple[Uart, Recorder]:
    line = Recorder()
    return Uart(Console(), ScriptedInput(data), irq=line), line


def test_reset_values_are_qemus() -> None:
    u, _ = uart()
    got = {reg: u.read(reg, 1) for reg in (Reg.IER_DLM, Reg.IIR_FCR, Reg.LCR, Reg.MCR,
                                           Reg.LSR, Reg.MSR, Reg.SCR)}
    assert got == {Reg.IER_DLM: 0, Reg.IIR_FCR: 0x01, Reg.LCR: 0, Reg.MCR: 0x08,
                   Reg.LSR: 0x60, Reg.MSR: 0xB0, Reg.SCR: 0}


def test_enabling_the_fifos_sets_iir_bits_7_and_6() -> None:
    u, _ = uart()
    u.write(Reg.IIR_FCR, 1, 0x07)
    assert u.read(Reg.IIR_FCR, 1) == 0xC1
    u.write(Reg.IIR_FCR, 1, 0x00)
    assert u.read(Reg.IIR_FCR, 1) == 0x01


def test_the_divisor_latch_resets_to_12() -> None:
    u, _ = uart()
    u.write(Reg.LCR, 1, 0x80)
    assert (u.read(Reg.RBR_THR_DLL, 1), u.read(Reg.IER_DLM, 1)) == (0x0C, 0)


def test_etbei_with_thr_empty_raises_thre_at_once() -> None:
    u, line = uart()
    u.write(Reg.IER_DLM, 1, ETBEI)
    assert line.levels == [True]
    assert u.read(Reg.IIR_FCR, 1) == 0x02


def test_reading_iir_acknowledges_thre_and_lowers_the_line() -> None:
    u, line = uart()
    u.write(Reg.IER_DLM, 1, ETBEI)
    u.read(Reg.IIR_FCR, 1)
    assert not line.high
    assert u.read(Reg.IIR_FCR, 1) == 0x01


def test_a_byte_sent_makes_thre_pending_again() -> None:
    u, line = uart()
    u.write(Reg.IER_DLM, 1, ETBEI)
    u.read(Reg.IIR_FCR, 1)
    u.write(Reg.RBR_THR_DLL, 1, ord("x"))
    assert line.high and u.read(Reg.IIR_FCR, 1) == 0x02
    assert u.console.text() == "x"


def test_thre_sent_with_etbei_off_is_forgotten_when_it_is_turned_on() -> None:
    u, line = uart()
    u.write(Reg.RBR_THR_DLL, 1, ord("x"))
    assert line.levels == []                   # polled: the line is never touched
    u.write(Reg.IER_DLM, 1, ETBEI)
    assert line.high                           # re-sampled: THR is empty


def test_received_data_interrupts_while_data_is_ready() -> None:
    u, line = uart(b"ab")
    u.write(Reg.IER_DLM, 1, ERBFI)
    assert line.high and u.read(Reg.IIR_FCR, 1) == 0x04
    assert u.read(Reg.RBR_THR_DLL, 1) == ord("a")
    assert line.high
    assert u.read(Reg.RBR_THR_DLL, 1) == ord("b")
    assert not line.high and u.read(Reg.IIR_FCR, 1) == 0x01


def test_received_data_outranks_thre_and_iir_does_not_acknowledge_it() -> None:
    u, line = uart(b"z")
    u.write(Reg.IER_DLM, 1, ERBFI | ETBEI)
    assert u.read(Reg.IIR_FCR, 1) == 0x04
    assert u.read(Reg.IIR_FCR, 1) == 0x04      # THRE still pending behind it
    u.read(Reg.RBR_THR_DLL, 1)
    assert line.high and u.read(Reg.IIR_FCR, 1) == 0x02
    assert not line.high


def test_ier_keeps_its_low_four_bits() -> None:
    u, _ = uart()
    u.write(Reg.IER_DLM, 1, 0xF0)
    assert u.read(Reg.IER_DLM, 1) == 0


def test_turning_ier_off_lowers_the_line() -> None:
    u, line = uart()
    u.write(Reg.IER_DLM, 1, ETBEI)
    u.write(Reg.IER_DLM, 1, 0)
    assert line.levels == [True, False]


def test_looking_for_input_reports_the_line_only_when_a_byte_waits() -> None:
    """The run loop looks for input at each run's start and, for a terminal or a pipe,
    every INPUT_POLL_INSNS instructions. A THR-empty interrupt the guest never
    acknowledges (xv6 reads no IIR) stays as QEMU leaves it: its line is not driven
    again, so the PLIC does not take it again. A byte that waits is reported."""
    source = ScriptedInput()
    line = Recorder()
    u = Uart(Console(), source, irq=line)
    u.write(Reg.IER_DLM, 1, ETBEI | ERBFI)
    u.write(Reg.RBR_THR_DLL, 1, ord("x"))
    reported = len(line.levels)
    assert line.high
    for _ in range(3):
        u.look_for_input()
    assert len(line.levels) == reported          # nothing arrived: no report
    source.feed(b"k")
    u.look_for_input()
    assert len(line.levels) == reported + 1 and line.high
    assert u.read(Reg.IIR_FCR, 1) == 0x04           # received data before THR empty



def test_a_guest_waiting_for_the_receive_interrupt_is_not_stopped_by_looks() -> None:
    """A guest that sleeps until the receive interrupt (xv6) polls nothing once its
    input has ended, and the run loop's looks do not stand in for its polls: nothing
    tells that wait from a long silent computation (xv6's usertests on three harts),
    and QEMU runs on too. A guest that polls is still told (IDLE_POLL_LIMIT polls)."""
    from privlab.devices.uart import IDLE_POLL_LIMIT

    ended: list[int] = []
    u = Uart(Console(), ScriptedInput(b"", final=True), irq=Recorder())
    u.on_input_ended = lambda: ended.append(1)
    u.write(Reg.IER_DLM, 1, ERBFI)
    for _ in range(10 * IDLE_POLL_LIMIT):
        u.look_for_input()
    assert ended == []
    for _ in range(IDLE_POLL_LIMIT):
        u.read(Reg.LSR, 1)
    assert ended == [1]
