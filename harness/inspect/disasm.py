"""Disassembly around an address (capstone), with symbols and the current line marked.

`disassemble_around(read, pc, xlen, symbolize)` decodes from the start of the
enclosing function when it is near (so compressed instructions decode in step),
otherwise from a little before pc, and keeps a few instructions either side.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import capstone
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from ..kernelinfo.symbols import Location

__all__ = ["Disassembly", "Instruction", "disassemble_around"]

ReadCode = Callable[[int, int], bytes | None]
BEFORE, AFTER = 6, 6
LOOKBACK = 64


@dataclass(frozen=True)
class Instruction:
    """One disassembled instruction: its address, bytes, text and the symbol that starts
    there."""
    addr: int
    raw: bytes
    text: str
    label: str | None = None     # symbol starting here


def _decoder(xlen: int) -> capstone.Cs:
    mode = capstone.CS_MODE_RISCV64 if xlen == 64 else capstone.CS_MODE_RISCV32
    return capstone.Cs(capstone.CS_ARCH_RISCV, mode | capstone.CS_MODE_RISCVC)


def disassemble_around(read: ReadCode, pc: int, xlen: int,
                       symbolize: Callable[[int], Location] | None = None) -> list[Instruction]:
    loc = symbolize(pc) if symbolize else None
    start = pc - min(loc.offset, LOOKBACK) if loc is not None and loc.symbol else pc - 16
    cs = _decoder(xlen)
    for s in (start, start + 2, pc):
        code = None
        base = s
        while code is None and base <= pc:
            code = read(base, pc - base + 4 * (AFTER + 1))
            if code is None:
                base = (base + 0x1000) & ~0xFFF   # the page before is not readable
        if code is None:
            return []
        insns = [Instruction(i.address, bytes(i.bytes), f"{i.mnemonic} {i.op_str}".strip())
                 for i in cs.disasm(code, base)]
        at = next((k for k, i in enumerate(insns) if i.addr == pc), None)
        if at is not None:
            window = insns[max(0, at - BEFORE):at + AFTER + 1]
            if symbolize is None:
                return window
            out = []
            for i in window:
                where = symbolize(i.addr)
                out.append(Instruction(i.addr, i.raw, i.text,
                                       where.symbol if where.offset == 0 else None))
            return out
    return []


class Disassembly:
    def __init__(self, insns: list[Instruction], pc: int, title: str | None = None,
                 source: str | None = None, compact: bool = False) -> None:
        """`compact`: for a narrow pane, without the instruction bytes, each line
        cut (…) rather than wrapped."""
        self.insns = insns
        self.compact = compact
        self.pc = pc
        self.title = title
        self.source = source

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.title:
            head = Text()
            head.append(self.title, "heading")
            if self.source:
                head.append(f"  {self.source}", "source")
            yield head
        if not self.insns:
            yield Text(f"(no readable code at {self.pc:#x})", "muted")
            return
        for i in self.insns:
            if i.label:
                yield Text(f"{i.label}:", "symbol")
            cur = i.addr == self.pc
            t = Text()
            t.append("▶ " if cur else "  ", "changed" if cur else "")
            t.append(f"{i.addr:#x}  ", "addr")
            if not self.compact:
                t.append(f"{i.raw[::-1].hex():<8}  ", "muted")
            t.append(i.text, "heading" if cur else "")
            if self.compact:
                t.no_wrap, t.overflow = True, "ellipsis"
            yield t
