"""`privlab inspect --at POINT`: the whole machine at one moment of a run.

    privlab inspect --at trap:6               # event #6 of `privlab trace --user hello`
    privlab inspect --at syscall:write --user hello
    privlab inspect --at symbol:usertrap
    privlab inspect --at sbi:DBCN.WRITE       # the kernel's console write, in the firmware

Shows the event, the registers, every field of the trap CSRs, those of the level the
hart is in first (fields the event changed are highlighted: the run is replayed to
the instruction before it), the code where it trapped and where the hart is now, and
the kernel's process table and the current process's trap frame and open files
(--pid N: that process's), decoded from the kernel's DWARF.
"""

from __future__ import annotations

import argparse

from .sessionargs import add_abi_argument, add_at_argument, add_machine_arguments

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("inspect", help="registers, CSRs, code, processes at one moment",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_at_argument(p, "syscall:*")
    p.add_argument("--pid", type=int, metavar="N",
                   help="show this process's trap frame (default: the running process's)")
    add_abi_argument(p)
    add_machine_arguments(p, default_user="hello")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: every command's parser is built on each run (harness/cli/main.py).
    from .inspect_run import run as inspect

    return inspect(args)
