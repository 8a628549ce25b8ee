"""The QEMU `virt` memory map, read from kernel/include/platform.h.

The header is the single source of truth; this module parses its `#define` lines once
at import, so the harness, the firmware, the kernel and the tests cannot disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..paths import PLATFORM_HEADER

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
        d = parse_defines(path)
        return cls(
            mrom_base=d["PLATFORM_MROM_BASE"],
            mrom_size=d["PLATFORM_MROM_SIZE"],
            finisher_base=d["PLATFORM_FINISHER_BASE"],
            finisher_size=d["PLATFORM_FINISHER_SIZE"],
            finisher_pass=d["FINISHER_PASS"],
            finisher_fail=d["FINISHER_FAIL"],
            finisher_reset=d["FINISHER_RESET"],
            clint_base=d["PLATFORM_CLINT_BASE"],
            clint_size=d["PLATFORM_CLINT_SIZE"],
            clint_msip=d["CLINT_MSIP"],
            clint_mtimecmp=d["CLINT_MTIMECMP"],
            clint_mtime=d["CLINT_MTIME"],
            timebase_hz=d["PLATFORM_TIMEBASE_HZ"],
            plic_base=d["PLATFORM_PLIC_BASE"],
            plic_size=d["PLATFORM_PLIC_SIZE"],
            plic_num_sources=d["PLIC_NUM_SOURCES"],
            plic_max_priority=d["PLIC_MAX_PRIORITY"],
            plic_priority=d["PLIC_PRIORITY"],
            plic_pending=d["PLIC_PENDING"],
            plic_enable=d["PLIC_ENABLE"],
            plic_enable_stride=d["PLIC_ENABLE_STRIDE"],
            plic_context=d["PLIC_CONTEXT"],
            plic_context_stride=d["PLIC_CONTEXT_STRIDE"],
            plic_threshold=d["PLIC_THRESHOLD"],
            plic_claim=d["PLIC_CLAIM"],
            plic_context_m=d["PLIC_CONTEXT_M"],
            plic_context_s=d["PLIC_CONTEXT_S"],
            plic_num_contexts=d["PLIC_NUM_CONTEXTS"],
            uart0_base=d["PLATFORM_UART0_BASE"],
            uart0_size=d["PLATFORM_UART0_SIZE"],
            uart0_irq=d["PLATFORM_UART0_IRQ"],
            virtio0_base=d["PLATFORM_VIRTIO0_BASE"],
            virtio_count=d["PLATFORM_VIRTIO_COUNT"],
            virtio_stride=d["PLATFORM_VIRTIO_STRIDE"],
            virtio_size=d["PLATFORM_VIRTIO_SIZE"],
            virtio0_irq=d["PLATFORM_VIRTIO0_IRQ"],
            ram_base=d["PLATFORM_RAM_BASE"],
            ram_size_default=d["PLATFORM_RAM_SIZE_DEFAULT"],
            kernel_base=d["PLATFORM_KERNEL_BASE"],
            virtio={k: v for k, v in d.items() if k.startswith(("VIRTIO_", "VIRTQ_"))},
        )


PLATFORM = Platform.from_header(PLATFORM_HEADER)
