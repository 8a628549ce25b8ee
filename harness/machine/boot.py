"""Putting a system into a machine, the way QEMU's `virt` board does.

Bare metal (`-bios none -kernel X`): X's segments at their physical addresses, the hart
at the RAM base in M-mode with a0 = 0. A system: the firmware at the RAM base, the
S-mode kernel at its own address, the initrd half way into RAM (at most 128 MiB above
the kernel) and the device tree at the top of RAM, 2 MiB aligned, with a0 = hart id
and a1 = the device tree, as QEMU 7.2's reset vector leaves them (hw/riscv/boot.c).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.abi.platform import PLATFORM
from harness.boot import build_dtb, initrd_load_address
from harness.errors import BadInput
from harness.machine.loader import ElfImage
from harness.machine.machine import Machine

__all__ = ["BootLayout", "boot_bare", "boot_system"]

FDT_ALIGN = 2 << 20
HART_ID = 0


@dataclass(frozen=True)
class BootLayout:
    """Where boot_system put things."""

    initrd_start: int
    initrd_end: int
    dtb_addr: int
    bootargs: str


def boot_bare(machine: Machine, image: ElfImage) -> None:
    machine.load(image)
    machine.reset(PLATFORM.ram_base, a0=HART_ID, a1=0)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _extent(image: ElfImage) -> tuple[int, int]:
    return (min(s.paddr for s in image.segments),
            max(s.paddr + s.memsz for s in image.segments))


def boot_system(machine: Machine, firmware: ElfImage, kernel: ElfImage, initrd: bytes,
                bootargs: str = "") -> BootLayout:
    mem = machine.memory
    machine.load(firmware)
    machine.load(kernel)
    start = initrd_load_address(mem.ram_base, mem.ram_size, PLATFORM.kernel_base)
    end = start + len(initrd)
    dtb = build_dtb(mem.ram_base, mem.ram_size, bootargs, (start, end) if initrd else None,
                    machine.xlen)
    dtb_addr = (mem.ram_end - len(dtb)) // FDT_ALIGN * FDT_ALIGN
    regions = {"firmware": _extent(firmware), "kernel": _extent(kernel),
               "initrd": (start, end), "device tree": (dtb_addr, dtb_addr + len(dtb))}
    names = list(regions)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if _overlaps(regions[a], regions[b]):
                raise BadInput(f"{a} and {b} overlap in RAM: use a larger --ram")
    if initrd:
        if not mem.in_ram(start, len(initrd)):
            raise BadInput(f"the initrd ({len(initrd)} bytes) does not fit in RAM")
        mem.write(start, initrd)
    mem.write(dtb_addr, dtb)
    machine.reset(PLATFORM.ram_base, a0=HART_ID, a1=dtb_addr)
    return BootLayout(start, end, dtb_addr, bootargs)
