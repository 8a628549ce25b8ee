"""What a machine needs to boot the teaching kernel: device tree, initrd, bootargs,
and the system-call table the kernel was built from."""

from harness.boot.initrd import initrd_load_address, pack_initrd, unpack_initrd
from harness.boot.syscalls import Syscall, load_syscall_table

__all__ = ["Syscall", "initrd_load_address", "load_syscall_table", "pack_initrd",
           "unpack_initrd"]
