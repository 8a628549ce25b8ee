"""`privlab translate VA`: one virtual-address translation, level by level.

    privlab translate 0x10000                  # in hello, at its first system call
    privlab translate main --access x --priv U
    privlab translate 0x3fffffe000 --priv U    # the trap frame: no U bit, so it faults

Shows VPN[i], the PTE address and value and its decoded flags at every level, then the
physical address or the exact reason for the page fault. VA may be a symbol of the
program or the kernel. The walk is checked against the hart's own translation.
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
    p = sub.add_parser("translate", help="walk the page table for one virtual address",
                       description=__doc__, formatter_class=HelpLayout)
    p.add_argument("va", metavar="VA", help="a virtual address or a symbol")
    p.add_argument("--access", choices=("r", "w", "x"), default="r",
                   help="load (r), store (w) or fetch (x); default r")
    p.add_argument("--priv", choices=("U", "S", "M"), help="privilege of the access "
                   "(default: the level a trap came from when --at is a trap, else the "
                   "hart's; mstatus.MPRV applies)")
    p.add_argument("--satp", type=lambda t: int(t, 0), help="this satp instead of the current")
    add_at_argument(p, "syscall:*")
    add_abi_argument(p)
    add_machine_arguments(p, default_user="hello", positionals="VA")
    p.set_defaults(func=run)


def _address(s: Session, text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        pass
    addr = s.info.address_of(text)
    if addr is None:
        raise BadInput(f"{text!r} is neither an address nor a symbol of the loaded images")
    return addr


def run(args: argparse.Namespace) -> int:
    # Imported here: every command's parser is built on each run (harness/cli/main.py).
    from rich.markup import escape

    from ..inspect import WalkView, make_console
    from ..machine.events import TrapEvent

    s, result = session_at(args)
    va = _address(s, args.va)
    priv = args.priv
    if priv is None and isinstance(result.event, TrapEvent):
        priv = result.event.priv_from.letter     # as the code that trapped would see it
    w = s.translate(va, args.access, args.satp, priv)
    console = make_console()
    name = symbolize_now(s)
    event = result.event
    at = f"event #{event.seq} ({event.name})" if isinstance(event, TrapEvent) else \
        (f"event #{event.seq}" if event is not None else "the start")
    console.print(f"[muted]looked at {escape(str(args.at))}: {at}, instret {s.instret:,}, "
                  f"pc {s.pc:#x} {escape(name(s.pc).name)}[/]", markup=True, highlight=False)
    console.print(WalkView(w, name))
    if w.pa is None:
        console.print(f"[muted]not mapped at {escape(str(args.at))}: a page the program "
                      f"maps later is not there yet; look later with --at (syscall:NAME, "
                      f"the Kth such call: syscall:NAME:K, instret:N)[/]",
                      markup=True, highlight=False)
    same_context = args.satp is None and priv in (None, s.priv.letter)
    if same_context:
        hart = s.machine.memory.translate(va, args.access)
        mine = int(w.pa) if w.pa is not None else None
        agree = "agrees" if hart == mine else "DISAGREES"
        console.print(f"[muted]the hart's own translation {agree}: "
                      f"{'fault' if hart is None else f'{hart:#x}'}[/]")
    if w.pa is not None:
        try:
            data = s.read_phys(int(w.pa), 16)
        except GuestError:      # the translation points outside RAM
            data = b""
        if data:
            text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in data)
            console.print(f"[muted]bytes there:[/] {data.hex(' ')}  |{escape(text)}|",
                          markup=True, highlight=False)   # as hexdump -C shows them
    return 0
