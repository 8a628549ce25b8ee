"""NS16550A UART: the console, with QEMU 7.2's registers and interrupts.

Transmit goes to the console sink at once; receive comes from a scripted byte string
(deterministic: tests, graders) or from the host's stdin. LSR reports data-ready and an
always-empty transmitter, as QEMU's does when the host keeps up, so polled operation
needs nothing else.

Interrupts follow QEMU's serial.c: IER enables received-data-available (RDI) and
transmitter-holding-register-empty (THRI); IIR names the highest-priority one pending
(RDI, then THRI) with bits 7:6 set while the FIFOs are enabled; the UART's line, into
PLIC source PLATFORM_UART0_IRQ, is high while IIR names one. THRI becomes pending when
a written byte has been sent (at once), when IER.ETBEI is turned on (THR is always
empty) and when the transmit FIFO is reset; reading IIR while it names THRI clears it.
RDI is pending while data is ready. Not modelled: receiver line status and modem
status interrupts (no errors, no modem lines change), the character timeout and
trigger levels above one byte, loopback, and the divisor's effect (there is no baud
rate). Input that arrives from stdin while the guest runs raises RDI at the next UART
access or the next run.

A UART has no end of file: a guest reading a console whose input has ended (a pipe
or file at its end, `--input` used up) polls forever, or sleeps forever waiting for the
receive interrupt. When the source says it has ended and the guest has polled
IDLE_POLL_LIMIT times since it last printed, the UART calls `on_input_ended`, so
`privlab run < script` stops like `sh < script` does. A guest that sleeps until the
interrupt (xv6) runs on, as on QEMU: nothing tells its wait for input from a long
silent computation (xv6's usertests on three harts run billions of instructions
without printing), and stopping it in one would cut a run short.
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Callable
from enum import IntEnum, IntFlag

from ..abi.platform import PLATFORM
from ..protocol import Protocol
from .base import AccessRule

__all__ = ["IDLE_POLL_LIMIT", "Console", "ScriptedInput", "StdinInput", "Uart"]


class Reg(IntEnum):
    RBR_THR_DLL = 0  # receive / transmit holding; divisor low when LCR.DLAB
    IER_DLM = 1      # interrupt enable; divisor high when LCR.DLAB
    IIR_FCR = 2      # interrupt identification (read) / FIFO control (write)
    LCR = 3
    MCR = 4
    LSR = 5
    MSR = 6
    SCR = 7


class Lsr(IntFlag):
    DR = 0x01    # data ready
    THRE = 0x20  # transmit holding register empty
    TEMT = 0x40  # transmitter empty


class Ier(IntFlag):
    RDI = 0x01   # received data available
    THRI = 0x02  # transmitter holding register empty (ETBEI)
    RLSI = 0x04  # receiver line status
    MSI = 0x08   # modem status


class Iir(IntEnum):
    """Interrupt identification (bits 3:0), highest priority first after RLS."""

    NO_INT = 0x01
    RLSI = 0x06
    CTI = 0x0C
    RDI = 0x04
    THRI = 0x02
    MSI = 0x00


class Fcr(IntFlag):
    FE = 0x01    # FIFOs enabled
    RFR = 0x02   # reset the receive FIFO
    XFR = 0x04   # reset the transmit FIFO


REGISTERS = len(Reg)
LSR_IDLE = int(Lsr.THRE | Lsr.TEMT)          # nothing received, transmitter empty
LSR_DATA_READY = LSR_IDLE | int(Lsr.DR)
IER_RDI, IER_THRI, FCR_FE = int(Ier.RDI), int(Ier.THRI), int(Fcr.FE)
LCR_DLAB = 0x80
IER_MASK = 0x0F
IIR_ID_MASK = 0x0F
IIR_FIFO_ENABLED = 0xC0     # IIR bits 7:6 while FCR.FE
FCR_KEPT = 0xC9             # FCR bits QEMU keeps: FE, DMA mode, trigger level

# QEMU 7.2's serial_reset.
RESET_DIVISOR = 0x0C
RESET_MCR = 0x08            # OUT2
RESET_MSR = 0xB0            # DCD, DSR, CTS


class Line(Protocol):
    """An interrupt line (privlab.devices.plic.IrqLine)."""

    def set(self, level: bool) -> None: ...


IDLE_POLL_LIMIT = 2_000     # polls of an ended input with no output between: waiting
# Live input (a terminal, a pipe) is looked for this often while the guest runs: about
# every 1-10 ms of host time, and never within a block.
INPUT_POLL_INSNS = 1 << 20


class InputSource(Protocol):
    live: bool   # input may arrive while the guest runs (StdinInput), not only between

    def peek(self) -> bool: ...

    def take(self) -> int: ...

    def ended(self) -> bool:
        """Nothing will ever arrive again."""
        ...


class ScriptedInput:
    """Bytes the guest will read, in order; then nothing. With `final`, the input
    has ended once they are read; otherwise more may be fed later (between runs)."""

    live = False

    def __init__(self, data: bytes = b"", final: bool = False) -> None:
        self._data = bytearray(data)
        self.final = final

    def peek(self) -> bool:
        return bool(self._data)

    def take(self) -> int:
        return self._data.pop(0) if self._data else 0

    def ended(self) -> bool:
        return self.final and not self._data

    def feed(self, data: bytes) -> None:
        self._data += data


class StdinInput:
    """The host's stdin, read without blocking the guest. Input can arrive while the
    guest runs (`live`): the run loop looks for it every INPUT_POLL_INSNS instructions,
    so a guest that waits for a receive interrupt without touching the UART sees it."""

    live = True

    def __init__(self, fd: int | None = None) -> None:
        self._fd = sys.stdin.fileno() if fd is None else fd
        self._buf = bytearray()
        self._eof = False

    def peek(self) -> bool:
        if not self._buf and not self._eof:
            ready, _, _ = select.select([self._fd], [], [], 0)
            if ready:
                chunk = os.read(self._fd, 4096)
                self._eof = not chunk
                self._buf += chunk
        return bool(self._buf)

    def take(self) -> int:
        return self._buf.pop(0) if self.peek() else 0

    def ended(self) -> bool:
        return self._eof and not self._buf


class Console:
    """Everything the guest printed, optionally echoed to a host stream as it comes.

    Going back in time (a debugger's reverse step, `privlab step`'s `b`) rewinds what
    the guest has printed and replays from a snapshot: the replay prints the same bytes
    again, which the person already saw. `written` counts the bytes of this timeline and
    `shown` the most ever echoed, so a replay echoes only past what was shown."""

    def __init__(self, echo: bool = False, limit: int = 64 << 20) -> None:
        self.data = bytearray()
        self.echo = echo
        self.limit = limit
        self.truncated = False
        self.written = 0
        self.shown = 0

    def put(self, byte: int) -> None:
        if len(self.data) < self.limit:
            self.data.append(byte)
        else:
            self.truncated = True
        self.written += 1
        if self.echo and self.written > self.shown:
            self.shown = self.written
            out = sys.stdout.buffer
            out.write(bytes((byte,)))
            if byte == 0x0A:
                out.flush()

    def rewind(self, data: bytes, truncated: bool) -> None:
        """Back to what the guest had printed at a snapshot (what was echoed stays
        shown: its replay is not echoed again)."""
        self.data[:] = data
        self.truncated = truncated
        self.written = len(data)

    def flush(self) -> None:
        if self.echo:
            sys.stdout.buffer.flush()

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


class Uart:
    """The NS16550A at PLATFORM_UART0_BASE; `irq` is its line into the PLIC."""

    name = "uart0"
    # QEMU 7.2's serial_mm on virt: 1 to 8 bytes over its eight registers, nothing
    # mapped past them. An access of any size is one register's: a read returns it
    # zero-extended, a write takes the low byte (`one_register_per_access`: the
    # machine drops the upper half of an access Unicorn splits in two).
    access_rules = (AccessRule(0, len(Reg), 1, 8),)
    one_register_per_access = True

    def __init__(self, console: Console, source: InputSource, irq: Line | None = None) -> None:
        self.base = PLATFORM.uart0_base
        self.size = PLATFORM.uart0_size
        self.console = console
        self.source = source
        self.irq = irq
        self.ier = 0
        self.lcr = 0
        self.mcr = RESET_MCR
        self.scr = 0
        self.fcr = 0
        self._divisor = RESET_DIVISOR
        self.thr_ipending = False     # THR-empty interrupt pending (QEMU's thr_ipending)
        self.iir_id: int = Iir.NO_INT
        self._level = False
        self.on_input_ended: Callable[[], None] | None = None
        self._idle_polls = 0          # polls of an ended input since the last output

    def _dlab(self) -> bool:
        return bool(self.lcr & LCR_DLAB)

    # -- interrupts ------------------------------------------------------------------
    def _data_ready(self) -> bool:
        return self.source.peek()

    def update_irq(self) -> None:
        """Recompute IIR and drive the line (QEMU's serial_update_irq). Receive trigger
        levels above one byte and the character timeout are not modelled: with RDI
        enabled, any received byte interrupts."""
        ident: int = Iir.NO_INT
        if self.ier & IER_RDI and self._data_ready():
            ident = Iir.RDI
        elif self.ier & IER_THRI and self.thr_ipending:
            ident = Iir.THRI
        self.iir_id = ident
        level = ident != Iir.NO_INT
        if self.irq is not None and (level or self._level):
            self.irq.set(level)
        self._level = level

    def iir(self) -> int:
        return (IIR_FIFO_ENABLED if self.fcr & FCR_FE else 0) | self.iir_id

    def look_for_input(self) -> None:
        """The run loop looked for input fed or typed since the last look (at a run's
        start, and while it runs for a live source): report the line if input is
        waiting, as QEMU's serial does when a byte arrives, and not otherwise. Nothing
        else changes between two guest accesses, and a report re-raises a line that is
        high: a THR-empty interrupt the guest never acknowledges (xv6 never reads IIR)
        would be taken again at every look, which QEMU never does. Only a guest that
        waits for the receive interrupt has the source looked at (the first look is
        the guest's to make: harness/qemucmd/keyboard.py)."""
        if self.ier & IER_RDI and self._data_ready():
            self.update_irq()

    # -- MMIO ------------------------------------------------------------------------
    # The registers are compared as the plain numbers they are (IntEnum members equal
    # them): making a Reg of each offset, and an Lsr of each answer, was a tenth of what
    # a polled console costs per character.
    def read(self, offset: int, size: int) -> int:
        reg = offset
        if reg >= REGISTERS:
            return 0    # a page-table walk's read (a load there is an access fault)
        if reg == Reg.RBR_THR_DLL:
            if self._dlab():
                return self._divisor & 0xFF
            byte = self.source.take()
            if self.ier:
                self.update_irq()
            return byte
        if reg == Reg.IER_DLM:
            return (self._divisor >> 8) if self._dlab() else self.ier
        if reg == Reg.IIR_FCR:
            if self.ier:
                self.update_irq()          # input may have arrived since the last look
            value = self.iir()
            if self.iir_id == Iir.THRI:    # reading IIR acknowledges THRE
                self.thr_ipending = False
                self.update_irq()
            return value
        if reg == Reg.LSR:
            if self.source.peek():
                return LSR_DATA_READY
            if self.on_input_ended is not None and self.source.ended():
                self._idle_polls += 1
                if self._idle_polls == IDLE_POLL_LIMIT:
                    self.on_input_ended()
            return LSR_IDLE
        if reg == Reg.LCR:
            return self.lcr
        if reg == Reg.MCR:
            return self.mcr
        if reg == Reg.MSR:
            return RESET_MSR
        return self.scr

    def write(self, offset: int, size: int, value: int) -> None:
        reg, value = offset, value & 0xFF
        if reg >= REGISTERS:
            return      # not reached: a store there is an access fault
        if reg == Reg.RBR_THR_DLL:
            if self._dlab():
                self._divisor = (self._divisor & 0xFF00) | value
            else:
                self._transmit(value)
        elif reg == Reg.IER_DLM:
            if self._dlab():
                self._divisor = (self._divisor & 0xFF) | (value << 8)
            else:
                self._write_ier(value & IER_MASK)
        elif reg == Reg.IIR_FCR:
            self._write_fcr(value)
        elif reg == Reg.LCR:
            self.lcr = value
        elif reg == Reg.MCR:
            self.mcr = value & 0x1F
        elif reg == Reg.SCR:
            self.scr = value
        # LSR and MSR writes have no effect, as in QEMU.

    def _transmit(self, byte: int) -> None:
        self.console.put(byte)
        self._idle_polls = 0
        # Sent at once: THR empties again and THRE becomes pending (QEMU clears
        # thr_ipending on the write and sets it when serial_xmit has sent the byte).
        self.thr_ipending = True
        if self.ier:
            self.update_irq()

    def _write_ier(self, value: int) -> None:
        changed = self.ier ^ value
        self.ier = value
        if changed & Ier.THRI:
            # Enabling ETBEI with THR empty (always, here) makes THRE pending, even if
            # an IIR read had acknowledged it (QEMU, after Bochs and Windows).
            self.thr_ipending = bool(value & Ier.THRI)
        if changed:
            self.update_irq()

    def _write_fcr(self, value: int) -> None:
        if (value ^ self.fcr) & Fcr.FE:
            value |= Fcr.RFR | Fcr.XFR       # toggling FE flushes both FIFOs
        if value & Fcr.XFR:
            self.thr_ipending = True
        # Fcr.RFR drops nothing: received bytes stay in the input source until read.
        self.fcr = value & FCR_KEPT
        self.update_irq()
