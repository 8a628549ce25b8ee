"""The facts that C, assembler and Python share, and the generators that carry them
across: one module per fact, each the only place it is defined.

- `csr`: CSR numbers and fields, privilege levels, exception and interrupt codes and
  their names (privileged spec v1.12).
- `paging`: page-table entry bits and fields, and each scheme's geometry (Sv39, Sv32).
- `platform`: the `virt` memory map, parsed from `kernel/include/platform.h`.
- `syscall_table`: the system calls, parsed from `kernel/syscall.tbl`; `xv6.tbl` beside
  it is xv6-riscv's, for decoding a foreign kernel's calls (`--abi xv6`).
- `registers`: the integer registers' ABI names.
- `spec_header`: renders `riscv_gen.h`, the assembler-safe header of csr and pte facts
  that the firmware, kernel, user programs, conformance programs and native core use.
- `native_layout`: the native core's shared state and event record, for C and ctypes.
- `fs_layout`: the file system's on-disk structures, for the kernel (`fs_gen.h`) and
  the harness's mkfs, reader and fsck.

Nothing here imports the rest of privlab: the generators that write these facts into
a build's headers are build machinery (harness/build/generated.py).
"""

from __future__ import annotations

__all__: list[str] = []
