"""The stepper's moves, without any user interface: what each key of `privlab step`
does to the session, and what the panes show (as rich renderables from privlab/inspect).

Every move records the state before it, so the panes can mark what the last move
changed (registers, CSRs). With several harts (`--smp N`) a step is one instruction of
the machine in the schedule's order (Machine.step_machine): the panes show the hart
that runs it, the status line and the message name it, and a step back returns to the
moment before the machine's last instruction, on the hart that ran it. Going back uses
the session's recorded history (Session.record, harness/api/timetravel.py): the state
shown after a step back is exactly the one a forward run had there.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.text import Text

from ..abi.csr import EXCEPTION_NAMES, INTERRUPT_NAMES, Csr, Exc, Priv
from ..api import Session
from ..api.timetravel import instructions
from ..errors import BadInput, GuestError
from ..inspect import CsrPanel, Disassembly, RegisterView, WalkView, disassemble_around
from ..inspect.state import CsrSnapshot, RegisterSnapshot
from ..inspect.timeline import TrapTimeline
from ..kernelinfo.symbols import Location
from ..machine import RunResult, Stop
from ..machine.events import TrapEvent
from ..machine.until import AfterSyscall, AfterTrap, AfterXret, AtAddress, Until
from ..theme import priv_style
from ..trace.flow import FlowRow

__all__ = ["BREAK_HELP", "Breakpoint", "Stepper", "parse_breakpoint"]

BREAK_HELP = "a symbol, an address (0x...), syscall:NAME or trap:CAUSE"
TIMELINE_ROWS = 400          # the last rows the timeline pane holds
LAST_TRAP_LOOKBACK = 4096    # events searched back for the last trap of the shown hart
# The CSRs a trap sets, by the level that took it: what the trap pane always shows.
TRAP_CSRS = {Priv.S: (Csr.SSTATUS, Csr.SCAUSE, Csr.SEPC, Csr.STVAL, Csr.SATP),
             Priv.M: (Csr.MSTATUS, Csr.MCAUSE, Csr.MEPC, Csr.MTVAL)}
MAX_INSNS = 200_000_000      # a forward move stops after this many instructions
STEP_EVERY = 500_000         # snapshots: a step back re-executes at most this many


@dataclass(frozen=True)
class Breakpoint:
    """A place the stepper stops at: a symbol, an address, a system call or a trap."""
    kind: str                 # "symbol", "address", "syscall", "trap"
    text: str

    def __str__(self) -> str:
        return self.text


def parse_breakpoint(text: str) -> Breakpoint:
    t = text.strip()
    if not t:
        raise BadInput(f"no breakpoint given: expected {BREAK_HELP}")
    kind, sep, rest = t.partition(":")
    if sep and kind in ("syscall", "trap"):
        if not rest:
            raise BadInput(f"bad breakpoint {t!r}: {kind}: needs a name")
        return Breakpoint(kind, t)
    if t.lower().startswith("0x"):
        try:
            int(t, 16)
        except ValueError:
            raise BadInput(f"bad breakpoint {t!r}: not a hex address") from None
        return Breakpoint("address", t)
    if sep:
        raise BadInput(f"bad breakpoint {t!r}: expected {BREAK_HELP}")
    return Breakpoint("symbol", t)


def _cause(name: str) -> tuple[int, bool]:
    for table, irq in ((EXCEPTION_NAMES, False), (INTERRUPT_NAMES, True)):
        for code, n in table.items():
            if n == name or str(int(code)) == name:
                return int(code), irq
    names = ", ".join(sorted({*EXCEPTION_NAMES.values(), *INTERRUPT_NAMES.values()}))
    raise BadInput(f"unknown trap cause {name!r} (one of: {names})")


class Stepper:
    def __init__(self, session: Session, every: int | None = None,
                 history_budget: int | None = None) -> None:
        self.s = session
        self.history = session.record(STEP_EVERY if every is None else every,
                                      budget=history_budget)
        self.prev_regs: RegisterSnapshot | None = None
        self.prev_csrs: CsrSnapshot | None = None
        self.message = "at the first instruction: s steps, ? lists the keys"
        self.walk_va: int | None = None
        self.seconds: float | None = None   # how long the last backward move took

    # -- moves ---------------------------------------------------------------------
    @property
    def smp(self) -> int:
        return self.s.machine.smp

    def _on_next_hart(self) -> None:
        """Several harts: show the one that runs the machine's next instruction."""
        m = self.s.machine
        if m.smp > 1:
            m.select_hart(m.next_hart())

    def _hart(self) -> str:
        """' on hart k' with several harts (the current one), else nothing."""
        return f" on hart {self.s.machine.hart.state.hart_id}" if self.smp > 1 else ""

    def _before(self) -> None:
        self.seconds = None
        self._on_next_hart()
        self.prev_regs = self.s.regs()
        self.prev_csrs = self.s.csrs()

    def _say(self, what: str, r: RunResult | None = None) -> None:
        if r is not None and r.stop is Stop.HALT:
            what += f": the guest powered off ({r.message})"
        elif r is not None and r.stop is Stop.BUDGET:
            what += f": not reached in {MAX_INSNS:,} instructions"
        elif r is not None and r.stop is Stop.ERROR:
            what += f": {r.message}"
        self.message = what

    def _run(self, what: str, until: list[Until]) -> RunResult:
        self._before()
        r = self.s.run(MAX_INSNS, until)
        self._say(what + self._hart(), r)
        return r

    def step(self) -> None:
        self._before()
        r = self.s.step()
        self._say("stepped one instruction" + self._hart(), r)

    def next_trap(self) -> None:
        self._run("ran to the next trap", [AfterTrap()])

    def next_xret(self) -> None:
        self._run("ran to the next xRET", [AfterXret()])

    def next_syscall(self) -> None:
        self._run("ran to the next system call", [AfterTrap(code=Exc.USER_ECALL, interrupt=False)])

    def continue_to(self, text: str) -> None:
        bp = parse_breakpoint(text)
        until: list[Until]
        if bp.kind == "syscall":
            name = bp.text.partition(":")[2]
            number = next((n for n, sp in self.s.specs.items() if sp.name == name), None)
            if number is None:
                raise BadInput(f"no system call named {name!r} in kernel/syscall.tbl")
            until = [AfterSyscall(number)]
        elif bp.kind == "trap":
            code, irq = _cause(bp.text.partition(":")[2])
            until = [AfterTrap(code=code, interrupt=irq)]
        else:
            if bp.kind == "address":
                addr = int(bp.text, 16)
            else:
                found = self.s.info.address_of(bp.text)
                if found is None:
                    raise BadInput(f"no symbol {bp.text!r} in the loaded images")
                addr = found
            until = [AtAddress(addr)]
            until += [AtAddress(a.va + addr - a.target)
                      for a in self.s.info.symbolizer.aliases
                      if a.target <= addr < a.target + a.size]
            if self.s.pc == addr:            # already there: go past it first
                self._before()
                saved = (self.prev_regs, self.prev_csrs)
                self.s.step()
                r = self.s.run(MAX_INSNS, until)
                self.prev_regs, self.prev_csrs = saved
                self._say(f"continued to {bp}", r)
                return
        self._run(f"continued to {bp}", until)

    def back_step(self) -> None:
        self._before()
        r = self.history.step_back()
        self.seconds = r.seconds
        self._on_next_hart()
        self.message = ("at the start of the recording" if r.begin else
                        "stepped back one instruction" + self._hart())

    def back_trap(self) -> None:
        self._before()
        r = self.history.back_to_trap()
        self.seconds = r.seconds
        if r.event is not None and self.smp > 1:
            self.s.machine.select_hart(r.event.hart)   # the hart that took it
        self.message = ("no trap before this: at the start of the recording" if r.begin
                        else f"back to the previous trap, event #{r.event.seq if r.event else '?'}")

    def back_event(self, text: str) -> None:
        try:
            seq = int(text.strip().lstrip("#"), 0)
        except ValueError:
            raise BadInput(f"not an event number: {text.strip()!r}") from None
        if seq >= len(self.s.events):
            raise BadInput(f"event #{seq} has not happened yet ({len(self.s.events)} so far)")
        self._before()
        r = self.history.back_to_event(seq)
        self.seconds = r.seconds
        if r.event is not None and self.smp > 1:
            self.s.machine.select_hart(r.event.hart)   # the hart that took it
        self.message = f"back to just after event #{seq}" + self._hart()

    def set_walk(self, text: str) -> None:
        try:
            self.walk_va = int(text.strip(), 0)
        except ValueError:
            raise BadInput(f"not an address: {text.strip()!r}") from None
        self.message = f"page-table walk for {self.walk_va:#x}"

    # -- what the panes show -----------------------------------------------------------
    def _sym(self, addr: int) -> Location:
        return self.s.info.symbolize(addr, self.s.machine.hart.csr(Csr.SATP),
                                     self.s.machine.memory)

    def status(self) -> Text:
        s = self.s
        t = Text()
        if self.smp > 1:
            t.append(f"hart {s.machine.hart.state.hart_id}/{self.smp}  ", "bold")
        t.append(f"{s.priv.letter}-mode", priv_style(s.priv))
        t.append(f"  pc {s.pc:#x} ")
        t.append(self._sym(s.pc).name, "symbol")
        t.append(f"  instret {s.instret:,}  ")
        if self.smp > 1:
            t.append(f"all harts {s.machine.total_instret():,}  ")
        t.append(f"events {len(s.events)}  ")
        # How far back `b` and `B` can go: the history's budget drops the far past.
        t.append(f"history: last {instructions(self.history.reach())} insns  ", "muted")
        t.append(self.message, "note")
        return t

    def timeline_rows(self) -> list[FlowRow]:
        rows = list(self.s.flow.rows())
        return rows[-TIMELINE_ROWS:]

    def timeline(self) -> tuple[TrapTimeline, list[FlowRow], int | None]:
        """The timeline renderer, its rows, and the seq of the current event (the
        last one so far)."""
        from ..api.locate import locator

        rows = self.timeline_rows()
        current = len(self.s.events) - 1 if len(self.s.events) else None
        return (TrapTimeline(rows, self.s.machine.xlen, locate=locator(self.s),
                             harts=self.s.machine.smp), rows, current)

    def code(self, compact: bool = False) -> RenderableType:
        s = self.s

        def read(addr: int, n: int) -> bytes | None:
            try:
                return s.read_virt(addr, n)
            except GuestError:
                return None

        here = self._sym(s.pc)
        return Disassembly(disassemble_around(read, s.pc, s.machine.xlen, self._sym), s.pc,
                           f"pc {here.name}", here.source, compact=compact)

    def registers(self, columns: int = 4) -> RenderableType:
        return RegisterView(self.s.regs(), self.prev_regs, columns=columns)

    def csrs(self) -> RenderableType:
        return CsrPanel(self.s.csrs(), self.prev_csrs, self._sym, title="CSRs", machine=True)

    def last_trap(self) -> TrapEvent | None:
        """The latest trap the shown hart took so far (None: none yet)."""
        log = self.s.events
        hart = self.s.machine.hart.state.hart_id
        for seq in range(len(log) - 1, max(-1, len(log) - 1 - LAST_TRAP_LOOKBACK), -1):
            e = log[seq]
            if isinstance(e, TrapEvent) and e.hart == hart:
                return e
        return None

    def trap_level(self) -> Priv:
        """The level whose trap CSRs matter now: the one that took the last trap, or
        before any trap the one the hart is in (S for U-mode: its traps go there)."""
        e = self.last_trap()
        if e is not None:
            return Priv.M if e.priv_to is Priv.M else Priv.S
        return Priv.M if self.s.priv is Priv.M else Priv.S

    def trap_title(self) -> str:
        e = self.last_trap()
        level = self.trap_level()
        if e is None:
            return f"trap CSRs ({level.letter}): no trap yet"
        return f"trap CSRs: {level.letter} took the last trap (#{e.seq} {e.name})"

    def trap_csrs(self) -> RenderableType:
        """The trap CSRs of the level that took the last trap, changes marked."""
        level = self.trap_level()
        return CsrPanel(self.s.csrs(), self.prev_csrs, self._sym, only=TRAP_CSRS[level],
                        machine=level is Priv.M, supervisor=level is Priv.S, head=False)

    def walk(self) -> RenderableType:
        va = self.walk_va if self.walk_va is not None else self.s.pc
        try:
            w = self.s.translate(va)
        except (GuestError, BadInput) as e:
            return Text(f"no walk for {va:#x}: {e}", "muted")
        return Group(WalkView(w, self._sym))

    def console_text(self) -> str:
        return self.s.console
