"""The QEMU `virt` memory map, read from kernel/include/platform.h.

The header is the single source of truth; this module parses its `#define` lines once
at import, so the harness, the firmware, the kernel and the tests cannot disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path

from ..paths import PLATFORM_HEADER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["PLATFORM", "Platform", "parse_define_lines", "parse_defines"]

_DEFINE = re.compile(r"^\s*#define\s+([A-Z][A-Z0-9_]*)\s+(0x[0-9a-fA-F]+|\d+)\b", re.M)


def parse_defines(path: Path) -> dict[str, int]:
    """Every `#define NAME <integer literal>` in a C header."""
    return parse_define_lines(path.read_text())


def parse_define_lines(text: str) -> dict[str, int]:
    """Every `#define NAME <integer literal>` in the text of a C header."""
    return {name: int(value, 0) for name, value in _DEFINE.findall(text)}


@dataclass(frozen=True)
class Platform:
    """The `virt` board's memory map and device constants, each field a define of
    platform.h (`from_header` says which)."""
    mrom_base: int
    mrom_size: int
    finisher_base: int
    finisher_size: int
    finisher_pass: int
    finisher_fail: int
    finisher_reset: int
    clint_base: int
    clint_size: int
    clint_msip: int
    clint_mtimecmp: int
    clint_mtime: int
    timebase_hz: int
    plic_base: int
    plic_size: int
    plic_num_sources: int
    plic_max_priority: int
    plic_priority: int
    plic_pending: int
    plic_enable: int
    plic_enable_stride: int
    plic_context: int
    plic_context_stride: int
    plic_threshold: int
    plic_claim: int
    plic_context_m: int
    plic_context_s: int
    plic_num_contexts: int
    uart0_base: int
    uart0_size: int
    uart0_irq: int
    virtio0_base: int
    virtio_count: int
    virtio_stride: int
    virtio_size: int
    virtio0_irq: int
    ram_base: int
    ram_size_default: int
    kernel_base: int
    virtio: dict[str, int] = field(default_factory=dict, compare=False)
    """Every `VIRTIO_*` and `VIRTQ_*` define: the virtio-mmio registers and the
    virtio-blk protocol, by their header names."""

    def virtio_base(self, slot: int) -> int:
        """The base address of virtio-mmio transport `slot`."""
        return self.virtio0_base + slot * self.virtio_stride

    @classmethod
    def from_header(cls, path: Path) -> Platform:
        """Each field is the define of its name in capitals, PLATFORM_-prefixed for
        the memory map (`ram_base` is PLATFORM_RAM_BASE) and plain for a device's
        register offsets and constants (`clint_mtime` is CLINT_MTIME)."""
        d = parse_defines(path)
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name == "virtio":
                continue
            names = (f"PLATFORM_{f.name.upper()}", f.name.upper())
            found = next((n for n in names if n in d), None)
            if found is None:
                raise KeyError(f"{path.name} defines neither {names[0]} nor {names[1]}")
            values[f.name] = d[found]
        virtio = {k: v for k, v in d.items() if k.startswith(("VIRTIO_", "VIRTQ_"))}
        return cls(**values, virtio=virtio)


PLATFORM = Platform.from_header(PLATFORM_HEADER)
