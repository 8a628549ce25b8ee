"""Kernel profiles: where a family of kernels keeps what the inspectors read.

`--abi NAME` picks one profile: the system-call table calls are decoded with
(syscall_table.ABIS) and the globals and members the process views read through the
kernel's DWARF (harness/kernelinfo/mirrors.py). The layouts themselves always come
from the DWARF of the kernel being run, so a student's added or reordered fields are
followed; a profile only names where to look.

- `rcore`: privlab's own kernel (kernel/proc.h, kernel/smp.c): `proc[]`, and
  `cpus[hart].proc` (or `cpu.proc` on a one-hart build).
- `xv6`: MIT's xv6-riscv: `proc[]`, `cpus[hart].proc`, `kernel_pagetable`.
- `ucore`: THU's uCore-Tutorial C kernels (chapters 3 to 8): `pool[]` of `struct proc`,
  the running process in `current_proc`, or from chapter 8 the running thread in
  `current_thread` (its `process`, `tid` and `trapframe`), `files[]` for descriptors
  and `kernel_pagetable` for the kernel's own page table. uCore's processes have no
  name: the views show their pids.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import BadInput
from .csr import Csr, csr_fields
from .paging import PAGE_SHIFT, SCHEMES

__all__ = ["PROFILES", "KernelProfile", "kernel_profile", "satp_of_root"]


@dataclass(frozen=True)
class KernelProfile:
    """Names of the kernel's globals and members the process views read.

    `running` lists globals tried in order, the first the kernel has deciding: an
    array of structs with a `proc` member (one per hart), such a struct (one hart),
    a pointer to a process, or a pointer to a thread (a struct with a `process`
    member). `unused` holds the state names of a free slot; `threads` names the
    member array of a process's threads (each with its own trap frame), if any."""

    name: str
    processes: str
    running: tuple[str, ...]
    unused: frozenset[str]
    files: str
    threads: str | None = None
    kernel_root: str | None = None


PROFILES: dict[str, KernelProfile] = {
    "rcore": KernelProfile("rcore", "proc", ("cpus", "cpu"), frozenset({"UNUSED"}), "ofile"),
    "xv6": KernelProfile("xv6", "proc", ("cpus",), frozenset({"UNUSED"}), "ofile",
                         kernel_root="kernel_pagetable"),
    "ucore": KernelProfile("ucore", "pool", ("current_thread", "current_proc"),
                           frozenset({"UNUSED", "P_UNUSED", "T_UNUSED"}), "files",
                           threads="threads", kernel_root="kernel_pagetable"),
}
"""The profiles by `--abi` name (the same names as syscall_table.ABIS)."""


def kernel_profile(name: str) -> KernelProfile:
    """The profile called `name`; BadInput naming the choices otherwise."""
    if name not in PROFILES:
        raise BadInput(f"unknown ABI {name!r} (choose from {', '.join(PROFILES)})")
    return PROFILES[name]


def satp_of_root(root: int, xlen: int) -> int:
    """The satp value that selects the page table at physical address `root` in this
    XLEN's paged mode (ASID 0): what a kernel's MAKE_SATP(pagetable) writes."""
    fields = {f.name: f for f in csr_fields(Csr.SATP, xlen)}
    satp = fields["MODE"].insert(0, SCHEMES[xlen].satp_mode, xlen)
    return fields["PPN"].insert(satp, root >> PAGE_SHIFT, xlen)
