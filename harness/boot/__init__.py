"""What a machine needs to boot the teaching kernel: the device tree, the initrd, the
kernel command line, and the system-call table the kernel was built from.

For the machine: ``build_dtb(ram_base, ram_size, bootargs, initrd_range, xlen)``,
``initrd_load_address(ram_base, ram_size, kernel_base)``, ``user_boot(users, prog,
args)`` and ``make_bootargs(...)``.
"""

from harness.boot.bootargs import UserBoot, make_bootargs, user_boot
from harness.boot.dtb import build_dtb, parse_dtb_summary
from harness.boot.initrd import InitrdEntry, initrd_load_address, pack_initrd, unpack_initrd
from harness.boot.syscalls import Syscall, load_syscall_table, syscall_by_number

__all__ = [
    "InitrdEntry",
    "Syscall",
    "UserBoot",
    "build_dtb",
    "initrd_load_address",
    "load_syscall_table",
    "make_bootargs",
    "pack_initrd",
    "parse_dtb_summary",
    "syscall_by_number",
    "unpack_initrd",
    "user_boot",
]
