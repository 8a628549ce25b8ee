"""The sifive_test finisher (QEMU `virt` "test" device): how a guest powers off."""

from __future__ import annotations

from enum import IntEnum

from ..abi.platform import PLATFORM
from .base import Halt, unknown_register

__all__ = ["Finisher"]


class Command(IntEnum):
    FAIL = PLATFORM.finisher_fail    # | code << 16: exit with `code`
    PASS = PLATFORM.finisher_pass    # exit 0
    RESET = PLATFORM.finisher_reset


class Finisher:
    name = "sifive_test"

    def __init__(self, halt: Halt) -> None:
        self.base = PLATFORM.finisher_base
        self.size = PLATFORM.finisher_size
        self._halt = halt

    def read(self, offset: int, size: int) -> int:
        if offset != 0:
            raise unknown_register(self, offset, "read")
        return 0

    def write(self, offset: int, size: int, value: int) -> None:
        if offset != 0:
            raise unknown_register(self, offset, "write")
        command, code = value & 0xFFFF, (value >> 16) & 0xFFFF
        if command == Command.PASS:
            self._halt(0, "finisher: pass")
        elif command == Command.FAIL:
            self._halt(code, f"finisher: fail with code {code}")
        elif command == Command.RESET:
            self._halt(0, "finisher: reset requested (privlab powers off instead)")
        # QEMU ignores any other value written here; so does privlab.
