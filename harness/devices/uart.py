"""NS16550A UART: the console.

Transmit goes to the console sink at once; receive comes from a scripted byte string
(deterministic: tests, graders) or from the host's stdin. Only polled operation is
modelled (interrupts need the PLIC): LSR reports data-ready and an always-empty
transmitter, as QEMU's does when the host keeps up.
"""

from __future__ import annotations

import os
import select
import sys
from enum import IntEnum, IntFlag
from typing import Protocol

from harness.devices.base import unknown_register
from harness.platform import PLATFORM

__all__ = ["Console", "ScriptedInput", "StdinInput", "Uart"]


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


class InputSource(Protocol):
    def peek(self) -> bool: ...

    def take(self) -> int: ...


class ScriptedInput:
    """Bytes the guest will read, in order; then nothing."""

    def __init__(self, data: bytes = b"") -> None:
        self._data = bytearray(data)

    def peek(self) -> bool:
        return bool(self._data)

    def take(self) -> int:
        return self._data.pop(0) if self._data else 0

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
            return Lsr.THRE | Lsr.TEMT | (Lsr.DR if self.source.peek() else 0)
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
        elif reg == Reg.IER_DLM and self._dlab():
            self._divisor = (self._divisor & 0xFF) | (value << 8)
        elif reg in self._regs:
            self._regs[reg] = value
        # FCR, LSR and MSR writes have no effect in this model, as on a idle 16550.
