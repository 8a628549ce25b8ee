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
