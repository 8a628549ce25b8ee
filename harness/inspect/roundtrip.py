"""The user registers at a trap from U beside their values at the sret (or mret) that
returns to the same thread: the round trip through the kernel, with every register
that did not come back as it left marked `*`.

After an interrupt, or a page fault the kernel resolved, every register must come back
unchanged: a mark there is a register the trap path did not save or restore (the trap
lab's bug). After an ecall, a0 carries the result; exec, sigreturn and a signal
handler's start change more, on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from ..abi.registers import ABI_NAMES
from .state import RegisterSnapshot

__all__ = ["RoundTripView"]

PER_LINE = 2     # registers side by side on one line


@dataclass(frozen=True)
class RoundTripView:
    """The registers at a trap and where its xRET returned, side by side, differences
    marked."""
    at_trap: RegisterSnapshot       # pc: the trapping instruction (epc)
    at_return: RegisterSnapshot     # pc: where the sret went
    trap_seq: int
    return_seq: int
    return_insn: str = "sret"       # mret for a bare-metal program's U-mode

    def differing(self) -> list[str]:
        """The ABI names (and `pc`) whose values differ, in register order."""
        names = [ABI_NAMES[n] for n in range(1, 32) if self.at_trap.x[n] != self.at_return.x[n]]
        return (["pc"] if self.at_trap.pc != self.at_return.pc else []) + names

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        digits = self.at_trap.xlen // 4
        grid = Table(box=None, padding=(0, 1), show_header=True, header_style="muted")
        for _ in range(PER_LINE):
            grid.add_column("", justify="right", no_wrap=True)
            grid.add_column(f"trap #{self.trap_seq}", no_wrap=True)
            grid.add_column(f"{self.return_insn} #{self.return_seq}", no_wrap=True)
        rows = [("pc", self.at_trap.pc, self.at_return.pc)]
        rows += [(ABI_NAMES[n], self.at_trap.x[n], self.at_return.x[n]) for n in range(1, 32)]
        for i in range(0, len(rows), PER_LINE):
            cells: list[Text] = []
            for name, before, after in rows[i:i + PER_LINE]:
                changed = before != after
                cells.append(Text(name + ("*" if changed else " "),
                                  "changed" if changed else "csr.name"))
                cells.append(Text(f"{before:0{digits}x}", "addr"))
                cells.append(Text(f"{after:0{digits}x}", "changed" if changed else "muted"))
            grid.add_row(*cells)
        yield grid
        differ = self.differing()
        yield Text(f"* differs: {', '.join(differ)}" if differ else
                   "every register came back as it was at the trap", "muted")
