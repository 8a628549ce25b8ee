"""``monitor`` commands: the inspectors, reachable from gdb.

Each command returns text for gdb's console: the renderables of harness/inspect
(CSR panel, page-table tree, walk) drawn without colour, so they read the same in a
terminal, an IDE's debug console and a CI log. `traps` is a plain list of the last
events, because `privlab run` keeps only the recent tail of the event log, which the
trap timeline (built on the whole log) cannot use.
"""

from __future__ import annotations

import io
import shlex
from collections.abc import Callable

from rich.console import RenderableType

from ..abi.csr import Csr
from ..errors import PrivlabError
from ..inspect import CsrPanel, CsrSnapshot, PageTableTree, WalkView, make_console
from ..machine import Machine
from ..mmu import Access, context_from_status, read_page_table, walk
from ..trace import TrapEvent, XretEvent
from .access import DebugMemory, MemoryMode

__all__ = ["Monitor", "MonitorError"]

DEFAULT_TRAPS = 10
SHORT_TABLE = 16      # lines per table level unless `full`
HEXDUMP_WIDTH = 16
MAX_DUMP = 4096
RENDER_WIDTH = 100
HELP = """\
monitor commands (privlab):
  traps [N]               the last N traps and xRETs (default 10)
  csr                     the trap CSRs, fields decoded
  pagetable [full]        the current satp's page table (full: every range)
  translate VA            the page-table walk for VA, level by level
  phys ADDR [LEN]         hex dump of physical memory
  phys-write ADDR HEX     write bytes (hex) to physical memory
  memory [virtual|physical]  how gdb's own memory accesses are addressed
  status                  pc, privilege, instructions retired, breakpoints, history kept
  help                    this list
"""


class MonitorError(PrivlabError):
    """A monitor command that cannot be done; the message is shown in gdb."""


def _number(text: str, what: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise MonitorError(f"{what} must be a number (0x... for hex), not {text!r}") from None
    if value < 0:
        raise MonitorError(f"{what} must not be negative")
    return value


class Monitor:
    def __init__(self, machine: Machine, memory: DebugMemory,
                 debugger_status: Callable[[], list[str]] = list) -> None:
        self._m = machine
        self._mem = memory
        self._status = debugger_status
        self._commands: dict[str, Callable[[list[str]], str]] = {
            "help": self.help, "traps": self.traps, "csr": self.csr,
            "pagetable": self.pagetable, "translate": self.translate, "phys": self.phys,
            "phys-write": self.phys_write, "memory": self.memory, "status": self.status,
        }

    def run(self, line: str) -> tuple[str, bool]:
        """(output, ok) for one command line; never raises."""
        try:
            words = shlex.split(line)
        except ValueError as e:
            return f"privlab: {e}\n", False
        if not words:
            return HELP, True
        cmd = self._commands.get(words[0])
        if cmd is None:
            return f"privlab: unknown monitor command {words[0]!r} (try: monitor help)\n", False
        try:
            return cmd(words[1:]), True
        except PrivlabError as e:
            values = [w for w in words[1:] if w.startswith("$")]
            if values:   # gdb sends the text as typed: `monitor translate $a1`
                form = " ".join("%#lx" if w.startswith("$") else w for w in words)
                return (f"privlab: gdb does not evaluate {values[0]} in a monitor command; "
                        f"try: eval \"monitor {form}\", {', '.join(values)}\n"), False
            return f"privlab: {e}\n", False

    @staticmethod
    def _arity(args: list[str], lo: int, hi: int, usage: str) -> None:
        if not lo <= len(args) <= hi:
            raise MonitorError(f"usage: monitor {usage}")

    def help(self, args: list[str]) -> str:
        return HELP

    # -- traps ---------------------------------------------------------------------
    def traps(self, args: list[str]) -> str:
        self._arity(args, 0, 1, "traps [N]")
        n = _number(args[0], "N") if args else DEFAULT_TRAPS
        events = self._m.events.tail(n)
        if not events:
            return "no traps or xRETs yet\n"
        lines = []
        for e in events:
            if isinstance(e, TrapEvent):
                kind = "interrupt" if e.interrupt else "exception"
                lines.append(f"#{e.seq:<5} instret {e.instret:<10} trap {e.priv_from.letter}->"
                             f"{e.priv_to.letter}  {e.name} ({kind} {e.code})  epc {e.epc:#x}  "
                             f"tval {e.tval:#x}")
            elif isinstance(e, XretEvent):
                lines.append(f"#{e.seq:<5} instret {e.instret:<10} {e.insn} {e.priv_from.letter}"
                             f"->{e.priv_to.letter}  at {e.at:#x} to pc {e.pc:#x}")
        return "\n".join(lines) + "\n"

    # -- the inspectors (harness/inspect) ---------------------------------------------
    @staticmethod
    def _render(view: RenderableType) -> str:
        out = io.StringIO()
        make_console(width=RENDER_WIDTH, file=out, color=False).print(view)
        return "".join(line.rstrip() + "\n" for line in out.getvalue().splitlines())

    def csr(self, args: list[str]) -> str:
        self._arity(args, 0, 0, "csr")
        return self._render(CsrPanel(CsrSnapshot.take(self._m.hart)))

    def pagetable(self, args: list[str]) -> str:
        self._arity(args, 0, 1, "pagetable [full]")
        if args and args[0] != "full":
            raise MonitorError("usage: monitor pagetable [full]")
        table = read_page_table(self._m.memory, self._m.hart.csr(Csr.SATP), self._m.xlen)
        text = self._render(PageTableTree(table, max_lines=None if args else SHORT_TABLE))
        # The tree names the command-line option; here it is the monitor's argument.
        return text.replace("(--full shows", "(monitor pagetable full shows")

    def translate(self, args: list[str]) -> str:
        self._arity(args, 1, 1, "translate VA")
        va = _number(args[0], "VA")
        h = self._m.hart
        ctx = context_from_status(h.priv, h.csr(Csr.MSTATUS), Access.READ, self._m.xlen)
        return self._render(WalkView(walk(self._m.memory, h.csr(Csr.SATP), va, Access.READ,
                                          ctx, self._m.xlen)))

    # -- physical memory -------------------------------------------------------------
    def phys(self, args: list[str]) -> str:
        self._arity(args, 1, 2, "phys ADDR [LEN]")
        addr = _number(args[0], "ADDR")
        size = _number(args[1], "LEN") if len(args) > 1 else 64
        if not 0 < size <= MAX_DUMP:
            raise MonitorError(f"LEN must be 1..{MAX_DUMP}")
        if not self._m.memory.in_ram(addr, size):
            raise MonitorError(f"physical {addr:#x}+{size:#x} is not RAM")
        data = self._m.memory.read(addr, size)
        lines = []
        for off in range(0, size, HEXDUMP_WIDTH):
            row = data[off:off + HEXDUMP_WIDTH]
            text = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
            lines.append(f"{addr + off:#012x}: {row.hex(' '):<{HEXDUMP_WIDTH * 3}} {text}")
        return "\n".join(lines) + "\n"

    def phys_write(self, args: list[str]) -> str:
        self._arity(args, 2, 2, "phys-write ADDR HEXBYTES")
        addr = _number(args[0], "ADDR")
        try:
            data = bytes.fromhex(args[1].removeprefix("0x"))
        except ValueError:
            raise MonitorError(f"not hex bytes: {args[1]!r}") from None
        if not data or not self._m.memory.in_ram(addr, len(data)):
            raise MonitorError(f"physical {addr:#x}+{len(data):#x} is not RAM")
        self._m.write_physical(addr, data)
        return f"wrote {len(data)} bytes at physical {addr:#x}\n"

    def memory(self, args: list[str]) -> str:
        self._arity(args, 0, 1, "memory [virtual|physical]")
        if args:
            try:
                self._mem.mode = MemoryMode(args[0])
            except ValueError:
                raise MonitorError("usage: monitor memory [virtual|physical]") from None
        return f"gdb's memory accesses use {self._mem.mode.value} addresses\n"

    def status(self, args: list[str]) -> str:
        self._arity(args, 0, 0, "status")
        h = self._m.hart
        lines = [f"pc {h.pc:#x} in {h.priv.letter}-mode",
                 f"instructions retired {h.state.instret}, mtime {h.mtime()}",
                 f"traps and xRETs so far {len(self._m.events)}"]
        return "\n".join(lines + self._status()) + "\n"
