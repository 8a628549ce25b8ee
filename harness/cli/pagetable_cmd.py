"""`privlab pagetable`: the page table of a process (or the kernel's), as a tree.

    privlab pagetable                          # hello's table at its first system call
    privlab pagetable --user sbrk --at syscall:sbrk:2
    privlab pagetable --kernel-table           # the kernel's own page table
    privlab pagetable --satp 0x8000000000087f36 --full

Valid entries only; consecutive pages with the same flags are merged into ranges.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import BadInput, GuestError
from .helplayout import HelpLayout
from .sessionargs import (
    add_abi_argument,
    add_at_argument,
    add_machine_arguments,
    session_at,
    symbolize_now,
)

if TYPE_CHECKING:
    from ..api import Session

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("pagetable", help="show a page table as a tree with merged ranges",
                       description=__doc__, formatter_class=HelpLayout)
    add_at_argument(p, "syscall:*")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--satp", type=lambda t: int(t, 0), help="this satp instead of the current")
    which.add_argument("--kernel-table", action="store_true",
                       help="the kernel's page table: the global the --abi profile names "
                            "(xv6's and uCore's kernel_pagetable), else the running "
                            "process's trapframe.kernel_satp")
    p.add_argument("--full", action="store_true", help="every line, however many")
    add_abi_argument(p)
    add_machine_arguments(p, default_user="hello")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: every command's parser is built on each run (harness/cli/main.py).
    from ..abi.csr import Csr
    from ..inspect import PageTableTree, make_console
    from ..mmu import read_page_table

    s, _ = session_at(args)
    satp = args.satp if args.satp is not None else s.machine.hart.csr(Csr.SATP)
    if args.kernel_table:
        satp = _kernel_satp(s)
    try:
        table = read_page_table(s.machine.memory, satp, s.machine.xlen)
    except GuestError as e:
        raise BadInput(str(e)) from e
    console = make_console()
    console.print(PageTableTree(table, symbolize_now(s), f"Page table at {args.at}",
                                None if args.full else 16))
    return 0


def _kernel_satp(s: Session) -> int:
    """The kernel's satp: from the kernel's own global where its profile names one
    (`kernel_pagetable`), else from the running process's trap frame."""
    kernel = s.info.kernel_info
    if kernel is not None and kernel.profile.kernel_root is not None:
        try:
            satp = kernel.kernel_satp(s.machine.memory, s.machine.xlen)
        except KeyError as e:       # MissingStructure: not the kernel the profile is for
            raise BadInput(f"--kernel-table reads the kernel's page table from "
                           f"{kernel.profile.kernel_root} ({e}); give --satp instead") \
                from None
        if satp is None:
            raise BadInput(f"the kernel has no page table yet ({kernel.profile.kernel_root} "
                           "is 0 here: stop later with --at)")
        return satp
    try:
        frame = s.trapframe()
    except KeyError as e:       # not privlab's kernel: no `proc` table, no trap frame
        raise BadInput(f"--kernel-table reads the kernel's satp from the running "
                       f"process's trap frame, and this kernel has none privlab "
                       f"knows ({e}); give --satp instead (or --abi for xv6 or uCore)") \
            from None
    if frame is None or not frame.type.has("kernel_satp"):
        raise BadInput("no running process with a trap frame to find the kernel's satp in")
    return frame.get_int("kernel_satp")
