"""`privlab tour`: a guided walk through one system call, start to finish.

Boots the bundled firmware and kernel, runs `hello`, and shows, from the run itself:
the boot (M to S to U), the trap flow of hello's write() through U, S and M, the CSRs
the ecall changed, and hello's page table with the walk that finds its buffer.
Non-interactive; takes a few seconds.
"""

from __future__ import annotations

import argparse

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tour", help="a guided walk through one system call (start here)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", choices=("rv64", "rv32"), default="rv64")
    p.add_argument("--unfold", action="store_true",
                   help="show every row of the boot, runs of identical rows included")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: every command's parser is built on each run (harness/cli/main.py).
    from .tour_run import run as tour

    return tour(args)
