"""What a device is: a register window the hart reaches through MMIO."""

from __future__ import annotations

from dataclasses import dataclass

from ..abi.native_layout import SharedState
from ..errors import GuestError
from ..protocol import Protocol

__all__ = ["AccessRule", "Device", "DeviceError", "Halt", "HartLines"]


class DeviceError(GuestError):
    """The guest used a device register that does not exist or in a way it cannot be."""


class Halt(Protocol):
    """How a device ends the run: the finisher and HTIF call it with an exit status."""

    def __call__(self, status: int, reason: str) -> None: ...


class HartLines(Protocol):
    """What the CLINT and PLIC reach of a hart (machine/hart.py's Hart): the native
    core's shared state, where msip, mtimecmp and the external-interrupt lines live,
    its clock, and `update()` after a change, so the core recomputes its deadline.
    A protocol, so devices need nothing of the machine that owns them."""

    state: SharedState

    def mtime(self) -> int: ...

    def update(self) -> None: ...


@dataclass(frozen=True)
class AccessRule:
    """Loads and stores of `min_size` to `max_size` bytes wholly inside offsets
    [lo, hi) of a device reach it. A device that lists rules (`access_rules`) takes
    nothing else on its pages, as QEMU 7.2's memory region for it: any other access is
    a load or store access fault at the instruction, tval the address, before the
    device sees it (harness/native/devaccess.c)."""

    lo: int
    hi: int
    min_size: int
    max_size: int


class Device(Protocol):
    name: str
    base: int
    size: int

    def read(self, offset: int, size: int) -> int: ...

    def write(self, offset: int, size: int, value: int) -> None: ...


def unknown_register(dev: Device, offset: int, what: str) -> DeviceError:
    return DeviceError(f"{what} of unimplemented {dev.name} register at "
                       f"{dev.base + offset:#x} (offset {offset:#x})")

