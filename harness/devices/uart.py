"""NS16550A UART: the console.

Transmit goes to the console sink at once; receive comes from a scripted byte string
(deterministic: tests, graders) or from the host's stdin. Only polled operation is
modelled (interrupts need the PLIC): LSR reports data-ready and an always-empty
transmitter, as QEMU's does when the host keeps up.

A UART has no end of file: a guest reading a console whose input has ended (a pipe
or file at its end, `--input` used up) polls forever. When the source says it has
ended and the guest has polled IDLE_POLL_LIMIT times since it last printed, the UART
calls `on_input_ended`, so `privlab run < script` stops like `sh < script` does.
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Callable
from enum import IntEnum, IntFlag
from typing import Protocol

from harness.abi.platform import PLATFORM
from harness.devices.base import unknown_register

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


LCR_DLAB = 0x80
IIR_NO_INTERRUPT = 0x01
IIR_FIFO_ENABLED = 0xC0


IDLE_POLL_LIMIT = 2_000     # polls of an ended input with no output between: waiting


class InputSource(Protocol):
    def peek(self) -> bool: ...

    def take(self) -> int: ...

    def ended(self) -> bool:
        """Nothing will ever arrive again."""
        ...


class ScriptedInput:
    """Bytes the guest will read, in order; then nothing. With `final`, the input
    has ended once they are read; otherwise more may be fed later."""

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
    """The host's stdin, read without blocking the guest."""

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
    """Everything the guest printed, optionally echoed to a host stream as it comes."""

    def __init__(self, echo: bool = False, limit: int = 64 << 20) -> None:
        self.data = bytearray()
        self.echo = echo
        self.limit = limit
        self.truncated = False

    def put(self, byte: int) -> None:
        if len(self.data) < self.limit:
            self.data.append(byte)
        else:
            self.truncated = True
        if self.echo:
            out = sys.stdout.buffer
            out.write(bytes((byte,)))
            if byte == 0x0A:
                out.flush()

    def flush(self) -> None:
        if self.echo:
            sys.stdout.buffer.flush()

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


class Uart:
    name = "uart0"

    def __init__(self, console: Console, source: InputSource) -> None:
        self.base = PLATFORM.uart0_base
        self.size = PLATFORM.uart0_size
        self.console = console
        self.source = source
        self._regs = {Reg.IER_DLM: 0, Reg.LCR: 0, Reg.MCR: 0, Reg.SCR: 0}
        self._divisor = 0
        self.on_input_ended: Callable[[], None] | None = None
        self._idle_polls = 0          # polls of an ended input since the last output

    def _dlab(self) -> bool:
        return bool(self._regs[Reg.LCR] & LCR_DLAB)

    def read(self, offset: int, size: int) -> int:
        if offset >= len(Reg):
            raise unknown_register(self, offset, "read")
        reg = Reg(offset)
        if reg == Reg.RBR_THR_DLL:
            return self._divisor & 0xFF if self._dlab() else self.source.take()
        if reg == Reg.IER_DLM:
            return (self._divisor >> 8) if self._dlab() else self._regs[reg]
        if reg == Reg.IIR_FCR:
            return IIR_FIFO_ENABLED | IIR_NO_INTERRUPT
        if reg == Reg.LSR:
            if self.source.peek():
                return Lsr.THRE | Lsr.TEMT | Lsr.DR
            if self.on_input_ended is not None and self.source.ended():
                self._idle_polls += 1
                if self._idle_polls == IDLE_POLL_LIMIT:
                    self.on_input_ended()
            return Lsr.THRE | Lsr.TEMT
        if reg == Reg.MSR:
            return 0
        return self._regs[reg]

    def write(self, offset: int, size: int, value: int) -> None:
        if offset >= len(Reg):
            raise unknown_register(self, offset, "write")
        reg, value = Reg(offset), value & 0xFF
        if reg == Reg.RBR_THR_DLL:
            if self._dlab():
                self._divisor = (self._divisor & 0xFF00) | value
            else:
                self.console.put(value)
                self._idle_polls = 0
        elif reg == Reg.IER_DLM and self._dlab():
            self._divisor = (self._divisor & 0xFF) | (value << 8)
        elif reg in self._regs:
            self._regs[reg] = value
        # FCR, LSR and MSR writes have no effect in this model, as on a idle 16550.
