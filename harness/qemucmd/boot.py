"""A `QemuLine` booted as QEMU 7.2 boots it on `virt`, into a privlab Machine.

- `-bios none -kernel X`: X (an ELF, or a raw binary at the RAM base) from M-mode, as
  `privlab run --bios none --kernel X`.
- `-bios FILE -kernel K`: FILE at the RAM base (an ELF at its addresses, or a raw
  binary as QEMU loads one there), K at 0x8020_0000 (raw) or its own addresses (ELF),
  `-initrd` half way into RAM and a device tree with `-append` as its bootargs, a0 =
  hart id, a1 = the tree: harness/machine/assemble.py's `new_system`.
- `-bios default`, or no -bios: QEMU's default firmware is OpenSBI; privlab's own
  firmware stands in for it (the same SBI calls: base, TIME, SRST, DBCN, HSM and the
  legacy console), built once like every privlab build.
- `-device loader,file=F,addr=A`: F's bytes written into RAM at A after the rest.
"""

from __future__ import annotations

from pathlib import Path

from ..abi.platform import PLATFORM
from ..devices import Console
from ..devices.disk import Drive
from ..devices.uart import InputSource
from ..errors import BadInput
from ..machine import Machine
from ..machine.loader import ElfImage, Segment, load_elf
from ..pace import DEFAULT_ICOUNT_SHIFT
from .grammar import QemuLine, Refused

__all__ = ["boot_qemu_line", "image_at"]

ELF_MAGIC = b"\x7fELF"
RWX = 7
MIB = 1 << 20


def image_at(path: Path, base: int, option: str) -> ElfImage:
    """An ELF as its headers say, or a raw binary's bytes at `base` (QEMU's rule for
    -bios and -kernel: whatever is not an ELF is loaded raw)."""
    if not path.is_file():
        raise BadInput(f"{option} {path}: no such file")
    data = path.read_bytes()
    if data.startswith(ELF_MAGIC):
        return load_elf(path)
    if not data:
        raise BadInput(f"{option} {path}: the file is empty")
    return ElfImage(path, 64, base, (Segment(base, base, data, len(data), RWX),))


def _bundled_firmware(xlen: int) -> ElfImage:
    from ..build.images import build_images

    return load_elf(build_images(f"rv{xlen}", listings=False).firmware)


def _check(line: QemuLine) -> None:
    if line.kernel is None:
        if line.bios in ("none", "default"):
            raise Refused("privlab qemu needs -kernel FILE (the program to boot)")
        raise Refused(f"-bios {line.bios} without -kernel: privlab boots firmware with a "
                      "kernel (or -bios none -kernel FILE for one program)")
    if line.bios == "none" and (line.initrd is not None or line.append):
        raise Refused("-initrd and -append need firmware: with -bios none privlab passes "
                      "no device tree")
    if line.freeze and line.gdb is None:
        raise Refused("-S without -s or -gdb: with no monitor nothing could start the "
                      "machine")


def boot_qemu_line(line: QemuLine, console: Console, uart_input: InputSource, *,
                   pmp_before_qemu7: bool = False, dtb_before_qemu72: bool = False) -> Machine:
    """The machine `line` describes, at reset."""
    from ..machine.assemble import new_bare, new_system

    _check(line)
    assert line.kernel is not None
    drive = Drive(line.drive, line.snapshot) if line.drive is not None else None
    # Without -icount QEMU's guest runs on the host's clock; privlab's runs at its
    # default pace, which is chosen to give about the same work per tick.
    shift = DEFAULT_ICOUNT_SHIFT if line.icount_shift is None else line.icount_shift
    ram = line.ram_mib * MIB
    if line.bios == "none":
        if dtb_before_qemu72:
            raise BadInput("--dtb-before-qemu7.2 names a node of the device tree, which "
                           "-bios none does not pass")
        m = new_bare(image_at(line.kernel, PLATFORM.ram_base, "-kernel"), ram=ram,
                     console=console, uart_input=uart_input, drive=drive,
                     virtio_legacy=line.legacy, icount_shift=shift, smp=line.smp)
    else:
        kernel = image_at(line.kernel, PLATFORM.kernel_base, "-kernel")
        firmware = (_bundled_firmware(kernel.xlen) if line.bios == "default" else
                    image_at(Path(line.bios), PLATFORM.ram_base, "-bios"))
        initrd = b""
        if line.initrd is not None:
            if not line.initrd.is_file():
                raise BadInput(f"-initrd {line.initrd}: no such file")
            initrd = line.initrd.read_bytes()
        m = new_system(firmware, kernel, initrd, line.append, ram=ram, console=console,
                       uart_input=uart_input, drive=drive, virtio_legacy=line.legacy,
                       icount_shift=shift, smp=line.smp, dtb_before_qemu72=dtb_before_qemu72)
    for loader in line.loaders:
        if not loader.path.is_file():
            raise BadInput(f"-device loader,file={loader.path}: no such file")
        data = loader.path.read_bytes()
        if not m.memory.in_ram(loader.addr, len(data)):
            raise Refused(f"-device loader,file={loader.path},addr={loader.addr:#x}: "
                          "privlab's loader writes into RAM only")
        m.memory.write(loader.addr, data)
    if pmp_before_qemu7:
        open_pmp_when_empty(m)
    return m


def open_pmp_when_empty(m: Machine) -> None:
    """QEMU before 7.0's rule on every hart: with no PMP entry active, S and U access
    all memory and mret may return to them (harness/native/pmp.c, xret.c)."""
    for hart in m.harts:
        hart.state.pmp_open_when_empty = 1
