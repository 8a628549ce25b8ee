"""Linker scripts that never repeat a number from the memory map: a script names
PLATFORM_RAM_BASE, PLATFORM_KERNEL_BASE, PLATFORM_RAM_SIZE_DEFAULT (include/platform.h)
and whatever the build passes (USER_BASE for user programs, from the kernel's own
memlayout.h through asm-offsets.h), and the build links a copy with those symbols
defined on top (zig's linker driver has no --defsym)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from ..abi.platform import PLATFORM
from .cache import write_if_changed

__all__ = ["kernel_layout_value", "with_platform"]


def with_platform(script: Path, gen: Path, extra: Mapping[str, int] | None = None) -> Path:
    """`script` with the platform's addresses (and `extra`) defined on top, in `gen`."""
    values = {"PLATFORM_RAM_BASE": PLATFORM.ram_base,
              "PLATFORM_KERNEL_BASE": PLATFORM.kernel_base,
              "PLATFORM_RAM_SIZE_DEFAULT": PLATFORM.ram_size_default, **(extra or {})}
    header = (f"/* Generated from {script.name} and include/platform.h: do not edit. */\n"
              + "".join(f"{name} = 0x{value:x};\n" for name, value in values.items()) + "\n")
    return write_if_changed(gen / script.name, header + script.read_text())


def kernel_layout_value(asm_offsets_h: Path, name: str) -> int:
    """One LAYOUT_<name> value of a build's asm-offsets.h (kernel/asm-offsets.c)."""
    found = re.search(rf"^#define LAYOUT_{name} (-?\d+)$", asm_offsets_h.read_text(), re.M)
    if found is None:
        raise KeyError(f"{asm_offsets_h} has no LAYOUT_{name}")
    return int(found[1])
