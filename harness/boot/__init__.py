"""What a machine hands the teaching kernel at boot: the device tree, the initrd, the
kernel command line and the disk. (The system-call table is in
harness/abi/syscall_table.py.)

For the machine: ``build_dtb(ram_base, ram_size, bootargs, initrd_range, xlen)``,
``initrd_load_address(ram_base, ram_size, kernel_base)``, ``user_boot(users, prog,
args, add=...)`` (the programs: ``gather_programs``), ``boot_drive(images.disk,
ub.programs, drive)`` and ``make_bootargs(...)``.

The names load on first use (PEP 562): a bare-metal run needs the device tree alone,
not the initrd, the programs or the disk.
"""

from __future__ import annotations

from ..lazyload import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .bootargs import UserBoot, make_bootargs, user_boot
    from .bootdisk import RUN_IMAGE_NAME, boot_drive
    from .dtb import build_dtb, parse_dtb_summary
    from .initrd import InitrdEntry, initrd_load_address, pack_initrd, unpack_initrd
    from .programs import Programs, gather_programs

__all__ = [
    "RUN_IMAGE_NAME",
    "InitrdEntry",
    "Programs",
    "UserBoot",
    "boot_drive",
    "build_dtb",
    "gather_programs",
    "initrd_load_address",
    "make_bootargs",
    "pack_initrd",
    "parse_dtb_summary",
    "unpack_initrd",
    "user_boot",
]

_HOME = {
    **dict.fromkeys(("UserBoot", "make_bootargs", "user_boot"), "bootargs"),
    **dict.fromkeys(("RUN_IMAGE_NAME", "boot_drive"), "bootdisk"),
    **dict.fromkeys(("build_dtb", "parse_dtb_summary"), "dtb"),
    **dict.fromkeys(("InitrdEntry", "initrd_load_address", "pack_initrd", "unpack_initrd"),
                    "initrd"),
    **dict.fromkeys(("Programs", "gather_programs"), "programs"),
}

__getattr__ = lazy_exports(__name__, globals(), _HOME)
