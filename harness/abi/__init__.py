"""The facts that C, assembler and Python share, and the generators that carry them
across: one module per fact, each the only place it is defined.

- `csr`: CSR numbers and fields, privilege levels, exception and interrupt codes and
  their names (privileged spec v1.12).
- `pte`: page-table entry bits and fields (Sv39, Sv32).
- `platform`: the `virt` memory map, parsed from `kernel/include/platform.h`.
- `syscall_table`: the system calls, parsed from `kernel/syscall.tbl`; `xv6.tbl` beside
  it is xv6-riscv's, for decoding a foreign kernel's calls (`--abi xv6`).
- `registers`: the integer registers' ABI names.
- `spec_header`: renders `riscv_gen.h`, the assembler-safe header of csr and pte facts
  that the firmware, kernel, user programs, conformance programs and native core use.
- `asm_offsets`: struct offsets for assembler, computed by the compiler from C.
- `native_layout`: the native core's shared state and event record, for C and ctypes.
- `fs_layout`: the file system's on-disk structures, for the kernel (`fs_gen.h`) and
  the harness's mkfs, reader and fsck.

`generate(gen_dir, kernel_dir, arch)` writes every generated source a guest build
needs into `gen_dir`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from ..build.toolchain import Arch

__all__ = ["generate"]


def generate(gen_dir: Path, kernel_dir: Path, arch: Arch) -> None:
    """Write riscv_gen.h, syscall_gen.h, usys.S, syscalls.h, fs_gen.h and asm-offsets.h into
    `gen_dir` for a build of `kernel_dir` (each file rewritten only when its text
    changes). asm-offsets.h is compiled from the kernel's own headers, which include
    riscv_gen.h, so it comes last."""
    # Imported here: the fact modules stay importable without the build machinery.
    from ..build.cache import write_if_changed
    from ..build.toolchain import CompileOptions
    from . import asm_offsets, fs_layout, spec_header, syscall_table

    write_if_changed(gen_dir / "riscv_gen.h", spec_header.render(arch.xlen))
    table = syscall_table.load_syscall_table(kernel_dir / "syscall.tbl")
    write_if_changed(gen_dir / "syscall_gen.h", syscall_table.generate_kernel_header(table))
    write_if_changed(gen_dir / "usys.S", syscall_table.generate_user_stubs(table))
    write_if_changed(gen_dir / "syscalls.h", syscall_table.generate_user_header(table))
    write_if_changed(gen_dir / "fs_gen.h", fs_layout.render_header())
    opts = CompileOptions(arch, include_dirs=(kernel_dir / "include", kernel_dir, gen_dir))
    write_if_changed(gen_dir / "asm-offsets.h",
                     asm_offsets.generate_asm_offsets(kernel_dir / "asm-offsets.c", opts))
