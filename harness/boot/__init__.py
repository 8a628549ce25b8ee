"""What a machine hands the teaching kernel at boot: the device tree, the initrd and
the kernel command line. (The system-call table is in harness/abi/syscall_table.py.)

For the machine: ``build_dtb(ram_base, ram_size, bootargs, initrd_range, xlen)``,
``initrd_load_address(ram_base, ram_size, kernel_base)``, ``user_boot(users, prog,
args)`` and ``make_bootargs(...)``.
"""

from harness.boot.bootargs import UserBoot, make_bootargs, user_boot
from harness.boot.dtb import build_dtb, parse_dtb_summary
from harness.boot.initrd import InitrdEntry, initrd_load_address, pack_initrd, unpack_initrd

__all__ = [
    "InitrdEntry",
    "UserBoot",
    "build_dtb",
    "initrd_load_address",
    "make_bootargs",
    "pack_initrd",
    "parse_dtb_summary",
    "unpack_initrd",
    "user_boot",
]
