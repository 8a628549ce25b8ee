"""The sources a guest build generates from privlab's facts (harness/abi) before it
compiles anything: riscv_gen.h, syscall_gen.h, usys.S, syscalls.h, fs_gen.h and
asm-offsets.h, into the build's gen/ directory."""

from __future__ import annotations

from pathlib import Path

from ..abi import fs_layout, spec_header, syscall_table
from . import asm_offsets
from .cache import write_if_changed
from .toolchain import Arch, CompileOptions

__all__ = ["generate"]


def generate(gen_dir: Path, kernel_dir: Path, arch: Arch) -> None:
    """Write riscv_gen.h, syscall_gen.h, usys.S, syscalls.h, fs_gen.h and asm-offsets.h into
    `gen_dir` for a build of `kernel_dir` (each file rewritten only when its text
    changes). asm-offsets.h is compiled from the kernel's own headers, which include
    riscv_gen.h, so it comes last."""
    write_if_changed(gen_dir / "riscv_gen.h", spec_header.render(arch.xlen))
    table = syscall_table.load_syscall_table(kernel_dir / "syscall.tbl")
    write_if_changed(gen_dir / "syscall_gen.h", syscall_table.generate_kernel_header(table))
    write_if_changed(gen_dir / "usys.S", syscall_table.generate_user_stubs(table))
    write_if_changed(gen_dir / "syscalls.h", syscall_table.generate_user_header(table))
    write_if_changed(gen_dir / "fs_gen.h", fs_layout.render_header())
    opts = CompileOptions(arch, include_dirs=(kernel_dir / "include", kernel_dir, gen_dir))
    write_if_changed(gen_dir / "asm-offsets.h",
                     asm_offsets.generate_asm_offsets(kernel_dir / "asm-offsets.c", opts))
