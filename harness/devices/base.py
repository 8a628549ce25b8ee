"""What a device is: a register window the hart reaches through MMIO."""

from __future__ import annotations

from typing import Protocol

from ..errors import GuestError

__all__ = ["Device", "DeviceError", "Halt"]


class DeviceError(GuestError):
    """The guest used a device register that does not exist or in a way it cannot be."""


class Halt(Protocol):
    """How a device ends the run: the finisher and HTIF call it with an exit status."""

    def __call__(self, status: int, reason: str) -> None: ...


class Device(Protocol):
    name: str
    base: int
    size: int

    def read(self, offset: int, size: int) -> int: ...

    def write(self, offset: int, size: int, value: int) -> None: ...


def unknown_register(dev: Device, offset: int, what: str) -> DeviceError:
    return DeviceError(f"{what} of unimplemented {dev.name} register at "
                       f"{dev.base + offset:#x} (offset {offset:#x})")

