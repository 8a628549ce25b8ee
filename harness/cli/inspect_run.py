"""What `privlab inspect` runs (its parser is in inspect_cmd.py, which imports this
module only when the command runs)."""

from __future__ import annotations

import argparse

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.text import Text

from ..abi.csr import Csr, Priv
from ..api import Session
from ..errors import BadInput, GuestError
from ..inspect import (
    CsrPanel,
    CsrSnapshot,
    Disassembly,
    OpenFilesView,
    ProcessTableView,
    RegisterSnapshot,
    RegisterView,
    RoundTripView,
    TrapFrameView,
    disassemble_around,
    make_console,
)
from ..inspect.moment import MomentView
from ..inspect.timeline import describe
from ..kernelinfo.dwarf_types import StructValue
from ..kernelinfo.mirrors import Process
from ..kernelinfo.symbols import Location
from ..machine import Stop
from ..machine.events import Event, TrapEvent, XretEvent
from ..machine.until import AtAddress, PrivilegeChange
from ..theme import priv_style
from .console import interrupt_stops
from .sessionargs import open_session, raise_for_stop, session_at

__all__ = ["run"]

REPLAY_MARGIN = 64     # replay at full speed to this many instructions before the event
REPLAY_HITS = 64       # then break at its address at most this often
RETURN_SEARCH = 20_000_000   # instructions to look for a trap's return to U in



def _before(args: argparse.Namespace, e: Event) -> tuple[CsrSnapshot, RegisterSnapshot] | None:
    """Replay the run (it is deterministic) to the instruction the event happened at,
    just before it: the state the event changed."""
    addr = e.epc if isinstance(e, TrapEvent) else e.at
    s = open_session(args, notes=False)   # said at the first boot
    try:
        if s.machine.smp > 1:
            return _before_on_hart(s, e, addr, args.at)
        with interrupt_stops(s.machine):
            if e.instret > REPLAY_MARGIN:
                r = s.run_until_instret(e.instret - REPLAY_MARGIN)
                if r.stop is Stop.USER:
                    raise_for_stop(r, None, f"replaying the run to {args.at}")
            for _ in range(REPLAY_HITS):
                r = s.run(None, AtAddress(addr))
                raise_for_stop(r, None, f"replaying the run to {args.at}")
                if r.stop is not Stop.BREAKPOINT or len(s.events) > e.seq \
                        or s.instret > e.instret:
                    return None
                if s.instret == e.instret and len(s.events) == e.seq:
                    return (CsrSnapshot.take(s.machine.hart),
                            RegisterSnapshot.take(s.machine.hart))
        return None
    finally:
        s.close()


def _before_on_hart(s: Session, e: Event, addr: int,
                    at: str) -> tuple[CsrSnapshot, RegisterSnapshot] | None:
    """_before on a machine of several harts, where an event's instret is its own
    hart's: replay to the event before it, then break at the address (on any hart)
    until the event's hart is there with the event's instret."""
    with interrupt_stops(s.machine):
        if e.seq > 0:
            r = s.run_until_event(e.seq - 1)
            raise_for_stop(r, None, f"replaying the run to {at}")
        for _ in range(REPLAY_HITS):
            r = s.run(None, AtAddress(addr))
            raise_for_stop(r, None, f"replaying the run to {at}")
            h = s.machine.hart
            if r.stop is not Stop.BREAKPOINT or len(s.events) > e.seq:
                return None
            if h.state.hart_id == e.hart and h.state.instret == e.instret:
                return CsrSnapshot.take(h), RegisterSnapshot.take(h)
    return None


def _headline(s: Session, e: Event | None, at: str) -> Text:
    t = Text()
    t.append(f"At {at}: ", "heading")
    if s.machine.smp > 1:   # the hart the run stopped on: everything below is its
        t.append(f"hart {s.machine.hart.state.hart_id} of {s.machine.smp}  ", "heading")
    t.append(f"{s.priv.letter}-mode", priv_style(s.priv))
    t.append(f"  pc {s.pc:#x}  instret {s.instret}\n")
    if e is not None:
        rows = [r for r in s.flow.rows() if r.seq == e.seq]
        if rows:
            t.append(f"event #{e.seq}: {e.priv_from.letter} → {e.priv_to.letter}  ")
            t.append_text(describe(rows[0], s.machine.xlen))
    return t


def _code(s: Session, e: Event | None) -> RenderableType:
    satp = s.machine.hart.csr(Csr.SATP)

    def sym(a: int) -> Location:
        return s.info.symbolize(a, satp, s.machine.memory)

    def read(addr: int, n: int) -> bytes | None:
        try:
            return s.read_virt(addr, n)
        except GuestError:      # not mapped, or not RAM: the view shows no bytes
            return None

    parts: list[RenderableType] = []
    if isinstance(e, TrapEvent) and not e.interrupt:
        # The trapping instruction lives in the address space the trap came from.
        def read_then(addr: int, n: int) -> bytes | None:
            try:
                return s.read_virt(addr, n, e.satp)
            except GuestError:
                return None
        where = s.info.symbolize(e.epc, e.satp, s.machine.memory)
        parts.append(Disassembly(disassemble_around(read_then, e.epc, s.machine.xlen,
                                                    lambda a: s.info.symbolize(
                                                        a, e.satp, s.machine.memory)),
                                 e.epc, f"where it trapped: epc {where.name}", where.source))
    here = s.info.symbolize(s.pc, satp, s.machine.memory)
    parts.append(Disassembly(disassemble_around(read, s.pc, s.machine.xlen, sym),
                             s.pc, f"where the hart is: pc {here.name}", here.source))
    return Group(*parts)


def _frame_locations(s: Session, tf: StructValue, pid: int) -> dict[str, Location]:
    """kernel_trap in the kernel; epc in the address space of the process `pid`."""
    spaces = [satp for satp, (p, _) in s.flow.named.items() if p == pid]
    here = s.machine.hart.csr(Csr.SATP)
    out: dict[str, Location] = {}
    for name, satp in (("kernel_trap", here), ("epc", spaces[-1] if spaces else None)):
        value = tf[name] if tf.type.has(name) else None
        if isinstance(value, int) and value and satp is not None:
            out[name] = s.info.symbolize(value, satp, s.machine.memory)
    return out


def _thread(p: Process) -> tuple[int, int]:
    """A thread of the kernel: its process and its own trap frame."""
    return p.pid, p.trapframe_addr


def _running(s: Session) -> tuple[int, int] | None:
    try:
        table = s.processes()
    except (BadInput, GuestError, KeyError, TypeError):   # no table, or a student's struct
        return None
    p = next((p for p in table.processes if p.slot == table.current), None)
    return _thread(p) if p is not None else None


def _round_trip(s: Session, e: TrapEvent) -> RoundTripView | str:
    """Run on from the trap (the session is at it) to the sret that returns to the same
    thread (same process and trap frame; same address space without a process table):
    its registers then beside those at the trap. A string: why there is none."""
    at_trap = RegisterSnapshot.take(s.machine.hart)
    at_trap = RegisterSnapshot(at_trap.xlen, e.priv_from, e.epc, at_trap.x)
    who = _running(s)
    start = s.instret
    with interrupt_stops(s.machine):
        while (left := RETURN_SEARCH - (s.instret - start)) > 0:
            r = s.run(left, PrivilegeChange(to=Priv.U))
            x = r.event
            if r.stop is not Stop.EVENT or not isinstance(x, XretEvent):
                ended = (f"the guest halted with status {r.exit_status}" if r.stop is Stop.HALT
                         else f"the run stopped ({r.stop.value})")
                return f"{ended} before this thread returned to U-mode"
            if x.satp == e.satp and (who is None or _running(s) == who):
                return RoundTripView(at_trap, RegisterSnapshot.take(s.machine.hart),
                                     e.seq, x.seq, x.insn)
    return f"no return to this thread within {RETURN_SEARCH:,} instructions"


def run(args: argparse.Namespace) -> int:
    s, result = session_at(args, capture=True)
    e = result.event
    before = _before(args, e) if e is not None else None
    now = CsrSnapshot.take(s.machine.hart)
    satp = s.machine.hart.csr(Csr.SATP)
    kernel = s.info.kernel_info
    procs = frame = files = None
    table = None
    if kernel is not None:
        try:
            table = s.processes()
        # A kernel mid-boot (its table not yet mapped), or one whose struct proc lacks
        # a field the mirror reads (a student's edit): show what there is.
        except (GuestError, KeyError, TypeError):
            table = None
    if table is not None and kernel is not None:
        procs = ProcessTableView(table, None)
        if args.pid is None:
            chosen = next((p for p in table.processes if p.slot == table.current), None)
        else:
            chosen = next((p for p in table.processes if p.pid == args.pid), None)
            if chosen is None:
                pids = ", ".join(str(p.pid) for p in table.processes) or "none"
                raise BadInput(f"no process with pid {args.pid} at {args.at} (pids: {pids})")
        tf = kernel.trapframe(s.machine.memory, chosen) if chosen else None
        if tf is not None and chosen is not None:
            frame = TrapFrameView(tf, f"pid {chosen.pid} ({chosen.name})",
                                  _frame_locations(s, tf, chosen.pid))
        if chosen is not None:
            try:
                open_files = kernel.open_files(s.machine.memory, chosen)
            except (GuestError, KeyError, TypeError):   # a student's struct file
                open_files = None
            if open_files is not None:
                files = (f"Open files (pid {chosen.pid})", OpenFilesView(open_files))
    elif args.pid is not None and kernel is None:
        raise BadInput("--pid reads the bundled kernel's process table (struct proc); "
                       "this machine runs another kernel or a bare-metal program")
    elif args.pid is not None:
        raise BadInput(f"no process table at {args.at} (the kernel has not set one up)")
    view = MomentView(_headline(s, e, args.at), [
        ("Registers", RegisterView(RegisterSnapshot.take(s.machine.hart),
                                   before[1] if before else None, None)),
        ("CSRs" + (" (* = changed by this event)" if before else ""),
         CsrPanel(now, before[0] if before else None,
                  lambda a: s.info.symbolize(a, satp, s.machine.memory))),
        ("Code", _code(s, e)),
        ("Processes (proc[])", procs),
        ("Trap frame (not yet written by uservec at a trap from U)"
         if isinstance(e, TrapEvent) and e.priv_from.letter == "U" else "Trap frame", frame),
        *([files] if files is not None else []),
    ])
    console = make_console()
    console.print(view)
    if isinstance(e, TrapEvent) and e.priv_from is Priv.U:
        # Last: this runs the guest on, past the moment shown above.
        trip = _round_trip(s, e)
        console.print(Rule(Text("User registers: at the trap and at its return", "heading"),
                           align="left", style="muted"))
        console.print(trip if isinstance(trip, RoundTripView) else Text(trip, "muted"))
    return 0
