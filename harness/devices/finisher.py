"""The sifive_test finisher (QEMU `virt` "test" device): how a guest powers off."""

from __future__ import annotations

from enum import IntEnum

from ..abi.platform import PLATFORM
from .base import AccessRule, Halt

__all__ = ["Finisher"]


class Command(IntEnum):
    FAIL = PLATFORM.finisher_fail    # | code << 16: exit with `code`
    PASS = PLATFORM.finisher_pass    # exit 0
    RESET = PLATFORM.finisher_reset


class Finisher:
    name = "sifive_test"
    # QEMU 7.2's sifive_test: 2- and 4-byte accesses anywhere in its page; reads are 0,
    # and a write acts at offset 0 only.
    access_rules = (AccessRule(0, PLATFORM.finisher_size, 2, 4),)

    def __init__(self, halt: Halt) -> None:
        self.base = PLATFORM.finisher_base
        self.size = PLATFORM.finisher_size
        self._halt = halt

    def read(self, offset: int, size: int) -> int:
        return 0

    def write(self, offset: int, size: int, value: int) -> None:
        if offset != 0:
            return          # QEMU ignores it (and logs a guest error)
        command, code = value & 0xFFFF, (value >> 16) & 0xFFFF
        if command == Command.PASS:
            self._halt(0, "finisher: pass")
        elif command == Command.FAIL:
            self._halt(code, f"finisher: fail with code {code}")
        elif command == Command.RESET:
            self._halt(0, "finisher: reset requested (privlab powers off instead)")
        # QEMU ignores any other value written here; so does privlab.
