"""Putting a system into a machine, the way QEMU's `virt` board does: the one place
every entry point (the Python API's Session, `privlab run`, the grader's KernelRun)
turns images into a machine ready to run.

`new_bare(image, ...)` and `new_system(firmware, kernel, initrd, bootargs, ...)` make
the machine, sized for the image's XLEN (an ELF of the other XLEN is refused by
Machine.load); what `--user PROG ARGS` or the shell boots is harness/boot's
`user_boot(...)`.

Bare metal (`-bios none -kernel X`): X's segments at their physical addresses, the hart
at the RAM base in M-mode with a0 = 0. A system: the firmware at the RAM base, the
S-mode kernel at its own address, the initrd half way into RAM (at most 128 MiB above
the kernel) and the device tree at the top of RAM, 2 MiB aligned, with a0 = hart id
and a1 = the device tree, as QEMU 7.2's reset vector leaves them (hw/riscv/boot.c).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..abi.platform import PLATFORM
from ..devices.mrom import FW_DYNAMIC_INFO_OFFSET, reset_rom
from ..devices.uart import Console, InputSource
from ..errors import BadInput
from ..pace import DEFAULT_ICOUNT_SHIFT
from .loader import ElfImage
from .machine import Machine
from .schedule import DEFAULT_SMP_SEED

TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap

    from ..devices.disk import Drive

__all__ = ["BootLayout", "boot_bare", "boot_system", "new_bare", "new_system"]

FDT_ALIGN = 2 << 20
HART_ID = 0


@dataclass(frozen=True)
class BootLayout:
    """Where boot_system put things."""

    initrd_start: int
    initrd_end: int
    dtb_addr: int
    bootargs: str


def _reset(machine: Machine, fdt: int, next_addr: int) -> None:
    """Fill the reset ROM as QEMU does and leave the hart where its vector jumps."""
    machine.mrom.content = reset_rom(machine.xlen, PLATFORM.ram_base, fdt, next_addr)
    machine.reset(PLATFORM.ram_base, a0=HART_ID, a1=fdt,
                  a2=PLATFORM.mrom_base + FW_DYNAMIC_INFO_OFFSET)


def boot_bare(machine: Machine, image: ElfImage) -> None:
    machine.load(image)
    _reset(machine, 0, image.entry)


def new_bare(image: ElfImage, *, ram: int = PLATFORM.ram_size_default,
             console: Console | None = None, uart_input: InputSource | None = None,
             keep_events: bool = True, drive: Drive | None = None,
             virtio_legacy: bool = False, icount_shift: int = DEFAULT_ICOUNT_SHIFT, smp: int = 1,
             smp_seed: int = DEFAULT_SMP_SEED) -> Machine:
    """A machine of the image's XLEN running `image` from M-mode at the RAM base (with
    `smp` harts: all of them, as on QEMU)."""
    machine = Machine(image.xlen, ram, console=console, uart_input=uart_input,
                      keep_events=keep_events, drive=drive, virtio_legacy=virtio_legacy,
                      icount_shift=icount_shift, smp=smp, smp_seed=smp_seed)
    boot_bare(machine, image)
    return machine


def new_system(firmware: ElfImage, kernel: ElfImage, initrd: bytes | mmap.mmap,
               bootargs: str, *, ram: int = PLATFORM.ram_size_default,
               console: Console | None = None, uart_input: InputSource | None = None,
               keep_events: bool = True,
               drive: Drive | None = None, virtio_legacy: bool = False,
               icount_shift: int = DEFAULT_ICOUNT_SHIFT, smp: int = 1,
               smp_seed: int = DEFAULT_SMP_SEED, dtb_before_qemu72: bool = False) -> Machine:
    """A machine of the kernel's XLEN with firmware, kernel, initrd and device tree in
    place (boot_system), at reset."""
    machine = Machine(kernel.xlen, ram, console=console, uart_input=uart_input,
                      keep_events=keep_events, drive=drive, virtio_legacy=virtio_legacy,
                      icount_shift=icount_shift, smp=smp, smp_seed=smp_seed)
    boot_system(machine, firmware, kernel, initrd, bootargs,
                dtb_before_qemu72=dtb_before_qemu72)
    return machine


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _extent(image: ElfImage) -> tuple[int, int]:
    return (min(s.paddr for s in image.segments),
            max(s.paddr + s.memsz for s in image.segments))


def boot_system(machine: Machine, firmware: ElfImage, kernel: ElfImage,
                initrd: bytes | mmap.mmap, bootargs: str = "", *,
                dtb_before_qemu72: bool = False) -> BootLayout:
    from ..boot.dtb import build_dtb  # a bare run passes no tree
    from ..boot.initrd import initrd_load_address  # and packs no initrd

    mem = machine.memory
    machine.load(firmware)
    machine.load(kernel)
    start = initrd_load_address(mem.ram_base, mem.ram_size, PLATFORM.kernel_base)
    end = start + len(initrd)
    dtb = build_dtb(mem.ram_base, mem.ram_size, bootargs, (start, end) if initrd else None,
                    machine.xlen, harts=machine.smp, before_qemu72=dtb_before_qemu72)
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
    _reset(machine, dtb_addr, kernel.entry)
    return BootLayout(start, end, dtb_addr, bootargs)
